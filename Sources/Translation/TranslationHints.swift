import ParleyCore

/// What to do about a pair of languages the local Apertium cannot translate: the Debian package
/// that holds the pair, or, when Debian has none, how to use a translation server instead.
public enum TranslationHints {
    /// The Debian package holding Apertium's pair of `a` and `b` (either direction), or nil
    /// (`LanguageTable.apertiumPackages`).
    public static func debianPackage(_ a: String, _ b: String) -> String? {
        LanguageTable.apertiumPackage(a, b)
    }

    /// One line for `source`-`target` when no Apertium route (direct or through a pivot,
    /// `LanguageTable.pivots`) is installed: the package of the direct pair, else the packages a
    /// pivot lacks (those of its legs not `installed`), else how to use a translation server.
    public static func missingRoute(source: String, target: String, installed: (String, String) -> Bool) -> String {
        if debianPackage(source, target) != nil { return missingPair(source: source, target: target) }
        for pivot in LanguageTable.pivots where pivot != source && pivot != target {
            let legs = [(source, pivot), (pivot, target)]
            // Debian must have both legs; the hint names those not installed.
            guard legs.allSatisfy({ debianPackage($0.0, $0.1) != nil }) else { continue }
            let needed = Array(Set(legs.filter { !installed($0.0, $0.1) }.compactMap { debianPackage($0.0, $0.1) })).sorted()
            guard !needed.isEmpty else { continue }
            let through = LanguageTable.names[pivot] ?? pivot
            return "Debian has no direct Apertium pair for \(source)-\(target); Parley translates it through \(through): "
                + "install \(needed.joined(separator: " and ")) (apt-get install \(needed.joined(separator: " ")))"
        }
        return missingPair(source: source, target: target)
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
