/// What recognition says about an utterance beyond its words, shared by the wire (`transcript`,
/// turns), the history (stored with each turn) and the runtime that makes them.

/// A recognized word and how sure the recognizer is of it (0-1).
public struct WordConfidence: Codable, Sendable, Equatable {
    public var text: String
    public var confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }

    /// Whether the word is doubtful: less sure than `minimum` (`min_confidence`).
    public func isDoubtful(below minimum: Double) -> Bool { confidence < minimum }

    /// `text` with its doubtful words in brackets ("go forward [ten] meters"), and in yellow
    /// when `colour` (a terminal). `text` as it is when `words` are missing or are not its words.
    public static func marking(_ text: String, words: [WordConfidence]?, below minimum: Double, colour: Bool = false) -> String {
        guard let words, !words.isEmpty, words.map(\.text) == text.split(separator: " ").map(String.init) else { return text }
        return words.map { word in
            guard word.isDoubtful(below: minimum) else { return word.text }
            return colour ? "\u{1B}[33m[\(word.text)]\u{1B}[39m" : "[\(word.text)]"
        }.joined(separator: " ")
    }
}

/// How auto mode told who spoke: by what was heard (the language that explained the audio
/// best), or by turn order when the utterance was too short or too close to tell.
public struct SpeakerDetection: Codable, Sendable, Equatable {
    public enum Method: String, Codable, Sendable {
        case audio
        case turnOrder = "turn_order"
        /// An accurate engine's language identification (Whisper), between the two languages.
        case languageID = "language_id"
    }

    public var decidedBy: Method
    /// Each language's score for the utterance: per frame, higher explains the audio better
    /// (`audio`), or the probability of each language (`language_id`).
    public var scores: [String: Double]
    /// The language that lost, and what it heard.
    public var rivalLanguage: String?
    public var rivalText: String?

    public init(decidedBy: Method, scores: [String: Double], rivalLanguage: String?, rivalText: String?) {
        self.decidedBy = decidedBy
        self.scores = scores
        self.rivalLanguage = rivalLanguage
        self.rivalText = rivalText
    }

    enum CodingKeys: String, CodingKey {
        case scores
        case decidedBy = "decided_by"
        case rivalLanguage = "rival_language"
        case rivalText = "rival_text"
    }
}
