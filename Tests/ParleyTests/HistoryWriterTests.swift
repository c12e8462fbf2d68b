import Foundation
import GRDB
import ParleyCore
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyHistory

/// A store that fails with a chosen SQLite error while `failing` is set, then passes writes on.
final class FaultyStore: HistoryStore {
    let database: AppDatabase
    let failing = Mutex<ResultCode?>(nil)
    let attempts = Atomic<Int>(0)

    init(_ database: AppDatabase) { self.database = database }

    func writeSession(speakerA: String, speakerB: String, at date: Date, ending previous: Int64?) throws -> SessionRecord {
        try check()
        return try database.writeSession(speakerA: speakerA, speakerB: speakerB, at: date, ending: previous)
    }

    func writeTurn(_ turn: TurnRecord, retention: Retention, now: Date) throws -> TurnRecord {
        try check()
        return try database.writeTurn(turn, retention: retention, now: now)
    }

    private func check() throws {
        attempts.add(1, ordering: .relaxed)
        if let code = failing.withLock({ $0 }) { throw DatabaseError(resultCode: code, message: "injected") }
    }
}

@Suite("History write queue")
struct HistoryWriterTests {
    private func turn(_ text: String, speaker: Speaker = .a, at seconds: TimeInterval) -> TurnRecord {
        TurnRecord(
            sessionID: 0, speaker: speaker, sourceLang: speaker == .a ? "en" : "es", targetLang: speaker == .a ? "es" : "en",
            sourceText: text, translatedText: "«\(text)»", confidence: nil, status: .translated,
            createdAt: Date(timeIntervalSince1970: seconds))
    }

    /// Polls `condition` for up to 10 s.
    private func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func turnsAreCommittedInOrderIntoTheCurrentSession() async throws {
        let database = try AppDatabase.inMemory()
        let writer = HistoryWriter(store: database, speakerA: "en", speakerB: "es")
        writer.startSession(speakerA: "en", speakerB: "es")
        let stored = Mutex<[TurnRecord]>([])
        for index in 0..<20 {
            writer.enqueue(turn("turn \(index)", at: TimeInterval(index))) { result in
                if case .success(let turn) = result { stored.withLock { $0.append(turn) } }
            }
        }
        #expect(await writer.flush(timeout: .seconds(10)))
        let ids = stored.withLock { $0.compactMap(\.id) }
        #expect(ids.count == 20)
        #expect(ids == ids.sorted())
        let session = try #require(writer.currentSessionID)
        #expect(try await database.search(TurnQuery(sessionID: session, limit: 100)).count == 20)
    }

    @Test func retriesBackOffByDoublingUpToTheLimitOnTheInjectedClock() async throws {
        let database = try AppDatabase.inMemory()
        let store = FaultyStore(database)
        let manual = ManualClock()
        // The store fails until the sixth backoff has been waited out; no real time passes.
        let writer = HistoryWriter(
            store: store, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(500), clock: ParleyClock(manual))
        store.failing.withLock { $0 = .SQLITE_FULL }
        writer.startSession(speakerA: "en", speakerB: "es")
        let stored = Task { try await writer.store(turn("after a full disk", at: 1)) }
        var waits = await manual.letSleepsPass(5)
        waits.append(await manual.nextSleep())
        store.failing.withLock { $0 = nil }
        manual.advance(by: waits[5])
        #expect(try await stored.value.id != nil)
        #expect(waits == [100, 200, 400, 500, 500, 500].map { Duration.milliseconds($0) })
        #expect(writer.health == .init(degraded: false, pending: 0, lastError: nil))
    }

