/// The languages Parley hears, translates and speaks offline, and what each one needs.
///
/// One row per language: its ISO 639-1 code (what the config, `set` and the wire use), the
/// code Whisper hears it by, the espeak-ng voice that speaks it, and the ISO 639-3 code that
/// Apertium names its pairs with. Beside it: Debian's Apertium packages between them, the
/// languages a translation may pivot through, and the languages suggested for a country.
public struct LanguageInfo: Sendable, Equatable {
    /// ISO 639-1.
    public let code: String
    /// In English, for `parley languages`.
    public let name: String
    /// The language token Whisper hears it by.
    public let whisper: String
    /// The espeak-ng voice that speaks it.
    public let voice: String
    /// Whether `voice` is another language's voice standing in (espeak-ng has none of its own).
    public let voiceStandsIn: Bool
    /// ISO 639-3, as Apertium names pairs ("spa" in "eng-spa").
    public let apertium: String

    public init(code: String, name: String, whisper: String? = nil, voice: String? = nil, voiceStandsIn: Bool = false, apertium: String) {
        self.code = code
        self.name = name
        self.whisper = whisper ?? code
        self.voice = voice ?? code
        self.voiceStandsIn = voiceStandsIn
        self.apertium = apertium
    }
}

public enum LanguageTable {
    /// The languages heard (Whisper), translated (Apertium, through a pivot where Debian has no
    /// direct pair) and spoken (espeak-ng) with no server.
    public static let offline: [LanguageInfo] = [
        LanguageInfo(code: "en", name: "English", apertium: "eng"),
        LanguageInfo(code: "es", name: "Spanish", apertium: "spa"),
        LanguageInfo(code: "fr", name: "French", apertium: "fra"),
        LanguageInfo(code: "pt", name: "Portuguese", apertium: "por"),
        LanguageInfo(code: "it", name: "Italian", apertium: "ita"),
        LanguageInfo(code: "ca", name: "Catalan", apertium: "cat"),
        // espeak-ng 1.51 (bookworm) has no Galician voice; Portuguese reads Galician spelling
        // closest to how it sounds.
        LanguageInfo(code: "gl", name: "Galician", voice: "pt", voiceStandsIn: true, apertium: "glg"),
    ]

    /// The row for `code`, if Parley knows it offline.
    public static func info(_ code: String) -> LanguageInfo? { offline.first { $0.code == code } }

    /// Languages a translation may go through when Debian has no direct pair, in the order tried
    /// when no measurement tells them apart: Apertium's pairs are built around Spanish and Catalan.
    public static let pivots = ["es", "ca"]

    /// Names of the languages Parley knows of (the offline ones and those a country suggests).
    public static let names: [String: String] = {
        var names = [
            "ja": "Japanese", "ko": "Korean", "zh": "Chinese", "th": "Thai", "vi": "Vietnamese", "de": "German",
        ]
        for language in offline { names[language.code] = language.name }
        return names
    }()

    /// The language(s) suggested for an ISO 3166-1 alpha-2 country code.
    public static let countries: [String: [String]] = [
        "JP": ["ja"], "KR": ["ko"], "CN": ["zh"], "TW": ["zh"], "TH": ["th"], "VN": ["vi"], "FR": ["fr"], "DE": ["de"],
        "ES": ["es", "ca", "gl"], "IT": ["it"], "PT": ["pt"], "BR": ["pt"], "US": ["en"], "GB": ["en"], "AU": ["en"],
        "AD": ["ca"], "MX": ["es"], "AR": ["es"], "BE": ["fr"], "CH": ["de", "fr", "it"], "CA": ["en", "fr"],
    ]

