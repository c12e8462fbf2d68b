import ParleyCore

/// The result of `reload` (and of SIGHUP, which logs it): what the new config file changed now,
/// and what changed but takes effect only when the daemon restarts.
public struct ReloadInfo: Sendable, Equatable, Codable {
    /// Config keys applied at once, as "section.key".
    public var applied: [String]
    /// Config keys that changed but are read only at start-up, as "section.key".
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

/// `config`: the settings in force, runtime changes included.
public struct EffectiveConfig: Sendable, Equatable, Codable {
    /// As `set` changes them.
    public var settings: RuntimeSettings
    public var captureDevice: String
    public var playbackDevice: String
    public var historyEnabled: Bool
    /// Nil when history is off.
    public var historyPath: String?
    public var controlSocket: String
    public var repeatPrompt: Bool
    public var recognizerFwdflat: Bool
    public var recognizerMaxHMMsPerFrame: Int
    /// In the order they are tried.
    public var translatorBackends: [String]
    public var translatorDeadlineMs: Int
    public var historyMaxTurns: Int
    /// Nil: no limit.
    public var historyMaxAgeDays: Int?
    public var sessionGapMinutes: Int

    public init(
        settings: RuntimeSettings, captureDevice: String, playbackDevice: String, historyEnabled: Bool, historyPath: String?,
        controlSocket: String, repeatPrompt: Bool, recognizerFwdflat: Bool, recognizerMaxHMMsPerFrame: Int, translatorBackends: [String],
        translatorDeadlineMs: Int, historyMaxTurns: Int, historyMaxAgeDays: Int?, sessionGapMinutes: Int
    ) {
        self.settings = settings
        self.captureDevice = captureDevice
        self.playbackDevice = playbackDevice
        self.historyEnabled = historyEnabled
        self.historyPath = historyPath
        self.controlSocket = controlSocket
        self.repeatPrompt = repeatPrompt
        self.recognizerFwdflat = recognizerFwdflat
        self.recognizerMaxHMMsPerFrame = recognizerMaxHMMsPerFrame
        self.translatorBackends = translatorBackends
        self.translatorDeadlineMs = translatorDeadlineMs
        self.historyMaxTurns = historyMaxTurns
        self.historyMaxAgeDays = historyMaxAgeDays
        self.sessionGapMinutes = sessionGapMinutes
    }

    enum CodingKeys: String, CodingKey {
        case settings
        case captureDevice = "capture_device", playbackDevice = "playback_device"
        case historyEnabled = "history_enabled", historyPath = "history_path"
        case controlSocket = "control_socket", repeatPrompt = "repeat_prompt"
        case recognizerFwdflat = "recognizer_fwdflat", recognizerMaxHMMsPerFrame = "recognizer_maxhmmpf"
        case translatorBackends = "translator_backends", translatorDeadlineMs = "translator_deadline_ms"
        case historyMaxTurns = "history_max_turns", historyMaxAgeDays = "history_max_age_days"
        case sessionGapMinutes = "session_gap_minutes"
    }
}
