import ParleyCore

/// Events the daemon sends to subscribers: `{"type": EVENT, "data": {...}}`.
public struct EventMessage<Payload: Encodable & Sendable>: Encodable, Sendable {
    public var type: String
    public var data: Payload

    public init(type: String, data: Payload) {
        self.type = type
        self.data = data
    }
}

/// Event names.
public enum EventType {
    public static let level = "level"
    public static let speechStart = "speech_start"
    public static let speechEnd = "speech_end"
    public static let partial = "partial"
    public static let transcript = "transcript"
    public static let translation = "translation"
    public static let speakingStart = "speaking_start"
    public static let speakingEnd = "speaking_end"
    public static let turn = "turn"
    public static let state = "state"
    public static let noSpeech = "no_speech"
    public static let error = "error"
    public static let lagged = "lagged"
}

/// `level`: the microphone's loudness, about 25 times a second.
public struct LevelEvent: Codable, Sendable, Equatable {
    public var rmsDB: Float
    public var peakDB: Float

    public init(rmsDB: Float, peakDB: Float) {
        self.rmsDB = rmsDB
        self.peakDB = peakDB
    }

    enum CodingKeys: String, CodingKey {
        case rmsDB = "rms_db", peakDB = "peak_db"
    }
}

/// `speech_start`, `speech_end`, `speaking_start`, `speaking_end`, `no_speech`.
public struct SpeakerEvent: Codable, Sendable, Equatable {
    public var speaker: String
    public var language: String
    /// `speech_start`: false while auto mode has not yet decided who speaks (the side and
    /// language named are only the expected ones: the transcript tells); true when they are
    /// fixed. Absent from other events and from daemons before it (read absent as true).
    public var decided: Bool?

    public init(speaker: String, language: String, decided: Bool? = nil) {
        self.speaker = speaker
        self.language = language
        self.decided = decided
    }
}

/// `transcript`, `translation`, `partial`.
public struct TextEvent: Codable, Sendable, Equatable {
    public var speaker: String
    public var language: String
    public var text: String
    /// `transcript`: how sure the recognizer is of the utterance, 0-1.
    public var confidence: Double?
    /// `transcript`: the words and how sure the recognizer is of each.
    public var words: [WordConfidence]?
    /// `transcript` in auto mode: how the speaker was told.
    public var detection: SpeakerDetection?
    /// `transcript`: which engine gave the words (`moonshine-tiny`, `whisper-base`,
    /// `whisper@host:port`); absent when the streaming recognizer did.
    public var engine: String?
    /// `translation`: how the translation went ("apertium", "apertium via ca", "libretranslate").
    public var route: String?
    /// `partial`: false while auto mode has not yet decided who speaks: the words are the
    /// expected language's guess, which is gibberish when the other person speaks. Absent from
    /// other events and from daemons before it (read absent as true).
    public var decided: Bool?

    public init(
        speaker: String, language: String, text: String, confidence: Double? = nil, words: [WordConfidence]? = nil,
        detection: SpeakerDetection? = nil, engine: String? = nil, route: String? = nil, decided: Bool? = nil
    ) {
        self.speaker = speaker
        self.language = language
        self.text = text
        self.confidence = confidence
        self.words = words
        self.detection = detection
        self.engine = engine
        self.route = route
        self.decided = decided
    }
}

/// `state`.
public struct StateEvent: Codable, Sendable, Equatable {
    public var state: String
    public var speaker: String?
    /// `listening` and `hearing`: false when auto mode decides who speaks from the audio, so
    /// `speaker` is only the side expected (whoever's turn it is), not known to be speaking;
    /// true when it is fixed (other modes, or a language auto mode cannot tell apart). Absent
    /// in other states and from daemons before it (read absent as true).
    public var decided: Bool?

    public init(state: String, speaker: String?, decided: Bool? = nil) {
        self.state = state
        self.speaker = speaker
        self.decided = decided
    }
}

/// `error`.
public struct ErrorEvent: Codable, Sendable, Equatable {
    public var message: String

    public init(message: String) {
        self.message = message
    }
}
