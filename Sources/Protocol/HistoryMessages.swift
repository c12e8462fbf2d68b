import FoundationEssentials

/// A session as clients see it (`session_new`, `history_export`).
public struct SessionInfo: Sendable, Codable, Equatable {
    public var id: Int64
    /// ISO 8601, UTC.
    public var startedAt: String
    public var endedAt: String?
    public var speakerA: String
    public var speakerB: String

    public init(id: Int64, startedAt: String, endedAt: String?, speakerA: String, speakerB: String) {
        self.id = id
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.speakerA = speakerA
        self.speakerB = speakerB
    }

    enum CodingKeys: String, CodingKey {
        case id
        case startedAt = "started_at", endedAt = "ended_at", speakerA = "speaker_a", speakerB = "speaker_b"
    }
}

/// `history_export`, and the JSON file `parley history export --format json` writes and
/// `parley history import` reads.
public struct HistoryExportInfo: Sendable, Codable, Equatable {
    /// The file format's version.
    public var parleyHistory = 1
    public var sessions: [SessionInfo]
    /// Oldest first.
    public var turns: [TurnInfo]

    public init(sessions: [SessionInfo], turns: [TurnInfo]) {
        self.sessions = sessions
        self.turns = turns
    }

    enum CodingKeys: String, CodingKey {
        case parleyHistory = "parley_history", sessions, turns
    }
}

/// `history_import`: how many turns were added (turns already there are skipped).
public struct ImportResult: Sendable, Codable, Equatable {
    public var imported: Int
    public var skipped: Int

    public init(imported: Int, skipped: Int) {
        self.imported = imported
        self.skipped = skipped
    }
}

/// `history_clear`: how many turns were deleted.
public struct ClearResult: Sendable, Codable, Equatable {
    public var deleted: Int

    public init(deleted: Int) { self.deleted = deleted }
}
