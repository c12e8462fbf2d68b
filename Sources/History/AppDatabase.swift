import Foundation
import GRDB

/// A history failure, with what to do about it.
public struct HistoryError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Parley's history database: sessions and turns in SQLite, through GRDB.
public struct AppDatabase: Sendable {
    // Internal, not private: extensions in other files (AppDatabase+Retry.swift) write through it.
    let writer: any DatabaseWriter

    /// Opens `writer` and brings its schema up to date.
    public init(_ writer: any DatabaseWriter) throws {
        self.writer = writer
        try Self.migrator.migrate(writer)
    }

    /// Opens (or creates) the history at `path` in WAL mode. The folder is made 0700 and the
    /// file 0600: a history of private conversations is nobody else's business.
    public static func open(path: String) throws(HistoryError) -> AppDatabase {
        let folder = (path as NSString).deletingLastPathComponent
        let fileManager = FileManager.default
        do {
            if !folder.isEmpty && !fileManager.fileExists(atPath: folder) {
                try fileManager.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            if !fileManager.fileExists(atPath: path) {
                _ = fileManager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let pool = try DatabasePool(path: path, configuration: configuration)
            return try AppDatabase(pool)
        } catch {
            throw HistoryError("cannot open history \(path): \(error); set [history] path to a writable file, or enabled = false")
        }
    }

    /// An empty database in memory, for tests and for `[history] enabled = false`.
    public static func inMemory() throws -> AppDatabase {
        try AppDatabase(DatabaseQueue())
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Shipped migrations are never edited; add new ones below.
        migrator.registerMigration("v1: sessions and turns") { db in
            try db.create(table: "sessions") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("started_at", .datetime).notNull()
                t.column("ended_at", .datetime)
                t.column("speaker_a", .text).notNull()
                t.column("speaker_b", .text).notNull()
            }
            try db.create(table: "turns") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("session_id", .integer).notNull().indexed()
                    .references("sessions", onDelete: .cascade)
                t.column("speaker", .text).notNull()
                t.column("source_lang", .text).notNull()
                t.column("target_lang", .text).notNull()
                t.column("source_text", .text).notNull()
                t.column("translated_text", .text)
                t.column("ipa", .text)
                t.column("confidence", .double)
                t.column("status", .text).notNull()
                t.column("error", .text)
                t.column("favorite", .boolean).notNull().defaults(to: false)
                t.column("created_at", .datetime).notNull().indexed()
                t.column("asr_ms", .integer)
                t.column("mt_ms", .integer)
                t.column("tts_ms", .integer)
                t.column("response_ms", .integer)
            }
        }
        migrator.registerMigration("v2: low-confidence flag") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "low_confidence", .boolean).notNull().defaults(to: false)
            }
        }
        return migrator
    }
}

// MARK: - Writes

extension AppDatabase {
    /// Starts a session and returns it with its id.
    public func startSession(speakerA: String, speakerB: String, at date: Date = Date()) async throws -> SessionRecord {
        try await writer.write { db in
            var session = SessionRecord(startedAt: date, speakerA: speakerA, speakerB: speakerB)
            try session.insert(db)
            return session
        }
    }

    /// Marks a session ended.
    public func endSession(id: Int64, at date: Date = Date()) async throws {
        try await writer.write { db in
            _ = try SessionRecord.filter(SessionRecord.CodingKeys.id == id)
                .updateAll(db, SessionRecord.CodingKeys.endedAt.set(to: date))
        }
    }

    /// Stores a turn; returns it with its id once committed.
    public func insert(_ turn: TurnRecord) async throws -> TurnRecord {
        try await writer.write { db in
            var stored = turn
            try stored.insert(db)
            return stored
        }
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
}
