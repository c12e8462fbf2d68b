import Foundation
import GRDB
import ParleyCore
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyHistory
@testable import ParleyDaemon
import Logging

/// A translated English turn at `seconds` after 1970.
func historyTurn(_ text: String, at seconds: TimeInterval) -> TurnRecord {
    TurnRecord(
        sessionID: 0, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: text, translatedText: "«\(text)»",
        confidence: nil, status: .translated, createdAt: Date(timeIntervalSince1970: seconds))
}

/// The history at `path` and a writer on it (quick retries), with a session started.
func openWriter(_ path: String) throws -> (AppDatabase, HistoryWriter) {
    let database = try AppDatabase.open(path: path)
    let writer = HistoryWriter(store: database, retention: .unlimited, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(20))
    writer.startSession(speakerA: "en", speakerB: "es")
    return (database, writer)
}

/// A new temporary folder whose name starts with `prefix`.
func historyFolder(prefix: String) throws -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}

/// The history file, or its folder, deleted under a running writer (issue 16, item 2).
@Suite("History file deleted while running", .startsProcesses)
struct HistoryFileTests {
    private func turn(_ text: String, at seconds: TimeInterval) -> TurnRecord { historyTurn(text, at: seconds) }

    private func temporaryFolder() throws -> String { try historyFolder(prefix: "parley-history-") }

    /// Polls `condition` for up to 10 s.
    private func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Stores turns after `delete` ran under the writer; closes the database (as at exit) and
    /// returns what a new start finds at the path.
    private func storeAfter(_ delete: (String, String) throws -> Void) async throws -> (found: [String], recreated: Int) {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/parley"
        let path = folder + "/history.sqlite"
        let database = try AppDatabase.open(path: path)
        let recreated = Atomic<Int>(0)
        let writer = HistoryWriter(
            store: database, retention: .unlimited, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(20),
            onFileRecreated: { recreated.add(1, ordering: .relaxed) })
        writer.startSession(speakerA: "en", speakerB: "es")
        _ = try await writer.store(turn("before", at: 1))
        try delete(folder, path)
        for index in 0..<5 {
            let stored = try await writer.store(turn("after \(index)", at: TimeInterval(10 + index)))
            #expect(stored.id != nil)
        }
        #expect(!writer.health.degraded)
        try database.close()
        let restarted = try AppDatabase.open(path: path)
        #expect(try await restarted.integrityCheck() == "ok")
        let found = try await restarted.search(TurnQuery(limit: 100)).map(\.sourceText)
        try restarted.close()
        return (found.sorted(), recreated.load(ordering: .relaxed))
    }

    @Test func turnsAcknowledgedAfterTheFileWasDeletedAreInTheFileAtThePath() async throws {
        let (found, recreated) = try await storeAfter { _, path in try FileManager.default.removeItem(atPath: path) }
        // "before" went with the deleted file; every turn acknowledged since is there.
        #expect(found == (0..<5).map { "after \($0)" })
        #expect(recreated == 1)
    }

    @Test func turnsAcknowledgedAfterTheFolderWasDeletedAreInTheFileAtThePath() async throws {
        let (found, recreated) = try await storeAfter { folder, _ in try FileManager.default.removeItem(atPath: folder) }
        #expect(found == (0..<5).map { "after \($0)" })
        #expect(recreated == 1)
    }

    @Test func aFileThatCannotBeMadeAgainDegradesUntilItCan() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/parley"
        let path = folder + "/history.sqlite"
        let (database, writer) = try openWriter(path)
        _ = try await writer.store(turn("before", at: 1))
        // The folder is gone and a plain file stands where it was: nothing can be made there.
        try FileManager.default.removeItem(atPath: folder)
        #expect(FileManager.default.createFile(atPath: folder, contents: Data("in the way".utf8)))
        let acknowledged = Atomic<Int>(0)
        for index in 0..<3 {
            writer.enqueue(turn("waiting \(index)", at: TimeInterval(10 + index))) { result in
                if case .success = result { acknowledged.add(1, ordering: .relaxed) }
            }
        }
        #expect(try await eventually { writer.health.degraded })
        #expect(writer.health.pending == 3)
        #expect(writer.health.lastError?.contains("cannot be made again") == true, "\(writer.health.lastError ?? "")")
        #expect(acknowledged.load(ordering: .relaxed) == 0)
        // Once the way is clear, the folder and file are made again and the turns stored.
        try FileManager.default.removeItem(atPath: folder)
        #expect(await writer.flush(timeout: .seconds(10)))
        #expect(acknowledged.load(ordering: .relaxed) == 3)
        #expect(!writer.health.degraded)
        try database.close()
        let restarted = try AppDatabase.open(path: path)
        #expect(try await restarted.search(TurnQuery(limit: 10)).map(\.sourceText).sorted() == ["waiting 0", "waiting 1", "waiting 2"])
        try restarted.close()
    }
}

