import ParleyEndpoint
import ParleyRecognition
import ParleyTranslation

/// What any thread may ask of the engines: the recognizers (each then used by one lane only), the
/// translator, and whether a language can be heard or spoken.
///
/// The synthesizer and the playback device are not thread-safe: they are handed (`sending`) to
/// the speech worker when the `Interpreter` is made.
public struct EngineAccess: Sendable {
    /// A recognizer for a language, owned by the recognition lane that asked (`sending`); its
    /// model is loaded the first time and kept warm. nil when the language has no model.
    public let recognizer: @Sendable (String) -> sending (any SpeechRecognizer)?
    /// Which decoder a language's recognizer runs on: languages on the same decoder share a
    /// lane (one queue), others are decoded side by side. Both come from the same
    /// `RecognizerLanes`, so a decoder is never given two lanes.
    public let lane: @Sendable (String) -> String
    /// Whether a language is heard: it has a streaming recognizer, or an accurate engine hears
    /// it (French, Portuguese: Whisper alone). Cheap, and safe from any thread.
    public var canHear: @Sendable (String) -> Bool
    /// Whether a language has a streaming recognizer, whose language model can judge its
    /// pauses. Cheap, and safe from any thread.
    public var streams: @Sendable (String) -> Bool
    /// Whether a language has a voice. Cheap, and safe from any thread.
    public var canSpeak: @Sendable (String) -> Bool
    public var translator: any Translator
    /// The accurate engines, whose words a turn keeps (nil: the streaming recognizer's words).
    public var accurate: AccurateHearing?
    /// The trained voice-activity detector beside the level (nil: the level alone finds speech).
    public var voiceActivity: (any VoiceActivityDetector)?

    /// What is heard comes from `recognizers` and `accurate`, so the daemon and the tests tell
    /// it the same way.
    public init(
        recognizers: any RecognizerLanes, canSpeak: @escaping @Sendable (String) -> Bool, translator: any Translator,
        accurate: AccurateHearing? = nil, voiceActivity: (any VoiceActivityDetector)? = nil
    ) {
        self.accurate = accurate
        self.voiceActivity = voiceActivity
        self.recognizer = { recognizers.recognizer(for: $0) }
        self.lane = { recognizers.lane(for: $0) }
        let streams: @Sendable (String) -> Bool = { recognizers.canHear($0) }
        self.streams = streams
        self.canHear = { streams($0) || accurate?.name(for: $0) != nil }
        self.canSpeak = canSpeak
        self.translator = translator
    }
}

/// A request the conversation cannot take now, with what to do instead.
public struct ConversationRefusal: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
