/// What an accurate recognizer heard in one whole utterance.
public struct Transcript: Sendable, Equatable {
    /// The words, or an empty string when nothing was said (noise, a cough).
    public var text: String
    /// The language the words are in: the one asked for, or the one detected.
    public var language: String
    /// How sure the engine is of the words, from 0 to 1; nil when it gives no score.
    public var confidence: Double?
    /// For a detected language: each candidate's probability (they sum to 1); empty when the
    /// language was given.
    public var languageProbabilities: [String: Double]
    /// False when the engine only detected the language (`TranscriptionRequest.detectOnly`).
    public var decoded: Bool
    /// Which engine gave the words ("moonshine-tiny", "whisper-base", or a server's name).
    public var engine: String
    /// True when the engine heard a voice but dropped the words it wrote, not trusting them
    /// (Whisper: an average log-probability under -1, its no-speech probability at most 0.35): no
    /// text, and another engine that hears the language may make it out.
    public var distrusted: Bool

    public init(
        text: String, language: String, confidence: Double? = nil, languageProbabilities: [String: Double] = [:],
        decoded: Bool = true, engine: String, distrusted: Bool = false
    ) {
        self.text = text
        self.language = language
        self.confidence = confidence
        self.languageProbabilities = languageProbabilities
        self.decoded = decoded
        self.engine = engine
        self.distrusted = distrusted
    }
}

/// What to hear in an utterance.
public struct TranscriptionRequest: Sendable, Equatable {
    /// The language the words are in; nil: detect it among `candidates`.
    public var language: String?
    /// The languages a detection chooses from (the two of the conversation).
    public var candidates: [String]
    /// Languages for which a detection stops at the language, without words: another engine
    /// hears them better or faster.
    public var detectOnly: Set<String>

    public init(language: String?, candidates: [String] = [], detectOnly: Set<String> = []) {
        self.language = language
        self.candidates = candidates
        self.detectOnly = detectOnly
    }
}

/// An accurate recognizer of whole utterances: it hears the audio once the person has stopped
/// (or paused), rather than as it comes. Its words are the ones a turn translates, speaks and
/// stores; the streaming recognizer (`SpeechRecognizer`) gives partial words and the end cue.
///
/// Implementations block while they work: call them from a worker of their own, never from the
/// capture loop or the concurrency pool. One call at a time per instance.
public protocol UtteranceTranscriber: AnyObject, Sendable {
    /// The engine's name, as history and `status` show it.
    var name: String { get }
    /// Whether it hears `language`.
    func hears(_ language: String) -> Bool
    /// Whether it can detect the language of an utterance.
    var detectsLanguage: Bool { get }
    /// Hears 16 kHz mono samples.
    func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript
    /// Whether it keeps most words right in a noisy room, so such a room is heard by it first.
    var holdsUpInNoise: Bool { get }
    /// Whether it can be asked now (false: set aside for a while, the next engine hears).
    var isAvailable: Bool { get }
    /// How much of the room before the voice it hears, in ms (nil: all the endpointer kept, its
    /// pre-roll). Moonshine's is `AccurateHearing.moonshineRoomBeforeVoiceMs`.
    var roomBeforeVoiceMs: Int? { get }
    /// Asks it to stop the utterance it is hearing now, from another thread: `transcribe` then
    /// throws a `RecognizerError` that is `stopped`, as soon as the engine can. Nothing happens
    /// when it hears nothing, or cannot stop (the default: the utterance is heard to its end).
    func stop()
}

extension UtteranceTranscriber {
    public func stop() {}
    public var holdsUpInNoise: Bool { false }
    public var roomBeforeVoiceMs: Int? { nil }
    public var isAvailable: Bool { true }
}
