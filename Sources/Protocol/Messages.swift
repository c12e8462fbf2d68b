import FoundationEssentials
import ParleyCore

/// The control protocol: JSON Lines over a Unix stream socket (see docs/protocol.md).
///
/// These types are shared by the daemon and the CLI so the two can never disagree.

// A client's request, `{"type": COMMAND, "id": optional, "data": {...}}`, is `Request`
// (Commands.swift).

/// A successful reply: `{"type": "result", "id", "data"}`.
public struct ResultReply<Payload: Codable & Sendable>: Sendable, Codable {
    public var type: String = "result"
    public var id: JSONValue?
    public var data: Payload

    public init(id: JSONValue?, data: Payload) {
        self.id = id
        self.data = data
    }
}

/// A failed request: `{"type": "error", "id", "data": {"code", "message"}}`.
public struct ErrorReply: Sendable, Codable, Equatable {
    public struct Detail: Sendable, Codable, Equatable {
        public var code: String
        public var message: String
    }
    public var type: String = "error"
    public var id: JSONValue?
    public var data: Detail

    public init(id: JSONValue?, code: ErrorCode, message: String) {
        self.id = id
        self.data = Detail(code: code.rawValue, message: message)
    }
}

/// Machine-readable error codes.
public enum ErrorCode: String, Sendable, Codable {
    case badRequest = "bad_request"
    case unknownCommand = "unknown_command"
    case invalidField = "invalid_field"
    case lineTooLong = "line_too_long"
    case unavailable
    /// No turn (or session) with that id.
    case notFound = "not_found"
    case tooManyClients = "too_many_clients"
    /// The connection sent no request for the idle timeout and was closed.
    case idleTimeout = "idle_timeout"
    /// `reload`: the config file is invalid; nothing changed.
    case invalidConfig = "invalid_config"
    /// The caption page: an action was sent before the page was paired (`parley web` shows the code).
    case pairingRequired = "pairing_required"
    /// The caption page: the pairing code is not the one `parley web` shows.
    case wrongCode = "wrong_code"
    /// The caption page: a message longer than the page's limit.
    case messageTooLarge = "message_too_large"
    case internalError = "internal"
}

/// The result of `subscribe` (events follow on the same connection).
public struct Acknowledged: Sendable, Codable, Equatable {
    public var ok = true

    public init() {}
}

/// Only the envelope, to tell a result from an error before decoding the payload.
public struct Envelope: Sendable, Codable {
    public var type: String
    public var id: JSONValue?
}

/// What `stop` did (its answer's `stopped`; absent when there was nothing to stop).
public enum StopOutcome: String, Sendable, Codable, Equatable {
    /// The speech being played was cut.
    case speech
    /// The utterance being heard was ended; what was said so far is recognized and translated.
    case utterance
}

/// `status`: what the daemon is doing now.
public struct StatusInfo: Sendable, Codable, Equatable {
    public struct Side: Sendable, Codable, Equatable {
        public var language: String
        /// False when no recognizer model is installed for the language; the side can still type.
        public var hearable: Bool
        /// What to do to make the side hearable, when it is not.
        public var hint: String?
        /// Where the side's speech model came from (as `languages` says), when it is hearable.
        public var model: String?
        /// The engine whose words a turn keeps ("moonshine-tiny", "whisper-base", a server), or
        /// "pocketsphinx" when the streaming recognizer's words are kept.
        public var engine: String?

        public init(language: String, hearable: Bool, hint: String? = nil, model: String? = nil, engine: String? = nil) {
            self.language = language
            self.hearable = hearable
            self.hint = hint
            self.model = model
            self.engine = engine
        }
    }

    public var version: String
    public var state: String
    public var speaker: String?
    /// As the `state` event's: in `listening` and `hearing`, false while auto mode tells who
    /// speaks from the audio (`speaker` is only expected); nil in other states and from daemons
    /// before it.
    public var decided: Bool?
    public var mode: String
    public var a: Side
    public var b: Side
    public var turns: Int
    public var sessionID: Int64?
    public var uptimeSeconds: Double
    public var captureDevice: String
    public var playbackDevice: String
    /// History writes are failing (disk full, database locked); turns wait in memory and are retried.
    public var historyDegraded = false
    /// Turns and sessions waiting to be written to history.
    public var historyPending = 0
    /// What is wrong with history, or what happened to it (a corrupt file moved aside).
    public var historyProblem: String?
    /// Only in the answer to `stop`: what it stopped, or nil when there was nothing to stop.
    public var stopped: StopOutcome?

    public init(
        version: String, state: String, speaker: String?, mode: String, a: Side, b: Side, turns: Int,
        sessionID: Int64?, uptimeSeconds: Double, captureDevice: String, playbackDevice: String
    ) {
        self.version = version
        self.state = state
        self.speaker = speaker
        self.mode = mode
        self.a = a
        self.b = b
        self.turns = turns
        self.sessionID = sessionID
        self.uptimeSeconds = uptimeSeconds
        self.captureDevice = captureDevice
        self.playbackDevice = playbackDevice
    }

    enum CodingKeys: String, CodingKey {
        case version, state, speaker, decided, mode, a, b, turns
        case sessionID = "session_id"
        case uptimeSeconds = "uptime_seconds"
        case captureDevice = "capture_device"
        case playbackDevice = "playback_device"
        case historyDegraded = "history_degraded", historyPending = "history_pending", historyProblem = "history_problem"
        case stopped
    }
}

