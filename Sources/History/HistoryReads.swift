import Foundation
import GRDB

/// What to look for in history. Every filter given must match; results are newest first.
public struct TurnQuery: Sendable, Equatable {
    /// Words to find in the source text or the translation, ignoring case and accents. Each word
    /// matches as a prefix ("caf" finds "café").
    public var text: String?
    public var favoritesOnly = false
    /// "a" or "b".
    public var speaker: String?
    /// A language, spoken or translated into.
    public var language: String?
    /// Turns made at or after this moment.
    public var since: Date?
    /// Turns made before this moment.
    public var until: Date?
    public var sessionID: Int64?
    public var limit = 50
    /// Turns to skip, for paging: page n (from 0) is `offset = n * limit`.
    public var offset = 0

    public init(
        text: String? = nil, favoritesOnly: Bool = false, speaker: String? = nil, language: String? = nil, since: Date? = nil,
        until: Date? = nil, sessionID: Int64? = nil, limit: Int = 50, offset: Int = 0
    ) {
        self.text = text
        self.favoritesOnly = favoritesOnly
        self.speaker = speaker
        self.language = language
        self.since = since
        self.until = until
        self.sessionID = sessionID
        self.limit = limit
        self.offset = offset
    }

    /// The FTS5 query for `text`: each word quoted (so no word is read as an operator) and
    /// matched as a prefix; nil when there are no words.
    static func matchExpression(_ text: String) -> String? {
        let words = text.split(whereSeparator: { $0.isWhitespace }).map { word in
            "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\"*"
        }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }
}

/// Every turn and session of a history (or of a period), for export and import.
public struct HistoryExport: Sendable, Equatable {
    public var sessions: [SessionRecord]
    /// Oldest first.
    public var turns: [TurnRecord]

    public init(sessions: [SessionRecord], turns: [TurnRecord]) {
        self.sessions = sessions
        self.turns = turns
    }
}

// MARK: - Reads

extension AppDatabase {
    /// The latest turns, newest first.
    public func recentTurns(limit: Int) async throws -> [TurnRecord] {
        try await writer.read { db in
            try TurnRecord.all().newestFirst().limit(limit).fetchAll(db)
        }
    }

    public func turnCount() async throws -> Int {
        try await writer.read { db in try TurnRecord.fetchCount(db) }
    }

    /// The turns matching `query`, newest first.
    public func search(_ query: TurnQuery) async throws -> [TurnRecord] {
        try await writer.read { db in
            var request = TurnRecord.all()
            if let text = query.text, let match = TurnQuery.matchExpression(text) {
                request = request.filter(
                    sql: "turns.id IN (SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?)", arguments: [match])
            }
            if query.favoritesOnly { request = request.filter(TurnRecord.Columns.favorite == true) }
            if let speaker = query.speaker { request = request.filter(TurnRecord.Columns.speaker == speaker) }
            if let language = query.language {
                request = request.filter(TurnRecord.Columns.sourceLang == language || TurnRecord.Columns.targetLang == language)
            }
            if let since = query.since { request = request.filter(TurnRecord.Columns.createdAt >= since) }
            if let until = query.until { request = request.filter(TurnRecord.Columns.createdAt < until) }
            if let session = query.sessionID { request = request.filter(TurnRecord.Columns.sessionID == session) }
            return try request.newestFirst().limit(query.limit, offset: query.offset).fetchAll(db)
        }
    }

    public func turn(id: Int64) async throws -> TurnRecord? {
        try await writer.read { db in try TurnRecord.fetchOne(db, key: id) }
    }

    /// The turns made in [since, until), oldest first, with their sessions.
    public func export(since: Date? = nil, until: Date? = nil) async throws -> HistoryExport {
        try await writer.read { db in
            var request = TurnRecord.all()
            if let since { request = request.filter(TurnRecord.Columns.createdAt >= since) }
            if let until { request = request.filter(TurnRecord.Columns.createdAt < until) }
            let turns = try request.order(TurnRecord.Columns.createdAt, TurnRecord.Columns.id).fetchAll(db)
            let ids = Set(turns.map(\.sessionID))
            let sessions = try SessionRecord.filter(keys: ids).order(SessionRecord.CodingKeys.id).fetchAll(db)
            return HistoryExport(sessions: sessions, turns: turns)
        }
    }

    /// Whether the file is sound: SQLite's own `integrity_check` says "ok".
    public func integrityCheck() async throws -> String {
        try await writer.read { db in
            try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
        }
    }
}

extension TurnRecord {
    /// The same words from the same speaker, with the same translation.
    func isRepeat(of other: TurnRecord) -> Bool {
        speaker == other.speaker && sourceLang == other.sourceLang && targetLang == other.targetLang
            && sourceText == other.sourceText && translatedText == other.translatedText
    }
}
