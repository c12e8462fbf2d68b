import Foundation
import ParleyCore
import ParleyTesting
import Synchronization
import Testing
import ParleyTranslation
@testable import ParleyHistory
@testable import ParleyProtocol

/// The real parleyd (silent microphone through ALSA's file plugin) and the real parley CLI.
@Suite("History end to end", .serialized, .startsProcesses)
struct HistoryEndToEndTests {
    /// Whether a tmpfs can be mounted here (root, and mount allowed): the full-disk test needs one.
    static let canMountTmpfs: Bool = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-mount-\(UUID().uuidString)")
        guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(at: folder) }
        guard run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", folder.path]) else { return false }
        _ = run("/usr/bin/umount", ["-l", folder.path])
        return true
    }()

    struct Daemon {
        var process: Process
        var log: URL
        var socket: String
        var dir: URL

        /// Runs the real CLI against this daemon.
        func parley(_ arguments: [String]) throws -> EndToEnd.Output {
            try EndToEnd.run(try EndToEnd.binary("parley"), arguments + ["--socket", socket], in: dir, timeout: 60)
        }

        func call<T: Decodable>(_ type: String, _ data: [String: JSONValue]? = nil, as: T.Type) throws -> T {
            let line = try ControlClient(path: socket).call(RawRequest(type: type, data: data))
            return try JSONDecoder().decode(Reply<T>.self, from: line).data
        }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            _ = EndToEnd.wait(process, timeout: 20)
        }

        struct Reply<T: Decodable>: Decodable { var data: T }
    }

    /// Starts parleyd live, hearing silence, with its history in `dir`/state (and `history`'s
    /// settings, if any) and its socket in `dir`.
    static func startDaemon(in dir: URL, history: String = "") async throws -> Daemon {
        let silence = dir.appendingPathComponent("silence.raw")
        if !FileManager.default.fileExists(atPath: silence.path) { try Data(count: 32_000).write(to: silence) }
        let (process, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: silence.path, played: "/dev/null", historyConfig: history, historyPath: "\(dir.path)/state/history.sqlite")
        try #require(process.isRunning, "parleyd exited: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        return Daemon(process: process, log: log, socket: socket, dir: dir)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ output: EndToEnd.Output) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(output.stdout.utf8))
    }

    @Test func theCLIContract() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }

        // Typed turns, Unicode and all: CJK, right-to-left, emoji.
        let unicode = "漢字 שלום مرحبا 👋🏽 café"
        let first = try daemon.parley(["say", "--speaker", "a", "--json", unicode])
        #expect(first.status == 0, "\(first.stderr)")
        let said = try Self.decode(TurnInfo.self, first)
        #expect(said.sourceText == unicode)
        let second = try daemon.parley(["say", "--speaker", "b", "--json", "el café está caliente"])
        #expect(second.status == 0, "\(second.stderr)")
        let spanish = try Self.decode(TurnInfo.self, second)
        // The same words again are not stored twice.
        let repeated = try Self.decode(TurnInfo.self, try daemon.parley(["say", "--speaker", "b", "--json", "el café está caliente"]))
        #expect(repeated.id == spanish.id)

        // Search ignores case and accents; newest first; paging.
        let found = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--search", "CAFE", "--json"]))
        #expect(found.map(\.id) == [spanish.id, said.id])
        let page2 = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--limit", "1", "--page", "2", "--json"]))
        #expect(page2.map(\.id) == [said.id])
        let bySpeaker = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--speaker", "b", "--json"]))
        #expect(bySpeaker.map(\.id) == [spanish.id])
        let plain = try daemon.parley(["history", "--search", "שלום"])
        #expect(plain.status == 0 && plain.stdout.contains(unicode))

        // Favorites.
        #expect(try daemon.parley(["favorite", "\(said.id)"]).status == 0)
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--favorites", "--json"])).map(\.id) == [said.id])
        #expect(try daemon.parley(["unfavorite", "\(said.id)"]).status == 0)
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--favorites", "--json"])).isEmpty)
        // An error in words; its code only with --json.
        let missing = try daemon.parley(["favorite", "99999"])
        #expect(missing.status == 1 && missing.message.hasPrefix("parley: ") && !missing.stderr.contains("not_found"), "\(missing.stderr)")
        let missingJSON = try daemon.parley(["favorite", "99999", "--json"])
        #expect(missingJSON.status == 1 && missingJSON.message.hasSuffix("(not_found)"), "\(missingJSON.stderr)")

        // Export: JSON and CSV on stdout.
        let exported = try daemon.parley(["history", "export", "--format", "json"])
        #expect(exported.status == 0, "\(exported.stderr)")
        let export = try Self.decode(HistoryExportInfo.self, exported)
        #expect(export.turns.map(\.sourceText) == [unicode, "el café está caliente"])
        let csv = try daemon.parley(["history", "export", "--format", "csv"])
        let rows = csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.first?.hasPrefix("id,session_id,created_at,speaker") == true)
        #expect(rows.count == 3 && rows[1].contains(unicode))

        // Clear needs --yes; then the JSON export imports back, once.
        #expect(try daemon.parley(["history", "clear"]).status == 2)
        #expect(try daemon.parley(["history", "clear", "--yes"]).status == 0)
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).isEmpty)
        // One turn as an accurate engine would have heard it (typed turns name none).
        var heard = export
        heard.turns[0].engine = "moonshine-tiny"
        heard.turns[0].streamingText = "can gee shalom"
        let file = dir.appendingPathComponent("export.json")
        try JSONEncoder().encode(heard).write(to: file)
        let imported = try daemon.parley(["history", "import", file.path])
        #expect(imported.status == 0 && imported.stdout.contains("imported 2 turns"), "\(imported.stdout) \(imported.stderr)")
        #expect(try daemon.parley(["history", "import", file.path]).stdout.contains("imported 0 turns"))
        let back = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"]))
        #expect(back.map(\.sourceText) == ["el café está caliente", unicode])
        #expect(back.map(\.translatedText) == [spanish.translatedText, said.translatedText])
        #expect(back.map(\.createdAt) == [spanish.createdAt, said.createdAt])
        #expect(back.map(\.engine) == [nil, "moonshine-tiny"] && back.map(\.streamingText) == [nil, "can gee shalom"])
        // The list names the engine that heard a turn; CSV has it in a column of its own.
        let listed = try daemon.parley(["history"])
        // And the route its translation took.
        #expect(listed.stdout.components(separatedBy: "\n").filter { $0.hasSuffix("heard by moonshine-tiny  translated by apertium") }.count == 1, "\(listed.stdout)")
        let csvBack = try daemon.parley(["history", "export", "--format", "csv"]).stdout.components(separatedBy: "\r\n")
        #expect(csvBack.first?.hasSuffix(",pause_ms,ended_by,speculated,engine,streaming_text,route") == true)
        #expect(csvBack.filter { $0.hasSuffix(",moonshine-tiny,can gee shalom,apertium") }.count == 1, "\(csvBack)")

        // Replay speaks again without storing; delete-last removes the last turn (the old name
        // `undo`, which restored nothing, is refused and deletes nothing); a new session.
        let replayed = try daemon.parley(["replay", "\(back[1].id)"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).count == 2)
        let undo = try daemon.parley(["history", "undo"])
        #expect(undo.status == 2 && undo.message.contains("history delete-last"), "\(undo.stderr)")
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).count == 2)
        let deleted = try daemon.parley(["history", "delete-last"])
        #expect(deleted.status == 0 && deleted.stdout.contains("deleted #"), "\(deleted.stderr)")
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).map(\.sourceText) == [unicode])
        let session = try Self.decode(SessionInfo.self, try daemon.parley(["session", "new", "--json"]))
        let status = try daemon.call("status", as: StatusInfo.self)
        #expect(status.sessionID == session.id && session.id > said.sessionID)
        #expect(!status.historyDegraded && status.historyPending == 0 && status.historyProblem == nil)
        #expect(try daemon.parley(["history", "delete-last"]).status == 1)  // nothing in the new session yet
        let next = try Self.decode(TurnInfo.self, try daemon.parley(["say", "--speaker", "a", "--json", "hello"]))
        #expect(next.sessionID == session.id)
        let inSession = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--session", "\(session.id)", "--json"]))
        #expect(inSession.map(\.id) == [next.id])

        // Private: the file 0600, its folder 0700.
        let path = dir.appendingPathComponent("state/history.sqlite").path
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("state").path)[.posixPermissions] as? Int == 0o700)
        daemon.stop()
        #expect(daemon.process.terminationStatus == 0)
    }

    @Test func disabledHistoryKeepsNothingOnDisk() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await Self.startDaemon(in: dir, history: "enabled = false")
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        #expect(try daemon.parley(["say", "--speaker", "a", "secret words"]).status == 0)
        // The session's turns are there to search while it runs...
        #expect(try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).map(\.sourceText) == ["secret words"])
        daemon.stop()
        // ...and nothing was written anywhere under the folder.
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("state").path))
        let files = try FileManager.default.subpathsOfDirectory(atPath: dir.path)
        #expect(!files.contains { $0.contains("sqlite") }, "\(files)")
        // (The CLI's own output, captured by the test, is the only place the words may be.)
        for file in files where !file.hasSuffix(".out") && !file.hasSuffix(".err") {
            let contents = (try? Data(contentsOf: dir.appendingPathComponent(file))) ?? Data()
            #expect(contents.range(of: Data("secret words".utf8)) == nil, "\(file) holds the words")
        }
    }

    @Test func aCorruptHistoryIsMovedAsideAtStart() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 10_000).write(to: state.appendingPathComponent("history.sqlite"))
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        let status = try daemon.call("status", as: StatusInfo.self)
        #expect(status.historyProblem?.contains("corrupt") == true)
        let files = try FileManager.default.contentsOfDirectory(atPath: state.path)
        #expect(files.contains { $0.hasPrefix("history.sqlite.corrupt-") }, "\(files)")
        let shown = try daemon.parley(["status"])
        #expect(shown.stdout.contains("history   the history was corrupt; it was moved to"), "\(shown.stdout)")
        #expect(try daemon.parley(["say", "--speaker", "a", "hello"]).status == 0)
        daemon.stop()
        let log = (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
        #expect(log.contains("corrupt") && log.contains("moved"))
        #expect(try await AppDatabase.open(path: state.appendingPathComponent("history.sqlite").path).turnCount() == 1)
    }

    /// Another program cannot take the database's lock from under parleyd: parleyd holds the
    /// file exclusively (its WAL index in memory, no -shm to map), so the sqlite3 shell is told
    /// the database is locked, and turns go on being stored. (A lock that does hold writes up,
    /// SQLITE_BUSY, is retried as in HistoryWriterTests.)
    @Test func anotherProgramCannotLockTheDatabaseFromUnderParleyd() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        #expect(try daemon.parley(["say", "--speaker", "a", "before the lock"]).status == 0)
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        locker.arguments = [dir.appendingPathComponent("state/history.sqlite").path]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        locker.standardInput = input
        locker.standardOutput = output
        locker.standardError = errors
        try EndToEnd.launch(locker)
        defer { if locker.isRunning { locker.terminate() } }
        input.fileHandleForWriting.write(
            Data("BEGIN IMMEDIATE;\nINSERT INTO sessions(started_at, speaker_a, speaker_b) VALUES ('2000-01-01', 'x', 'y');\nSELECT 'tried';\n".utf8))
        var said = ""
        while !said.contains("tried") {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "sqlite3 ended early")
            said += String(decoding: chunk, as: UTF8.self)
        }
        input.fileHandleForWriting.write(Data(".quit\n".utf8))
        try input.fileHandleForWriting.close()
        locker.waitUntilExit()
        let refused = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(refused.contains("locked"), "\(refused)")
        // Meanwhile and after, turns are stored at once.
        #expect(try daemon.parley(["say", "--speaker", "a", "during the attempt"]).status == 0)
        #expect(try daemon.parley(["say", "--speaker", "b", "después del intento"]).status == 0)
        let status = try daemon.call("status", as: StatusInfo.self)
        #expect(!status.historyDegraded && status.historyPending == 0)
        let texts = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).map(\.sourceText)
        #expect(Set(texts) == ["before the lock", "during the attempt", "después del intento"])
        daemon.stop()
    }

    /// The history's folder deleted under a running parleyd (issue 16, item 2): the turns said
    /// since are acknowledged, stored in a history made again at the path, and one line says so.
    @Test func turnsSaidAfterTheHistoryFolderWasDeletedAreKept() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        #expect(try daemon.parley(["say", "--speaker", "a", "before the deletion"]).status == 0)
        try FileManager.default.removeItem(at: dir.appendingPathComponent("state"))
        for index in 0..<3 {
            #expect(try daemon.parley(["say", "--speaker", "a", "after the deletion \(index)"]).status == 0)
        }
        let status = try daemon.call("status", as: StatusInfo.self)
        #expect(!status.historyDegraded && status.historyPending == 0)
        daemon.stop()
        let log = (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
        #expect(log.components(separatedBy: "was deleted while parleyd ran").count == 2, "\(log)")
        let database = try AppDatabase.open(path: dir.appendingPathComponent("state/history.sqlite").path)
        let texts = try await database.search(TurnQuery(limit: 10)).map(\.sourceText).sorted()
        #expect(texts == (0..<3).map { "after the deletion \($0)" })
        try database.close()
    }

    /// Turns a full disk kept from being stored at the last exit wait in a journal (issue 16,
    /// item 4): the next start stores them and says so.
    @Test func turnsJournaledAtTheLastExitAreStoredAtStart() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("state/history.sqlite").path
        let turns = ["guardado en el diario", "también este"].enumerated().map { index, text in
            TurnRecord(
                sessionID: 0, speaker: .b, sourceLang: "es", targetLang: "en", sourceText: text, translatedText: "kept \(index)",
                confidence: nil, status: .translated, createdAt: Date(timeIntervalSinceNow: Double(index - 60)))
        }
        let journal = try HistoryJournal.spill(turns, historyPath: path, folders: [dir.appendingPathComponent("state").path])
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        let texts = try Self.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).map(\.sourceText)
        #expect(Set(texts) == Set(turns.map(\.sourceText)))
        #expect(!FileManager.default.fileExists(atPath: journal))
        daemon.stop()
        let log = (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
        #expect(log.contains("stored 2 turns kept in \(journal)"), "\(log)")
        // What people said stays out of the log.
        #expect(!log.contains("diario"))
    }

    /// SIGTERM while a really full disk holds a turn (issue 16, item 4): the history's folder is
    /// a small tmpfs filled up (needs root; skipped where `mount` is refused). The turn goes to
    /// a journal in the cache folder, the waiting `say` is told where, and the next start stores it.
    @Test(.enabled(if: canMountTmpfs, "needs root and mount (tmpfs)"))
    func aTurnAFullDiskHoldsAtSIGTERMIsStoredAtTheNextStart() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try #require(Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", state.path]), "mount worked a moment ago")
        defer { _ = Self.run("/usr/bin/umount", ["-l", state.path]) }
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        #expect(try daemon.parley(["say", "--speaker", "a", "before the disk filled up"]).status == 0)
        // Fill the disk.
        let filler = state.appendingPathComponent("filler")
        FileManager.default.createFile(atPath: filler.path, contents: nil)
        let handle = try FileHandle(forWritingTo: filler)
        let block = Data(count: 4096)
        while (try? handle.write(contentsOf: block)) != nil {}
        try? handle.close()
        let socket = daemon.socket
        // As long as a `say` may be (483 characters): more pages than a full disk gives.
        let text = String(repeating: "una frase que no cabe en un disco lleno ", count: 12) + "fin"
        let reply = Thread.detachNewThreadWithResult {
            let line = try? ControlClient(path: socket).call(RawRequest(type: "say", data: ["speaker": .string("b"), "text": .string(text)]))
            return line.map { String(decoding: $0, as: UTF8.self) }
        }
        var degraded = false
        for _ in 0..<300 where !degraded {
            let status = try daemon.call("status", as: StatusInfo.self)
            degraded = status.historyDegraded && status.historyPending == 1
            if !degraded { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(degraded, "the turn never waited for the full disk")
        daemon.stop()
        let path = state.appendingPathComponent("history.sqlite").path
        let journal = HistoryJournal.path(in: EndToEnd.sharedCache + "/parley", for: path)
        defer { try? FileManager.default.removeItem(atPath: journal) }
        #expect(FileManager.default.fileExists(atPath: journal))
        let answer = await reply.value ?? ""
        #expect(answer.contains(journal), "\(answer)")
        let log = (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
        #expect(log.contains("saved to \(journal)"), "\(log)")

        // Room again: the next start stores it.
        try FileManager.default.removeItem(at: filler)
        let restarted = try await Self.startDaemon(in: dir)
        defer { if restarted.process.isRunning { kill(restarted.process.processIdentifier, SIGKILL) } }
        let texts = try Self.decode([TurnInfo].self, try restarted.parley(["history", "--json", "--limit", "10"])).map(\.sourceText)
        #expect(Set(texts) == ["before the disk filled up", text])
        #expect(!FileManager.default.fileExists(atPath: journal))
        restarted.stop()
    }

    /// Runs a command; whether it succeeded.
    static func run(_ executable: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// kill -9 during a burst of typed turns: the database opens clean and holds every turn
    /// that was acknowledged before the kill.
    @Test func killedDuringABurstLosesNoAcknowledgedTurn() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await Self.startDaemon(in: dir)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        let acknowledged = Mutex<[Int64: String]>([:])
        let attempts = Atomic<Int>(0)
        let socket = daemon.socket
        // Three clients fire `say` as fast as they are answered (a busy daemon refuses some).
        let clients = (0..<3).map { client in
            Thread.detachNewThreadWithResult {
                for index in 0..<10_000 {
                    let text = "burst \(client)-\(index) ünïcödé 漢字"
                    attempts.add(1, ordering: .relaxed)
                    guard let line = try? ControlClient(path: socket).call(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string(text)]))
                    else { return }  // the daemon is gone
                    if let turn = try? JSONDecoder().decode(ResultReply<TurnInfo>.self, from: line).data {
                        acknowledged.withLock { $0[turn.id] = text }
                    }
                }
            }
        }
        let deadline = Date(timeIntervalSinceNow: 60)
        while acknowledged.withLock({ $0.count }) < 25 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        kill(daemon.process.processIdentifier, SIGKILL)
        daemon.process.waitUntilExit()
        for client in clients { await client.value }
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count >= 25, "only \(acked.count) turns acknowledged in \(attempts.load(ordering: .relaxed)) attempts")

        // The database opens clean and holds every acknowledged turn.
        let path = dir.appendingPathComponent("state/history.sqlite").path
        let database = try AppDatabase.open(path: path)
        #expect(database.movedAside == nil)
        #expect(try await database.integrityCheck() == "ok")
        let stored = try await database.search(TurnQuery(limit: 10_000))
        let byID = Dictionary(stored.compactMap { turn in turn.id.map { ($0, turn.sourceText) } }, uniquingKeysWith: { a, _ in a })
        for (id, text) in acked {
            #expect(byID[id] == text, "acknowledged turn \(id) (\(text)) is missing")
        }
        // One process holds a history: this one lets go before the daemon starts again.
        try database.close()
        // And the daemon starts again on it.
        let restarted = try await Self.startDaemon(in: dir)
        defer { if restarted.process.isRunning { kill(restarted.process.processIdentifier, SIGKILL) } }
        let status = try restarted.call("status", as: StatusInfo.self)
        #expect(status.historyProblem == nil)
        #expect(try restarted.parley(["say", "--speaker", "a", "after the crash"]).status == 0)
        #expect(try Self.decode([TurnInfo].self, try restarted.parley(["history", "--search", "crash", "--json"])).count == 1)
        restarted.stop()
    }
}
