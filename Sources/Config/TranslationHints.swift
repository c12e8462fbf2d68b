/// What to do about a pair of languages the local Apertium cannot translate: the Debian package
/// that holds the pair, or, when Debian has none, how to use a translation server instead.
public enum TranslationHints {
    /// Debian's Apertium packages (bookworm, as `apt-cache search apertium` lists them) for the
    /// pairs whose two languages Parley's Apertium backend knows, keyed by the two ISO 639-1
    /// codes in alphabetical order. Debian names them with two- or three-letter codes, in
    /// either order, and some translate one way only: `parley languages` shows what an
    /// installed one gives.
    static let debianPackages: [String: String] = [
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
    public static func debianPackage(_ a: String, _ b: String) -> String? {
        debianPackages[[a, b].sorted().joined(separator: "-")]
    }

    /// One line for `source`-`target` with no installed Apertium pair: the package to install,
    /// or that no offline pair exists and how to configure a translation server.
    public static func missingPair(source: String, target: String) -> String {
        if let package = debianPackage(source, target) {
            return "no Apertium pair for \(source)-\(target) is installed; install \(package) (apt-get install \(package))"
        }
        return "Debian has no Apertium pair for \(source)-\(target), so it cannot be translated offline; use a translation server: "
            + "list \"libretranslate\" (or \"apertium-apy\") in [translator] backends and set its url in [translator.libretranslate] "
            + "(see the commented example in parley.toml)"
    }
}