    /// The English names of the countries in `countries`, and other names people type for them
    /// (the name in the country's own language, a short form), each keyed by its code.
    public static let countryNames: [String: [String]] = [
        "JP": ["Japan", "Nippon", "Nihon"], "KR": ["South Korea", "Korea", "Republic of Korea"], "CN": ["China"],
        "TW": ["Taiwan"], "TH": ["Thailand"], "VN": ["Vietnam", "Viet Nam"], "FR": ["France"],
        "DE": ["Germany", "Deutschland"], "ES": ["Spain", "España", "Espanya", "Espanha"], "IT": ["Italy", "Italia"],
        "PT": ["Portugal"], "BR": ["Brazil", "Brasil"],
        "US": ["United States", "United States of America", "USA", "America"],
        "GB": ["United Kingdom", "UK", "Great Britain", "Britain", "England", "Scotland", "Wales"], "AU": ["Australia"],
        "AD": ["Andorra"], "MX": ["Mexico", "México"], "AR": ["Argentina"], "BE": ["Belgium", "Belgique", "België"],
        "CH": ["Switzerland", "Schweiz", "Suisse", "Svizzera"], "CA": ["Canada"],
    ]

    /// The ISO 3166-1 code of a country in `countries`, given its code or one of its names in
    /// `countryNames`, in any case and with or without accents, hyphens or dots ("pt",
    /// "Portugal", "united-states", "U.S.A."); nil when Parley suggests nothing for it.
    public static func country(_ text: String) -> String? {
        let key = countryKey(text)
        if key.count == 2, countries[key.uppercased()] != nil { return key.uppercased() }
        return countryNames.first { _, names in names.contains { countryKey($0) == key } }?.key
    }

    /// `text` in lower case, without accents, and with anything but letters and single spaces
    /// left out: the form country names are compared in.
    private static func countryKey(_ text: String) -> String {
        var key = ""
        for scalar in text.unicodeScalars {
            if let plain = plainLetters[scalar] {
                key += plain
            } else if scalar.properties.isAlphabetic {
                key += String(scalar).lowercased()
            } else if scalar == "-" || scalar.properties.isWhitespace, !key.isEmpty, key.last != " " {
                key += " "
            }
        }
        while key.last == " " { key.removeLast() }
        return key
    }

    /// The accented letters of the names above, without their accents.
    private static let plainLetters: [Unicode.Scalar: String] = [
        "ñ": "n", "Ñ": "n", "é": "e", "É": "e", "ë": "e", "Ë": "e", "á": "a", "í": "i", "ó": "o", "ú": "u",
    ]

    /// Debian's Apertium packages (bookworm, as `apt-cache search apertium` lists them) for the
    /// pairs whose two languages Parley knows, keyed by the two ISO 639-1 codes in alphabetical
    /// order. Debian names them with two- or three-letter codes, in either order.
    public static let apertiumPackages: [String: String] = [
        "an-ca": "apertium-arg-cat", "an-es": "apertium-spa-arg", "br-fr": "apertium-br-fr", "ca-en": "apertium-eng-cat",
        "ca-eo": "apertium-eo-ca", "ca-es": "apertium-spa-cat", "ca-fr": "apertium-fra-cat", "ca-it": "apertium-cat-ita",
        "ca-oc": "apertium-oc-ca", "ca-pt": "apertium-por-cat", "da-sv": "apertium-swe-dan", "en-eo": "apertium-eo-en",
        "en-es": "apertium-eng-spa", "en-eu": "apertium-eu-en", "en-gl": "apertium-en-gl", "en-is": "apertium-isl-eng",
        "eo-es": "apertium-eo-es", "eo-fr": "apertium-eo-fr", "es-eu": "apertium-eu-es", "es-fr": "apertium-fr-es",
        "es-gl": "apertium-es-gl", "es-it": "apertium-spa-ita", "es-oc": "apertium-oc-es", "es-pt": "apertium-es-pt",
        "es-ro": "apertium-es-ro", "fr-oc": "apertium-oci-fra", "gl-pt": "apertium-pt-gl", "is-sv": "apertium-isl-swe",
        "nb-nn": "apertium-nno-nob",
    ]

    /// The Debian package holding Apertium's pair of `a` and `b` (either direction), or nil.
    public static func apertiumPackage(_ a: String, _ b: String) -> String? {
        apertiumPackages[[a, b].sorted().joined(separator: "-")]
    }
}
