import ParleyConversation

/// The settings that can change while the daemon runs (`parley set`, `parley swap`); the
/// result of `set`, `swap`, and part of `config`.
public struct RuntimeSettings: Sendable, Equatable, Codable {
    public var speakerA: String
    public var speakerB: String
    public var mode: ConversationMode
    public var silenceMs: Int
    public var echoTailMs: Int
    public var minConfidence: Double

    enum CodingKeys: String, CodingKey {
        case mode
        case speakerA = "speaker_a", speakerB = "speaker_b", silenceMs = "silence_ms", echoTailMs = "echo_tail_ms"
        case minConfidence = "min_confidence"
    }

    public init(speakerA: String, speakerB: String, mode: ConversationMode, silenceMs: Int, echoTailMs: Int, minConfidence: Double) {
        self.speakerA = speakerA
        self.speakerB = speakerB
        self.mode = mode
        self.silenceMs = silenceMs
        self.echoTailMs = echoTailMs
        self.minConfidence = minConfidence
    }

    public func language(of speaker: Speaker) -> String { speaker == .a ? speakerA : speakerB }
}


/// The result of `reload` (and of SIGHUP, which logs it): what the new config file changed now,
/// and what changed but takes effect only when the daemon restarts.
public struct ReloadInfo: Sendable, Equatable, Codable {
    /// Config keys applied at once, as "section.key".
    public var applied: [String]
    /// Config sections that changed but are read only at start-up.
    public var restartNeeded: [String]
    public var settings: RuntimeSettings

    enum CodingKeys: String, CodingKey {
        case applied, settings
        case restartNeeded = "restart_needed"
    }

    public init(applied: [String], restartNeeded: [String], settings: RuntimeSettings) {
        self.applied = applied
        self.restartNeeded = restartNeeded
        self.settings = settings
    }
}
