import Foundation
import GRDB
import ParleyCore

/// A conversation session: the turns between two people.
public struct SessionRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "sessions"

    public var id: Int64?
    public var startedAt: Date
    public var endedAt: Date?
    public var speakerA: String
    public var speakerB: String

    public init(id: Int64? = nil, startedAt: Date, endedAt: Date? = nil, speakerA: String, speakerB: String) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.speakerA = speakerA
        self.speakerB = speakerB
    }

    enum CodingKeys: String, CodingKey, ColumnExpression {
        case id
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case speakerA = "speaker_a"
        case speakerB = "speaker_b"
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

/// One turn: what a speaker said, its translation, and how long each stage took.
public struct TurnRecord: Codable, Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "turns"

    public typealias Status = TurnStatus

    public var id: Int64?
    public var sessionID: Int64
    public var speaker: Speaker
    public var sourceLang: String
    public var targetLang: String
    public var sourceText: String
    public var translatedText: String?
    public var ipa: String?
    public var confidence: Double?
    /// The recognized words and each one's confidence (none for typed turns). Stored in the
    /// `word_confidence` column as JSON text: `[{"confidence":0.97,"text":"go"}, ...]`.
    public var words: [WordConfidence]?
    public var status: Status
    public var error: String?
    public var favorite: Bool
    /// Recognized with less confidence than `[conversation] min_confidence`.
    public var lowConfidence: Bool
    public var createdAt: Date
    public var asrMs: Int?
    public var mtMs: Int?
    public var ttsMs: Int?
    public var responseMs: Int?
    /// The silence after the person's last sound before the turn was ended: what they waited
    /// before Parley started to work (`response_ms` comes on top).
    public var pauseMs: Int?
    /// What ended the utterance: `language_model` (the words were likely a whole sentence),
    /// `accurate_words` (the accurate engine's words heard at the pause end a sentence),
    /// `silence` (the `silence_ms` limit), `max_length` or `forced`; nil for typed turns.
    public var endedBy: String?
    /// True when the translation and its audio were made during the pause (a speculation).
    public var speculated: Bool?
    /// Auto mode: how the speaker was told (decided_by, both languages' scores, the losing
    /// language and what it heard). Stored as JSON text, as on the wire.
    public var detection: SpeakerDetection?
    /// Which engine gave the words: an accurate engine (`moonshine-tiny`, `whisper-base`, or a
    /// server such as `whisper@host:10300`); nil for the streaming recognizer, for typed turns
    /// and for turns stored before it was kept.
    public var engine: String?
    /// What the streaming recognizer heard, kept beside an accurate engine's words; nil when
    /// the streaming recognizer gave the words (they are `sourceText`).
    public var streamingText: String?
    /// How the translation went: the backend, and through a pivot the language in between
    /// ("apertium", "apertium via ca", "libretranslate"); nil for untranslated turns, replays
    /// and turns stored before it was kept.
    public var route: String?

    public init(
        id: Int64? = nil, sessionID: Int64, speaker: Speaker, sourceLang: String, targetLang: String, sourceText: String,
        translatedText: String?, ipa: String? = nil, confidence: Double?, words: [WordConfidence]? = nil, status: Status, error: String? = nil,
        favorite: Bool = false, lowConfidence: Bool = false, createdAt: Date, asrMs: Int? = nil, mtMs: Int? = nil, ttsMs: Int? = nil,
        responseMs: Int? = nil, pauseMs: Int? = nil, endedBy: String? = nil, speculated: Bool? = nil, detection: SpeakerDetection? = nil,
        engine: String? = nil, streamingText: String? = nil, route: String? = nil
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
        self.status = status
        self.error = error
        self.favorite = favorite
        self.lowConfidence = lowConfidence
        self.createdAt = createdAt
        self.asrMs = asrMs
        self.mtMs = mtMs
        self.ttsMs = ttsMs
        self.responseMs = responseMs
        self.pauseMs = pauseMs
        self.endedBy = endedBy
        self.speculated = speculated
        self.detection = detection
        self.engine = engine
        self.streamingText = streamingText
        self.route = route
    }

    public enum CodingKeys: String, CodingKey, ColumnExpression {
        case id, speaker, ipa, confidence, status, error, favorite
        case sessionID = "session_id"
        case sourceLang = "source_lang"
        case targetLang = "target_lang"
        case sourceText = "source_text"
        case translatedText = "translated_text"
        case createdAt = "created_at"
        case lowConfidence = "low_confidence"
        case words = "word_confidence"
        case asrMs = "asr_ms"
        case mtMs = "mt_ms"
        case ttsMs = "tts_ms"
        case responseMs = "response_ms"
        case pauseMs = "pause_ms"
        case endedBy = "ended_by"
        case speculated
        case detection
        case engine
        case streamingText = "streaming_text"
        case route
    }

    public typealias Columns = CodingKeys

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

extension DerivableRequest<TurnRecord> {
    /// Newest first; ties (same timestamp) broken by id.
    public func newestFirst() -> Self {
        order(TurnRecord.Columns.createdAt.desc, TurnRecord.Columns.id.desc)
    }
}

extension TurnRecord {
    /// The languages of speakers A and B as this turn shows them (the speaker's is the source).
    public var languages: (a: String, b: String) {
        speaker == .a ? (sourceLang, targetLang) : (targetLang, sourceLang)
    }
}
