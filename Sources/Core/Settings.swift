// The conversation settings that can change while the daemon runs, and a change to them: the
// wire's `set`, `swap` and `config` carry them (ParleyProtocol), the config file's reload
// produces a change (ParleyConfig), the runtime applies it.

/// The settings that can change while the daemon runs (`parley set`, `parley swap`); the
/// result of `set`, `swap`, and part of `config`.
public struct RuntimeSettings: Sendable, Equatable, Codable {
    public var speakerA: String
    public var speakerB: String
    public var mode: ConversationMode
    public var silenceMs: Int
    public var echoTailMs: Int
    public var minConfidence: Double

    /// Also the fields of `set` (`SettingsChange`), in the order its messages list them.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case speakerA = "speaker_a", speakerB = "speaker_b", mode, silenceMs = "silence_ms", echoTailMs = "echo_tail_ms"
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

/// `set`: the settings to change; at least one.
public struct SettingsChange: Sendable, Equatable, Encodable {
    public var speakerA: String?
    public var speakerB: String?
    public var mode: ConversationMode?
    /// In `SettingBounds.silenceMs`.
    public var silenceMs: Int?
    /// In `SettingBounds.echoTailMs`.
    public var echoTailMs: Int?
    /// In `SettingBounds.minConfidence`.
    public var minConfidence: Double?

    public init(
        speakerA: String? = nil, speakerB: String? = nil, mode: ConversationMode? = nil, silenceMs: Int? = nil, echoTailMs: Int? = nil,
        minConfidence: Double? = nil
    ) {
        self.speakerA = speakerA
        self.speakerB = speakerB
        self.mode = mode
        self.silenceMs = silenceMs
        self.echoTailMs = echoTailMs
        self.minConfidence = minConfidence
    }

    /// Nothing to change (not a valid `set`).
    public var isEmpty: Bool { self == SettingsChange() }

    /// The settings' own names.
    public typealias CodingKeys = RuntimeSettings.CodingKeys
}
