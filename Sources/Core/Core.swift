/// The few types the wire, the config file, the history and the conversation machine share.
///
/// This module has no dependencies, so the protocol (and the clients that speak it) can name
/// a speaker or a mode without linking the state machine, and every bound a person can change
/// is written once.

/// A position or a duration on an audio timeline, counted in samples (frames of mono audio):
/// the capture timeline the machine, the endpointer and the runtime keep time on.
public typealias SampleTime = Int64

/// The rate of the audio Parley hears, written once: 16 kHz mono, 16-bit signed samples
/// (`[Int16]`), from the capture to the streaming recognizers, the voice detector and the accurate
/// engines (Moonshine, Whisper, a Wyoming server); a recording in another format is refused with
/// the sox line that converts it. Only what Parley says has rates of its own (each voice's).
public let captureSampleRate = 16_000

/// One of the two people in the conversation.
public enum Speaker: String, Sendable, Codable, CaseIterable, Hashable {
    case a, b

    /// The other person.
    public var other: Speaker { self == .a ? .b : .a }
}

/// What became of a turn's translation.
public enum TurnStatus: String, Sendable, Codable, CaseIterable {
    case translated, untranslated
}

/// Who speaks after a turn.
public enum ConversationMode: String, Sendable, Codable, CaseIterable {
    /// Either person may speak at any time: each utterance is decoded in both languages and the
    /// language that explains it best says who spoke; an utterance too short to tell goes to
    /// whoever's turn it is (as in `alternate`). With one side hearable, it is `alternate`.
    case auto
    /// The speakers take turns.
    case alternate
    /// Only speaker A talks (a guide, a lecture).
    case oneWay = "one-way"
    /// A client says who speaks next (`listen a|b`).
    case manual

    /// Every mode as the wire and the config file spell it, quoted, for error messages:
    /// `"auto", "alternate", "one-way" or "manual"`.
    public static var spelledOut: String {
        let names = allCases.map { "\"\($0.rawValue)\"" }
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }
}

/// The bounds of the settings that can change while the daemon runs. The config file, the
/// control protocol (`set`) and the CLI all check against these, so they cannot disagree.
public enum SettingBounds {
    /// `silence_ms`: the silence that ends an utterance whatever was said.
    public static let silenceMs: ClosedRange<Int> = 50...10_000
    /// `echo_tail_ms`: audio ignored after Parley speaks.
    public static let echoTailMs: ClosedRange<Int> = 0...10_000
    /// `min_confidence`: turns recognized with less confidence are flagged.
    public static let minConfidence: ClosedRange<Double> = 0...1

    /// "50-10000", for help texts.
    public static func spelled(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound)-\(range.upperBound)" }

    /// "0-1" (whole bounds without a fraction), for help texts.
    public static func spelled(_ range: ClosedRange<Double>) -> String {
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
        return "\(number(range.lowerBound))-\(number(range.upperBound))"
    }
}