    @Test func retentionByAgeUsesTheInjectedWallClock() async throws {
        let database = try AppDatabase.inMemory()
        let day: TimeInterval = 86_400
        let writer = HistoryWriter(
            store: database, retention: Retention(maxTurns: 100, maxAgeDays: 1), speakerA: "en", speakerB: "es",
            clock: ParleyClock(ManualClock(), date: { Date(timeIntervalSince1970: 10 * day) }))
        writer.startSession(speakerA: "en", speakerB: "es", at: Date(timeIntervalSince1970: 8 * day))
        _ = try await writer.store(turn("two days old", at: 8 * day))
        _ = try await writer.store(turn("an hour old", at: 10 * day - 3_600))
        let session = try #require(writer.currentSessionID)
        let kept = try await database.search(TurnQuery(sessionID: session, limit: 10)).map(\.sourceText)
        #expect(kept == ["an hour old"])
    }

    @Test func failingWritesAreKeptAndRetriedWhileDegraded() async throws {
        // Given a store whose disk is full
        let database = try AppDatabase.inMemory()
        let store = FaultyStore(database)
        let changes = Mutex<[String?]>([])
        let manual = ManualClock()
        let writer = HistoryWriter(
            store: store, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(50), clock: ParleyClock(manual),
            onHealthChange: { change in changes.withLock { $0.append(change) } })
        writer.startSession(speakerA: "en", speakerB: "es")
        _ = try await writer.store(turn("before", at: 1))
        store.failing.withLock { $0 = .SQLITE_FULL }
        let triedBefore = store.attempts.load(ordering: .relaxed)
        // When turns come in meanwhile
        let acknowledged = Atomic<Int>(0)
        for index in 0..<3 {
            writer.enqueue(turn("during \(index)", at: TimeInterval(10 + index))) { result in
                if case .success = result { acknowledged.add(1, ordering: .relaxed) }
            }
        }
        // Then nothing is acknowledged, they wait in memory, status is degraded, and retries go on:
        // four backoffs pass on the clock, and the fifth try fails too (the writer waits again)
        #expect(await manual.letSleepsPass(4) == [50, 50, 50, 50].map { Duration.milliseconds($0) })
        let wait = await manual.nextSleep()
        #expect(store.attempts.load(ordering: .relaxed) - triedBefore == 5)
        #expect(writer.health.degraded)
        #expect(writer.health.pending == 3)
        #expect(writer.health.lastError?.contains("injected") == true)
        #expect(acknowledged.load(ordering: .relaxed) == 0)
        #expect(try await database.turnCount() == 1)
        // When the disk has room again, every turn is stored, in order, and the writer recovers
        store.failing.withLock { $0 = nil }
        manual.advance(by: wait)
        #expect(await writer.flush(timeout: .seconds(10)))
        #expect(acknowledged.load(ordering: .relaxed) == 3)
        #expect(!writer.health.degraded)
        #expect(try await database.search(TurnQuery()).map(\.sourceText) == ["during 2", "during 1", "during 0", "before"])
        #expect(changes.withLock { $0.count } == 2)
        #expect(changes.withLock { $0.last } == .some(nil))
    }

    @Test func aLockedDatabaseIsRetriedToo() async throws {
        let database = try AppDatabase.inMemory()
        let store = FaultyStore(database)
        let writer = HistoryWriter(store: store, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(20))
        store.failing.withLock { $0 = .SQLITE_BUSY }
        writer.startSession(speakerA: "en", speakerB: "es")
        writer.enqueue(turn("waiting", at: 1)) { _ in }
        #expect(try await eventually { writer.health.degraded && writer.health.pending == 2 })
        #expect(writer.currentSessionID == nil)
        store.failing.withLock { $0 = nil }
        #expect(await writer.flush(timeout: .seconds(10)))
        #expect(writer.currentSessionID != nil)
        #expect(try await database.turnCount() == 1)
    }

    @Test func aFailureThatCannotPassFailsThatTurnOnly() async throws {
        let database = try AppDatabase.inMemory()
        let store = FaultyStore(database)
        let writer = HistoryWriter(store: store, speakerA: "en", speakerB: "es")
        writer.startSession(speakerA: "en", speakerB: "es")
        #expect(await writer.flush(timeout: .seconds(5)))
        store.failing.withLock { $0 = .SQLITE_CONSTRAINT }
        await #expect(throws: DatabaseError.self) { try await writer.store(turn("refused", at: 1)) }
        store.failing.withLock { $0 = nil }
        #expect(try await writer.store(turn("next", at: 2)).id != nil)
        #expect(!writer.health.degraded)
    }

