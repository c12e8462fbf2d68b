import Foundation
import GRDB
import ParleyCore

/// How much history to keep. Favorites are exempt from both limits and do not count toward
/// `maxTurns`.
public struct Retention: Sendable, Equatable {
    /// Keep at most this many turns that are not favorites; nil for no limit.
    public var maxTurns: Int?
    /// Drop turns (not favorites) older than this many days; nil for no limit.
    public var maxAgeDays: Int?

    public init(maxTurns: Int? = 10_000, maxAgeDays: Int? = nil) {
        self.maxTurns = maxTurns
        self.maxAgeDays = maxAgeDays
    }

    public static let unlimited = Retention(maxTurns: nil, maxAgeDays: nil)
}

// MARK: - Writes

extension AppDatabase: HistoryStore {
    public func writeSession(speakerA: String, speakerB: String, at date: Date, ending previous: Int64?) throws -> SessionRecord {
        try writer.write { db in try Self.startSession(speakerA: speakerA, speakerB: speakerB, at: date, ending: previous, in: db) }
    }

    public func writeTurn(_ turn: TurnRecord, retention: Retention, now: Date) throws -> TurnRecord {
        try writer.write { db in try Self.record(turn, retention: retention, now: now, in: db) }
    }
}

extension AppDatabase {
    /// Starts a session, ending `previous` (if any) at the same moment, in one transaction.
    public func startSession(speakerA: String, speakerB: String, at date: Date = Date(), ending previous: Int64?) async throws
        -> SessionRecord
    {
        try await writer.write { db in try Self.startSession(speakerA: speakerA, speakerB: speakerB, at: date, ending: previous, in: db) }
    }

    private static func startSession(speakerA: String, speakerB: String, at date: Date, ending previous: Int64?, in db: Database) throws
        -> SessionRecord
    {
        if let previous {
            _ = try SessionRecord.filter(SessionRecord.CodingKeys.id == previous)
                .updateAll(db, SessionRecord.CodingKeys.endedAt.set(to: date))
        }
        var session = SessionRecord(startedAt: date, speakerA: speakerA, speakerB: speakerB)
        try session.insert(db)
        return session
    }

    /// Marks a session ended.
    public func endSession(id: Int64, at date: Date = Date()) async throws {
        try await writer.write { db in
            _ = try SessionRecord.filter(SessionRecord.CodingKeys.id == id)
                .updateAll(db, SessionRecord.CodingKeys.endedAt.set(to: date))
        }
    }

    /// Stores a turn, in one transaction with what goes with it:
    /// - a turn identical to the one before it in its session (same speaker, languages, words and
    ///   translation) is not stored twice: the stored one is returned;
    /// - then `retention` is applied.
    public func record(_ turn: TurnRecord, retention: Retention, now: Date = Date()) async throws -> TurnRecord {
        try await writer.write { db in try Self.record(turn, retention: retention, now: now, in: db) }
    }

    private static func record(_ turn: TurnRecord, retention: Retention, now: Date, in db: Database) throws -> TurnRecord {
        let previous = try TurnRecord.filter(TurnRecord.Columns.sessionID == turn.sessionID)
            .order(TurnRecord.Columns.id.desc).fetchOne(db)
        if let previous, previous.isRepeat(of: turn) { return previous }
        var stored = turn
        try stored.insert(db)
        _ = try applyRetention(retention, now: now, in: db)
        return stored
    }

    /// Applies `retention` now; returns how many turns were dropped.
    @discardableResult
    public func applyRetention(_ retention: Retention, now: Date = Date()) async throws -> Int {
        try await writer.write { db in try Self.applyRetention(retention, now: now, in: db) }
    }

    private static func applyRetention(_ retention: Retention, now: Date, in db: Database) throws -> Int {
        var dropped = 0
        if let days = retention.maxAgeDays {
            let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
            dropped += try TurnRecord.filter(TurnRecord.Columns.favorite == false && TurnRecord.Columns.createdAt < cutoff).deleteAll(db)
        }
        if let maxTurns = retention.maxTurns {
            let ordinary = TurnRecord.filter(TurnRecord.Columns.favorite == false)
            let excess = try ordinary.fetchCount(db) - maxTurns
            if excess > 0 {
                let oldest = try ordinary.order(TurnRecord.Columns.createdAt, TurnRecord.Columns.id).limit(excess)
                    .select(TurnRecord.Columns.id, as: Int64.self).fetchAll(db)
                dropped += try TurnRecord.filter(keys: oldest).deleteAll(db)
            }
        }
        return dropped
    }

