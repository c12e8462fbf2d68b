/// A translation failure, with what to do about it.
public struct TranslationError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Translates text between two languages named by ISO 639-1 codes.
public protocol Translator: Sendable {
    /// Whether the pair is installed; says nothing about whether it is started.
    func supports(_ pair: LanguagePair) -> Bool
    /// Starts what the pair needs, so its first sentence is fast.
    func prepare(_ pair: LanguagePair) async throws(TranslationError)
    func translate(_ text: String, from source: String, to target: String) async throws(TranslationError) -> String
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
}