    /// A real SQLITE_FULL: the database may not grow past its size (`max_page_count`), exactly
    /// what SQLite reports when the disk is full.
    @Test func aReallyFullDatabaseLosesNothing() async throws {
        let database = try AppDatabase.inMemory()
        let writer = HistoryWriter(store: database, retention: .unlimited, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(50))
        writer.startSession(speakerA: "en", speakerB: "es")
        for index in 0..<5 { _ = try await writer.store(turn("stored \(index)", at: TimeInterval(index))) }
        let pages = try await database.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try await database.limitSize(pages: pages)
        let big = String(repeating: "a long sentence that needs new pages ", count: 400)
        let done = Atomic<Int>(0)
        for index in 0..<3 {
            writer.enqueue(turn(big + "\(index)", at: TimeInterval(100 + index))) { result in
                if case .success = result { done.add(1, ordering: .relaxed) }
            }
        }
        #expect(try await eventually { writer.health.degraded })
        #expect(writer.health.lastError?.contains("full") == true, "\(writer.health.lastError ?? "")")
        #expect(try await database.turnCount() == 5)
        #expect(try await database.integrityCheck() == "ok")
        try await database.limitSize(pages: nil)
        #expect(await writer.flush(timeout: .seconds(10)))
        #expect(done.load(ordering: .relaxed) == 3)
        #expect(try await database.turnCount() == 8)
        #expect(!writer.health.degraded)
    }

    @Test func atExitWaitingWritesAreAnsweredNotLeftHanging() async throws {
        let database = try AppDatabase.inMemory()
        let store = FaultyStore(database)
        let writer = HistoryWriter(store: store, speakerA: "en", speakerB: "es", maxBackoff: .milliseconds(20))
        writer.startSession(speakerA: "en", speakerB: "es")
        #expect(await writer.flush(timeout: .seconds(5)))
        store.failing.withLock { $0 = .SQLITE_IOERR }
        let waiting = Task { try await writer.store(turn("stuck", at: 1)) }
        #expect(try await eventually { writer.health.degraded })
        #expect(await !writer.flush(timeout: .milliseconds(200)))
        #expect(writer.failPending() == 1)
        await #expect(throws: HistoryError.self) { try await waiting.value }
        // Even if the disk comes back, nothing is answered twice, and new writes are refused.
        store.failing.withLock { $0 = nil }
        // The worker has woken from its backoff and found nothing left to write.
        #expect(await writer.flush(timeout: .seconds(30)))
        await #expect(throws: HistoryError.self) { try await writer.store(turn("late", at: 2)) }
        #expect(writer.health.pending == 0)
    }

    @Test func aLongSilenceStartsANewSession() async throws {
        let database = try AppDatabase.inMemory()
        let writer = HistoryWriter(store: database, sessionGap: 30 * 60, speakerA: "en", speakerB: "es")
        writer.startSession(speakerA: "en", speakerB: "es")
        let first = try await writer.store(turn("morning", at: 0))
        let close = try await writer.store(turn("still morning", speaker: .b, at: 29 * 60))
        let later = try await writer.store(turn("afternoon", speaker: .b, at: 29 * 60 + 31 * 60))
        #expect(first.sessionID == close.sessionID)
        #expect(later.sessionID != close.sessionID)
        let sessions = try await database.export().sessions
        #expect(sessions.count == 2)
        #expect(sessions.first?.endedAt != nil)
        // Speaker b spoke Spanish: the new session keeps a = en, b = es.
        #expect(sessions.last?.speakerA == "en" && sessions.last?.speakerB == "es")
        // And a new session on request.
        let fresh = try await writer.startSessionCommitted(speakerA: "en", speakerB: "fr")
        #expect(writer.currentSessionID == fresh.id)
    }
}