    /// Marks or unmarks a favorite; nil when there is no such turn.
    public func setFavorite(id: Int64, _ favorite: Bool) async throws -> TurnRecord? {
        try await writer.write { db in
            guard var turn = try TurnRecord.fetchOne(db, key: id) else { return nil }
            turn.favorite = favorite
            try turn.update(db, columns: [TurnRecord.Columns.favorite])
            return turn
        }
    }

    /// Deletes one turn; returns it, or nil when there is no such turn.
    public func deleteTurn(id: Int64) async throws -> TurnRecord? {
        try await writer.write { db in
            guard let turn = try TurnRecord.fetchOne(db, key: id) else { return nil }
            try turn.delete(db)
            return turn
        }
    }

    /// Deletes the newest turn of `sessionID`; returns it, or nil when the session has none.
    public func undoLastTurn(inSession sessionID: Int64) async throws -> TurnRecord? {
        try await writer.write { db in
            guard let turn = try TurnRecord.filter(TurnRecord.Columns.sessionID == sessionID)
                .order(TurnRecord.Columns.id.desc).fetchOne(db)
            else { return nil }
            try turn.delete(db)
            return turn
        }
    }

    /// Deletes every turn, favorites too, and every session but `keeping`; returns how many
    /// turns were deleted.
    public func clear(keepingSession keeping: Int64?) async throws -> Int {
        let deleted = try await writer.write { db in
            let turns = try TurnRecord.deleteAll(db)
            try SessionRecord.filter(SessionRecord.CodingKeys.id != keeping).deleteAll(db)
            return turns
        }
        // Give the space (and the deleted words) back; not possible inside a transaction.
        try await writer.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        return deleted
    }

    /// Imports `turns` (of one exported session) into the session that has the same start and
    /// languages as `session`, creating it if there is none. A turn already in the history (same
    /// time, speaker and words), in whatever session, is skipped: importing a file twice, or a
    /// history's own export or `history --json` (whose turns come without their sessions, so the
    /// session is made up from the first turn), changes nothing. Returns how many turns were added.
    public func importSession(_ session: SessionRecord, turns: [TurnRecord]) async throws -> Int {
        try await writer.write { db in
            var sessionID: Int64?
            var added = 0
            for turn in turns {
                let exists = try TurnRecord.filter(TurnRecord.Columns.createdAt == turn.createdAt && TurnRecord.Columns.speaker == turn.speaker.rawValue)
                    .filter(TurnRecord.Columns.sourceText == turn.sourceText)
                    .fetchCount(db) > 0
                guard !exists else { continue }
                // The session is found or stored only for a turn that is added.
                if sessionID == nil { sessionID = try Self.session(like: session, db) }
                guard let sessionID else { throw HistoryError("the imported session could not be stored") }
                var copy = turn
                copy.id = nil
                copy.sessionID = sessionID
                try copy.insert(db)
                added += 1
            }
            return added
        }
    }

    /// The id of the session that started when `session` did, with the same languages; stored
    /// now if there is none.
    private static func session(like session: SessionRecord, _ db: Database) throws -> Int64? {
        if let found = try SessionRecord.filter(SessionRecord.CodingKeys.startedAt == session.startedAt)
            .filter(SessionRecord.CodingKeys.speakerA == session.speakerA && SessionRecord.CodingKeys.speakerB == session.speakerB)
            .fetchOne(db)
        {
            return found.id
        }
        var fresh = session
        fresh.id = nil
        try fresh.insert(db)
        return fresh.id
    }

    /// Test hook: caps the database at `pages` pages, so writes beyond fail with SQLITE_FULL
    /// exactly as on a full disk. nil lifts the cap.
    func limitSize(pages: Int?) async throws {
        try await writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA max_page_count = \(pages ?? 1_073_741_823)")
        }
    }
}

// MARK: - Retrying a translation

extension AppDatabase {
    /// Records the outcome of translating a stored turn again: `translation` with status
    /// translated and no error, or (nil) status untranslated with `error`. The pronunciation of
    /// an earlier translation no longer applies and is cleared. Returns the updated turn, or
    /// nil when there is no turn `id`.
    public func recordRetry(id: Int64, translation: String?, error: String?, mtMs: Int?) async throws -> TurnRecord? {
        try await writer.write { db in
            guard var turn = try TurnRecord.fetchOne(db, key: id) else { return nil }
            turn.translatedText = translation
            turn.status = translation == nil ? .untranslated : .translated
            turn.error = translation == nil ? error : nil
            turn.ipa = nil
            turn.mtMs = mtMs
            try turn.update(db)
            return turn
        }
    }
}