/// One turn as clients see it (`history`, `turn` events, `parley history --json`).
public struct TurnInfo: Sendable, Codable, Equatable {
    public struct Timings: Sendable, Codable, Equatable {
        /// Recognition finalization after the end of speech.
        public var asrMs: Int?
        public var mtMs: Int?
        /// Synthesis until the first sample.
        public var ttsMs: Int?
        /// From the decided end of speech to the first translated sample handed to playback.
        public var responseMs: Int?
        /// The silence between the person's last sound and the decided end of speech: what a
        /// person waits is `pause_ms` + `response_ms` (and the audio path).
        public var pauseMs: Int?
        /// What ended the utterance: `language_model`, `accurate_words`, `silence`, `max_length` or `forced`.
        public var endedBy: String?
        /// True when the translation and its audio were made during the pause, before the end
        /// was decided (a speculation on the same words); nil otherwise.
        public var speculated: Bool?

        public init(
            asrMs: Int? = nil, mtMs: Int? = nil, ttsMs: Int? = nil, responseMs: Int? = nil, pauseMs: Int? = nil, endedBy: String? = nil,
            speculated: Bool? = nil
        ) {
            self.asrMs = asrMs
            self.mtMs = mtMs
            self.ttsMs = ttsMs
            self.responseMs = responseMs
            self.pauseMs = pauseMs
            self.endedBy = endedBy
            self.speculated = speculated
        }

        enum CodingKeys: String, CodingKey {
            case asrMs = "asr_ms", mtMs = "mt_ms", ttsMs = "tts_ms", responseMs = "response_ms", pauseMs = "pause_ms", endedBy = "ended_by"
            case speculated
        }
    }

    public var id: Int64
    public var sessionID: Int64
    public var speaker: Speaker
    public var sourceLang: String
    public var targetLang: String
    public var sourceText: String
    public var translatedText: String?
    /// The translation's pronunciation in IPA.
    public var ipa: String?
    public var confidence: Double?
    /// The recognized words and how sure the recognizer was of each (none for typed turns).
    public var words: [WordConfidence]?
    public var favorite: Bool
    public var lowConfidence: Bool
    public var status: TurnStatus
    public var error: String?
    /// ISO 8601, UTC.
    public var createdAt: String
    public var timings: Timings
    /// Auto mode: how the speaker was told.
    public var detection: SpeakerDetection?
    /// Which engine gave the words (`moonshine-tiny`, `whisper-base`, `whisper@host:port`);
    /// absent for the streaming recognizer, typed turns and turns stored before it was kept.
    public var engine: String?
    /// What the streaming recognizer heard, when an accurate engine gave the words.
    public var streamingText: String?
    /// How the translation went: "apertium", "apertium via ca" (through a pivot),
    /// "libretranslate"...; absent for untranslated turns and turns stored before it was kept.
    public var route: String?

    public init(
        id: Int64, sessionID: Int64, speaker: Speaker, sourceLang: String, targetLang: String, sourceText: String,
        translatedText: String?, ipa: String? = nil, confidence: Double?, words: [WordConfidence]? = nil, favorite: Bool,
        lowConfidence: Bool = false, status: TurnStatus, error: String?,
        createdAt: String, timings: Timings, detection: SpeakerDetection? = nil, engine: String? = nil, streamingText: String? = nil,
        route: String? = nil
    ) {
        self.id = id
        self.sessionID = sessionID
        self.speaker = speaker
        self.sourceLang = sourceLang
        self.targetLang = targetLang
        self.sourceText = sourceText
        self.translatedText = translatedText
        self.ipa = ipa
        self.confidence = confidence
        self.words = words
        self.favorite = favorite
        self.lowConfidence = lowConfidence
        self.status = status
        self.error = error
        self.createdAt = createdAt
        self.timings = timings
        self.detection = detection
        self.engine = engine
        self.streamingText = streamingText
        self.route = route
    }

    enum CodingKeys: String, CodingKey {
        case id, speaker, ipa, confidence, words, favorite, status, error, timings, detection, engine, route
        case streamingText = "streaming_text"
        case sessionID = "session_id"
        case sourceLang = "source_lang"
        case targetLang = "target_lang"
        case sourceText = "source_text"
        case translatedText = "translated_text"
        case createdAt = "created_at"
        case lowConfidence = "low_confidence"
    }
}

/// `version`.
public struct VersionInfo: Sendable, Codable, Equatable {
    public var version: String
    public var protocolVersion: Int

    public init(version: String, protocolVersion: Int) {
        self.version = version
        self.protocolVersion = protocolVersion
    }

    enum CodingKeys: String, CodingKey {
        case version
        case protocolVersion = "protocol"
    }
}

public enum ParleyVersion {
    public static let string = "0.1.0"
    public static let protocolVersion = 1
}

/// The longest line either side accepts.
public let maxLineBytes = 64 * 1024

extension TurnInfo {
    /// The languages of speakers A and B as this turn shows them (the speaker's is the source).
    public var languages: (a: String, b: String) {
        speaker == .a ? (sourceLang, targetLang) : (targetLang, sourceLang)
    }
}
