import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A history failure, with what to do about it.
public struct HistoryError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Parley's history database: sessions and turns in SQLite, through GRDB.
public struct AppDatabase: Sendable {
    /// The open database, shared by every copy of this value; made again at the same path when
    /// the file is deleted or replaced while running (`checkFile`).
    let connection: Connection
    // Internal, not private: the extensions in HistoryWrites.swift and HistoryReads.swift use it.
    var writer: any DatabaseWriter { connection.writer }
    /// Where a corrupt history found at open was moved, if one was.
    public private(set) var movedAside: String?

    /// Opens `writer` and brings its schema up to date.
    public init(_ writer: any DatabaseWriter) throws {
        try Self.migrator.migrate(writer)
        self.connection = Connection(writer: writer, path: nil)
    }

    private init(queue: DatabaseQueue, path: String) throws {
        try Self.migrator.migrate(queue)
        self.connection = Connection(writer: queue, path: path)
    }

    /// Opens (or creates) the history at `path` in WAL mode, on one connection that holds the
    /// file exclusively (its WAL index in memory, no `-shm` file). The folder is made 0700 and
    /// the file 0600: a history of private conversations is nobody else's business.
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
                throw HistoryError("history \(path) is corrupt and cannot be moved aside (\(reason(error))); move it away by hand, or set [history] enabled = false")
            }
            do {
                var database = try openChecked(path: path)
                database.movedAside = aside
                return database
            } catch {
                throw HistoryError("cannot open history \(path): \(reason(error)); set [history] path to a writable file, or enabled = false")
            }
        } catch {
            throw HistoryError("cannot open history \(path): \(reason(error)); set [history] path to a writable file, or enabled = false")
        }
    }

    /// Why opening failed, in a few words: SQLite's message, or the system's reason for a file
    /// or folder that cannot be made (never a whole NSError).
    static func reason(_ error: any Error) -> String {
        if let error = error as? DatabaseError {
            return error.message ?? "SQLite error \(error.resultCode.rawValue)"
        }
        if let error = error as? HistoryError { return error.description }
        if let error = error as? POSIXError { return String(cString: strerror(error.code.rawValue)) }
        if let underlying = (error as? CocoaError)?.underlying {
            if let posix = underlying as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
            let nsError = underlying as NSError
            if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        }
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }

    private static func openChecked(path: String) throws -> AppDatabase {
        let folder = (path as NSString).deletingLastPathComponent
        let fileManager = FileManager.default
        if !folder.isEmpty && !fileManager.fileExists(atPath: folder) {
            if let problem = makeFolder(folder) {
                throw HistoryError("cannot make its folder \(folder) (\(problem))")
            }
        }
        var isFolder: ObjCBool = false
        if fileManager.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw HistoryError("it is a folder")
        }
        if !fileManager.fileExists(atPath: path) {
            _ = fileManager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.journalMode = .wal
        configuration.prepareDatabase { db in
            // Before the first access in WAL mode: SQLite then keeps the WAL index in the heap
            // instead of a memory map of `<path>-shm`, which kills the process (SIGBUS) when
            // that file cannot be written or grown. The price is one connection holding the
            // file: safe, since one parleyd owns a history (its `.lock`) and every reader asks
            // that parleyd.
            try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE")
            // Deleted turns are overwritten, not left in free pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let result = try queue.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") }
        guard result == "ok" else {
            try? queue.close()
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "quick_check: \(result ?? "no answer")")
        }
        return try AppDatabase(queue: queue, path: path)
    }

    /// Makes `folder` (0700) and the folders above it that are missing; the system's reason
    /// when it cannot, or nil.
    static func makeFolder(_ folder: String) -> String? {
        let parent = (folder as NSString).deletingLastPathComponent
        var info = stat()
        if !parent.isEmpty, parent != folder, stat(parent, &info) != 0, let problem = makeFolder(parent) {
            return problem
        }
        guard mkdir(folder, 0o700) == 0 || errno == EEXIST else { return String(cString: strerror(errno)) }
        return nil
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
}

// MARK: - A file deleted while running

extension AppDatabase {
    /// Makes sure the database still is the file at its path, and returns the file's
    /// generation: 0 at open, one more each time the file was made again. SQLite keeps writing
    /// to a file that was deleted (or whose folder was) while open, and everything written
    /// there would vanish at exit; so when the path no longer holds the open file, the old
    /// connection is closed and the database is made again at the path (its folder too, 0700),
    /// with the schema. Whoever wrote since the last check must write again (`HistoryWriter`
    /// does). A database in memory is always generation 0.
    ///
    /// One `stat`; throws SQLITE_CANTOPEN (a failure that can pass) when the file cannot be
    /// made again.
    public func checkFile() throws -> Int {
        try connection.check()
    }

    /// Closes the database (and lets go of the file, which one connection holds exclusively
    /// while open); nothing can be read or written through it afterwards.
    public func close() throws {
        try connection.writer.close()
    }

    /// Device and inode of the file at `path`, or nil when there is none.
    static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    struct FileIdentity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// The open database and the identity of its file, replaced together.
    final class Connection: Sendable {
        struct State {
            var writer: any DatabaseWriter
            /// The file the connection has open; nil in memory, or after a failed reopen.
            var identity: FileIdentity?
            var generation = 0
        }
        /// The history's path; nil in memory.
        let path: String?
        private let state: Mutex<State>

        init(writer: any DatabaseWriter, path: String?) {
            self.path = path
            self.state = Mutex(State(writer: writer, identity: path.flatMap { AppDatabase.identity(of: $0) }))
        }

        var writer: any DatabaseWriter { state.withLock { $0.writer } }

        func check() throws -> Int {
            guard let path else { return 0 }
            let current = AppDatabase.identity(of: path)
            return try state.withLock { state throws -> Int in
                if let current, current == state.identity { return state.generation }
                // The old connection goes first: at close SQLite removes `<path>-wal` and
                // `-shm` by name, which must not be the new database's.
                do {
                    try state.writer.close()
                } catch {
                    throw DatabaseError(
                        resultCode: .SQLITE_CANTOPEN, message: "the history \(path) was deleted while open, and the old file cannot be closed: \(error)")
                }
                state.identity = nil
                if current == nil {
                    // Left over from the deleted file (when only the file went): they would
                    // be read as the new file's.
                    for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
                }
                let reopened: AppDatabase
                do {
                    reopened = try AppDatabase.open(path: path)
                } catch {
                    throw DatabaseError(resultCode: .SQLITE_CANTOPEN, message: "the history was deleted while open and cannot be made again: \(error)")
                }
                state.writer = reopened.writer
                state.identity = AppDatabase.identity(of: path)
                state.generation += 1
                return state.generation
            }
        }
    }
}
