import Foundation

/// A translation failure, with what to do about it.
public struct TranslationError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The fixed word sent to check, probe or warm a backend: never anything someone said.
let fixedProbeText = "hello"

/// Translates text between two languages named by ISO 639-1 codes.
///
/// (The async requirements throw untyped errors: Swift 6.3's optimizer crashes on async
/// functions with typed throws in release builds. Conforming types throw `TranslationError`
/// or, for network backends, `BackendError`.)
public protocol Translator: Sendable {
    /// Whether the pair is installed (or, for a server, may be offered); says nothing about
    /// whether it is started.
    func supports(_ pair: LanguagePair) -> Bool
    /// Starts what the pair needs, so its first sentence is fast.
    func prepare(_ pair: LanguagePair) async throws
    func translate(_ text: String, from source: String, to target: String) async throws -> String
    /// The pairs this backend offers, for `parley languages`. A server that cannot be reached
    /// throws; an answer may be cached.
    func availablePairs() async throws -> [LanguagePair]
    /// Translates, and says which way the translation went (`RoutedTranslation.route`).
    func translateNamingRoute(_ text: String, from source: String, to target: String) async throws -> RoutedTranslation
    /// How `pair` would be translated now: "direct", "via es", or for a chain the backend first
    /// ("apertium via es"); nil when it cannot be.
    func routeName(for pair: LanguagePair) -> String?
    /// The backends behind it, in the order they are tried (for `parley languages`): a chain's
    /// own; any other translator is its one backend, "translator".
    var backends: [TranslatorChain.Backend] { get }
    /// Translates a stored turn again because someone asked (`parley retry`): a chain then asks
    /// the backends it skips for now too (a broken circuit); others translate as usual.
    func retranslate(_ text: String, from source: String, to target: String) async throws -> String
}

extension Translator {
    public func availablePairs() async throws -> [LanguagePair] { [] }

    public func translateNamingRoute(_ text: String, from source: String, to target: String) async throws -> RoutedTranslation {
        RoutedTranslation(text: try await translate(text, from: source, to: target), route: nil)
    }

    public func routeName(for pair: LanguagePair) -> String? { supports(pair) ? "direct" : nil }

    public var backends: [TranslatorChain.Backend] { [.init(name: "translator", translator: self)] }

    public func retranslate(_ text: String, from source: String, to target: String) async throws -> String {
        try await translate(text, from: source, to: target)
    }
}

public struct LanguagePair: Sendable, Hashable, CustomStringConvertible {
    public var source: String
    public var target: String

    public init(_ source: String, _ target: String) {
        self.source = source
        self.target = target
    }

    public var description: String { "\(source)-\(target)" }
}

/// ISO 639-1 codes (what users write) and the ISO 639-3 codes Apertium names its pairs with.
public enum LanguageCodes {
    static let threeLetter: [String: String] = [
        "en": "eng", "es": "spa", "ca": "cat", "gl": "glg", "pt": "por", "fr": "fra", "it": "ita",
        "eo": "epo", "de": "deu", "nl": "nld", "ro": "ron", "oc": "oci", "an": "arg", "eu": "eus",
        "sv": "swe", "da": "dan", "nb": "nob", "nn": "nno", "is": "isl", "cy": "cym", "br": "bre",
    ]

    /// The three-letter code for `code`, or nil when Parley does not know it.
    public static func apertium(_ code: String) -> String? { threeLetter[code] }

    /// The ISO 639-1 code for an Apertium language name (`eng`, or a two-letter `en`); nil for
    /// a language Parley does not know or a variant such as `eng_US`.
    public static func iso6391(fromApertium name: String) -> String? {
        if name.count == 2, threeLetter[name] != nil { return name }
        return twoLetter[name]
    }

    static let twoLetter: [String: String] = Dictionary(uniqueKeysWithValues: threeLetter.map { ($1, $0) })

    /// LibreTranslate names languages with ISO 639-1 codes too; the few it spells otherwise
    /// are mapped here.
    static let libreTranslateSpelling: [String: String] = ["zh": "zh-Hans"]

    /// The code LibreTranslate uses for `code`.
    public static func libreTranslate(_ code: String) -> String { libreTranslateSpelling[code] ?? code }

    /// The ISO 639-1 code for a LibreTranslate code.
    public static func iso6391(fromLibreTranslate code: String) -> String {
        libreTranslateSpelling.first { $0.value == code }?.key ?? code
    }

    /// The Apertium pairs named by the mode files in `modesDirectory` (variants such as
    /// `spa-eng_US` left out).
    public static func apertiumPairs(modesDirectory: String) -> [LanguagePair] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: modesDirectory)) ?? []
        return files.compactMap { file -> LanguagePair? in
            guard file.hasSuffix(".mode") else { return nil }
            let parts = file.dropLast(5).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let source = iso6391(fromApertium: String(parts[0])),
                let target = iso6391(fromApertium: String(parts[1]))
            else { return nil }
            return LanguagePair(source, target)
        }
        .sorted { ($0.source, $0.target) < ($1.source, $1.target) }
    }
}
