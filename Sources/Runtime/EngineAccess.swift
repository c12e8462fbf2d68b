import ParleyTranslation

/// What any thread may ask of the engines, and the translator, which any task may use.
///
/// The recognizers, the synthesizer and the playback device are not thread-safe: each is handed
/// (`sending`) to the one worker that uses it (`RecognitionWorker`, `SpeechWorker`) when the
/// `Interpreter` is made.
public struct EngineAccess: Sendable {
    /// Whether a language has a recognizer model. Cheap, and safe from any thread.
    public var canHear: @Sendable (String) -> Bool
    /// Whether a language has a voice. Cheap, and safe from any thread.
    public var canSpeak: @Sendable (String) -> Bool
    public var translator: any Translator

    public init(canHear: @escaping @Sendable (String) -> Bool, canSpeak: @escaping @Sendable (String) -> Bool, translator: any Translator) {
        self.canHear = canHear
        self.canSpeak = canSpeak
        self.translator = translator
    }
}

/// A request the conversation cannot take now, with what to do instead.
public struct ConversationRefusal: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