/// Turns still waiting for a full disk at exit (SIGTERM) go to a journal and are stored at the
/// next start (issue 16, item 4). The disk is made full as in HistoryWriterTests: the database
/// may not grow past its size (`max_page_count`), exactly what SQLite reports for a full disk.
@Suite("History journal at exit", .startsProcesses)
struct HistoryJournalTests {
    private func turn(_ text: String, at seconds: TimeInterval) -> TurnRecord {
        TurnRecord(
            sessionID: 0, speaker: .b, sourceLang: "es", targetLang: "en", sourceText: text, translatedText: "«\(text)»",
            confidence: 0.5, status: .translated, createdAt: Date(timeIntervalSince1970: seconds))
    }

    private func temporaryFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func turnsWaitingOnAFullDiskAtExitAreSavedAndStoredAtTheNextStart() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let folder = root + "/parley"
        let path = folder + "/history.sqlite"
        let (database, writer) = try openWriter(path)
        for index in 0..<2 { _ = try await writer.store(turn("stored \(index)", at: TimeInterval(index))) }
        let pages = try await database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try await database.limitSize(pages: pages)
        let big = String(repeating: "una frase larga que necesita páginas nuevas ", count: 400)
        let answers = Mutex<[String]>([])
        for index in 0..<3 {
            writer.enqueue(turn(big + "\(index)", at: TimeInterval(100 + index))) { result in
                if case .failure(let error) = result { answers.withLock { $0.append("\(error)") } }
            }
        }
        #expect(await !writer.flush(timeout: .milliseconds(300)))
        #expect(writer.health.degraded)
        // At exit the waiting turns go to the journal, beside the database (only it is full).
        let journal = HistoryJournal.path(in: folder, for: path)
        let given = writer.failPending { turns in try? HistoryJournal.spill(turns, historyPath: path, folders: [folder]) }
        #expect(given == 3)
        #expect(answers.withLock { $0.count == 3 && $0.allSatisfy { $0.contains(journal) } }, "\(answers.withLock { $0 })")
        let lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        try database.close()

