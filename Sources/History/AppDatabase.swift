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
    /// Where a corrupt history found at open was moved, if one was.
    public private(set) var movedAside: String?

    /// Opens `writer` and brings its schema up to date.
    public init(_ writer: any DatabaseWriter) throws {
        self.writer = writer
        try Self.migrator.migrate(writer)
    }

    /// Opens (or creates) the history at `path` in WAL mode. The folder is made 0700 and the
    /// file 0600: a history of private conversations is nobody else's business.
    ///
    /// A file that is not a database, or a corrupt one, is moved aside to
    /// `<path>.corrupt-<UTC timestamp>` (with its -wal and -shm files) and a new history is
    /// started; `movedAside` says where it went.
    public static func open(path: String, now: Date = Date()) throws(HistoryError) -> AppDatabase {
        do {
            return try openChecked(path: path)
        } catch let error as DatabaseError where Self.isCorruption(error) {
            let aside = path + ".corrupt-" + Self.timestamp(now)
            do {
                try FileManager.default.moveItem(atPath: path, toPath: aside)
                for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
                    try FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix)
                }
            } catch {
                throw HistoryError("history \(path) is corrupt and cannot be moved aside (\(error)); move it away by hand, or set [history] enabled = false")
            }
            do {
                var database = try openChecked(path: path)
                database.movedAside = aside
                return database
            } catch {
                throw HistoryError("cannot open history \(path): \(error); set [history] path to a writable file, or enabled = false")
            }
        } catch {
            throw HistoryError("cannot open history \(path): \(error); set [history] path to a writable file, or enabled = false")
        }
    }

    private static func openChecked(path: String) throws -> AppDatabase {
        let folder = (path as NSString).deletingLastPathComponent
        let fileManager = FileManager.default
        if !folder.isEmpty && !fileManager.fileExists(atPath: folder) {
            try fileManager.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        if !fileManager.fileExists(atPath: path) {
            _ = fileManager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            // Deleted turns are overwritten, not left in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        let result = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
        guard result == "ok" else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(result ?? "no answer")")
        }
        return try AppDatabase(pool)
    }

    static func isCorruption(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
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
        migrator.registerMigration("v3: full-text search") { db in
            // External content: the index holds only tokens; triggers keep it in step with turns.
            // unicode61 with remove_diacritics 2 folds case and accents: "cafe" finds "café".
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE turns_fts USING fts5(
                        source_text, translated_text, content='turns', content_rowid='id',
                        tokenize='unicode61 remove_diacritics 2');
                    CREATE TRIGGER turns_fts_after_insert AFTER INSERT ON turns BEGIN
                        INSERT INTO turns_fts(rowid, source_text, translated_text)
                        VALUES (new.id, new.source_text, new.translated_text);
                    END;
                    CREATE TRIGGER turns_fts_after_delete AFTER DELETE ON turns BEGIN
                        INSERT INTO turns_fts(turns_fts, rowid, source_text, translated_text)
                        VALUES ('delete', old.id, old.source_text, old.translated_text);
                    END;
                    CREATE TRIGGER turns_fts_after_update AFTER UPDATE OF source_text, translated_text ON turns BEGIN
                        INSERT INTO turns_fts(turns_fts, rowid, source_text, translated_text)
                        VALUES ('delete', old.id, old.source_text, old.translated_text);
                        INSERT INTO turns_fts(rowid, source_text, translated_text)
                        VALUES (new.id, new.source_text, new.translated_text);
                    END;
                    INSERT INTO turns_fts(turns_fts) VALUES ('rebuild');
                    CREATE INDEX turns_on_favorite ON turns(favorite, created_at);
                    """)
        }
        migrator.registerMigration("v4: how auto mode told the speaker") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "detection", .text)
            }
        }
        migrator.registerMigration("v5: word confidence") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "word_confidence", .text)
            }
        }
        migrator.registerMigration("v6: how the turn ended") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "pause_ms", .integer)
                t.add(column: "ended_by", .text)
            }
        }
        migrator.registerMigration("v7: speculation") { db in
            try db.alter(table: "turns") { t in
                t.add(column: "speculated", .boolean)
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