        // The next start stores them in a session of their own and removes the journal.
        let restarted = try AppDatabase.open(path: path)
        let restored = HistoryJournal.restore(into: restarted, historyPath: path, folders: [folder, root])
        #expect(restored == [HistoryJournal.Restored(journal: journal, stored: 3)])
        #expect(!FileManager.default.fileExists(atPath: journal))
        let turns = try await restarted.search(TurnQuery(limit: 10))
        #expect(turns.count == 5)
        let saved = turns.filter { $0.sourceText.hasPrefix(big) }
        #expect(saved.map(\.sourceText).sorted() == (0..<3).map { big + "\($0)" })
        #expect(saved.allSatisfy { $0.speaker == .b && $0.confidence == 0.5 && $0.createdAt.timeIntervalSince1970 >= 100 })
        let sessions = try await restarted.export().sessions
        #expect(sessions.count == 2)
        #expect(sessions.last?.speakerA == "en" && sessions.last?.speakerB == "es")
        #expect(try await restarted.integrityCheck() == "ok")
        // Nothing is stored twice.
        #expect(HistoryJournal.restore(into: restarted, historyPath: path, folders: [folder]).isEmpty)
        try restarted.close()
    }

    @Test func aJournalKeepsWordsAndDetectionInLinesOldAndNew() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/history.sqlite"
        let words = [WordConfidence(text: "hola", confidence: 0.9)]
        let detection = SpeakerDetection(decidedBy: .audio, scores: ["en": -6, "es": -3.5], rivalLanguage: "en", rivalText: "ola")
        // A line as earlier versions wrote it (the words and the detection strings of JSON)...
        let old = #"""
            {"confidence":0.5,"created_at":1000250,"detection":"{\"scores\":{\"es\":-3.5,\"en\":-6},\"decided_by\":\"audio\",\"rival_language\":\"en\",\"rival_text\":\"ola\"}","favorite":false,"low_confidence":false,"session_id":0,"source_lang":"es","source_text":"hola","speaker":"b","status":"translated","target_lang":"en","translated_text":"«hola»","word_confidence":"[{\"text\":\"hola\",\"confidence\":0.9}]"}
            """#
        try Data((old + "\n").utf8).write(to: URL(fileURLWithPath: HistoryJournal.path(in: root, for: path)))
        // ...and one written now, after it.
        var new = turn("adiós", at: 1_001)
        new.words = [WordConfidence(text: "adiós", confidence: 0.8)]
        new.detection = detection
        _ = try HistoryJournal.spill([new], historyPath: path, folders: [root])
        let database = try AppDatabase.open(path: path)
        #expect(HistoryJournal.restore(into: database, historyPath: path, folders: [root]).first?.stored == 2)
        let turns = try await database.search(TurnQuery(limit: 10))
        #expect(turns.map(\.sourceText) == ["adiós", "hola"])
        #expect(turns.map(\.words) == [new.words, words])
        #expect(turns.map(\.detection) == [detection, detection])
        #expect(turns.last?.createdAt == Date(timeIntervalSince1970: 1_000.25))
        try database.close()
    }

    @Test func theJournalGoesToTheNextFolderWhenOneCannotHoldIt() throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/data/history.sqlite"
        // The history's folder is a plain file here: nothing can be written in it.
        #expect(FileManager.default.createFile(atPath: root + "/data", contents: Data()))
        let saved = try HistoryJournal.spill([turn("hola", at: 1)], historyPath: path, folders: [root + "/data", root + "/cache"])
        #expect(saved == HistoryJournal.path(in: root + "/cache", for: path))
        #expect(FileManager.default.fileExists(atPath: saved))
        // What people said is readable by parleyd's user only.
        let mode = try FileManager.default.attributesOfItem(atPath: saved)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // Another history's journal is not taken.
        #expect(HistoryJournal.path(in: root + "/cache", for: root + "/other/history.sqlite") != saved)
    }

    @Test func aJournalThatCannotBeStoredYetStaysForTheNextStart() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/history.sqlite"
        let journal = try HistoryJournal.spill(
            [turn(String(repeating: "palabras ", count: 4000), at: 1)], historyPath: path, folders: [root])
        let database = try AppDatabase.open(path: path)
        let pages = try await database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try await database.limitSize(pages: pages)
        let restored = HistoryJournal.restore(into: database, historyPath: path, folders: [root])
        #expect(restored.count == 1)
        #expect(restored.first?.stored == 0)
        #expect(restored.first?.problem?.contains("full") == true, "\(restored)")
        #expect(FileManager.default.fileExists(atPath: journal))
        #expect(try await database.turnCount() == 0)
        try database.close()
    }
}

/// SQLite maps `<history>-shm` into memory in WAL mode; when that file cannot be written or
/// grown (made immutable), touching the map kills the process with SIGBUS (issue 16, item 3).
/// The history keeps its WAL index in the heap instead, so there is no such file to fail.
@Suite("History WAL index", .startsProcesses)
struct HistoryWALIndexTests {
    private func turn(_ text: String, at seconds: TimeInterval) -> TurnRecord { historyTurn(text, at: seconds) }

    private func temporaryFolder() throws -> String { try historyFolder(prefix: "parley-shm-") }

    /// Opens the history at `path`, stores `count` turns (enough to grow a WAL index past its
    /// first page) and reads them back.
    private func storeAndRead(_ path: String, count: Int) async throws -> Int {
        let database = try AppDatabase.open(path: path)
        let writer = HistoryWriter(store: database, retention: .unlimited, speakerA: "en", speakerB: "es")
        writer.startSession(speakerA: "en", speakerB: "es")
        for index in 0..<count {
            writer.enqueue(turn(String(repeating: "words ", count: 50) + "\(index)", at: TimeInterval(index))) { _ in }
        }
        #expect(await writer.flush(timeout: .seconds(30)))
        let stored = try await database.turnCount()
        try database.close()
        return stored
    }

    @Test func noSharedMemoryFileIsMadeOrMapped() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/history.sqlite"
        let database = try AppDatabase.open(path: path)
        _ = try await database.writeSession(speakerA: "en", speakerB: "es", at: Date(), ending: nil)
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        try database.close()
    }

    @Test func aSharedMemoryFileThatCannotBeWrittenIsNeverTouched() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/history.sqlite"
        // A folder where `-shm` would go: nobody, root included, can open, write or map it.
        try FileManager.default.createDirectory(atPath: path + "-shm", withIntermediateDirectories: false)
        #expect(try await storeAndRead(path, count: 400) == 400)
    }

    /// The case of the report: an immutable `-shm` (needs root and a file system with `chattr`).
    @Test(.enabled(if: Self.canChattr, "needs root and a file system with chattr"))
    func anImmutableSharedMemoryFileIsNeverTouched() async throws {
        let root = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/history.sqlite"
        #expect(FileManager.default.createFile(atPath: path + "-shm", contents: Data()))
        try #require(Self.chattr("+i", path + "-shm"), "chattr worked a moment ago")
        defer { _ = Self.chattr("-i", path + "-shm") }
        #expect(try await storeAndRead(path, count: 400) == 400)
        // And reopened: the WAL of the last run is read without the file either.
        #expect(try await storeAndRead(path, count: 10) == 410)
    }

    /// Whether a file here can be made immutable (root, and a file system with chattr).
    static let canChattr: Bool = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-chattr-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: path, contents: Data()) else { return false }
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard chattr("+i", path) else { return false }
        return chattr("-i", path)
    }()

    private static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

/// parleyd's exit path: `Daemon.flushHistory` journals what a full disk holds, except when
/// history is off (then nothing said may go to disk).
@Suite("History flush at exit", .startsProcesses)
struct HistoryFlushAtExitTests {
    final class Answers: Sendable {
        let list = Mutex<[String]>([])
    }

    private func fullWriter(_ path: String) async throws -> (AppDatabase, HistoryWriter, Answers) {
        let (database, writer) = try openWriter(path)
        #expect(await writer.flush(timeout: .seconds(10)))
        let pages = try await database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try await database.limitSize(pages: pages)
        let answers = Answers()
        for index in 0..<2 {
            let text = String(repeating: "an utterance that needs pages ", count: 300) + "\(index)"
            let turn = TurnRecord(
                sessionID: 0, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: text, translatedText: nil, confidence: nil,
                status: .untranslated, createdAt: Date(timeIntervalSince1970: TimeInterval(index)))
            writer.enqueue(turn) { result in
                if case .failure(let error) = result { answers.list.withLock { $0.append("\(error)") } }
            }
        }
        return (database, writer, answers)
    }

    @Test func turnsAFullDiskHoldsAtExitGoToTheJournal() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("parley-flush-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/state/history.sqlite"
        let (database, writer, answers) = try await fullWriter(path)
        await Daemon.flushHistory(writer, journal: (path, [root + "/state"]), timeout: .milliseconds(300), logger: Logger(label: "test"))
        let journal = HistoryJournal.path(in: root + "/state", for: path)
        #expect(FileManager.default.fileExists(atPath: journal))
        #expect(answers.list.withLock { $0.count == 2 && $0.allSatisfy { $0.contains(journal) } }, "\(answers.list.withLock { $0 })")
        try database.close()
    }

    @Test func withHistoryOffNothingIsJournaled() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("parley-flush-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/state/history.sqlite"
        let (database, writer, answers) = try await fullWriter(path)
        await Daemon.flushHistory(writer, journal: nil, timeout: .milliseconds(300), logger: Logger(label: "test"))
        #expect((try FileManager.default.contentsOfDirectory(atPath: root + "/state")).allSatisfy { !$0.contains("pending") })
        #expect(answers.list.withLock { $0.count == 2 && $0.allSatisfy { $0.contains("was not stored") } })
        try database.close()
    }
}
