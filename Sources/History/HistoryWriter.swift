import Foundation
import GRDB
import ParleyCore
import Synchronization

/// Where `HistoryWriter` stores things, synchronously, on the writer's own queue. `AppDatabase`
/// is the real one; tests wrap it to inject faults.
public protocol HistoryStore: Sendable {
    func writeSession(speakerA: String, speakerB: String, at date: Date, ending previous: Int64?) throws -> SessionRecord
    func writeTurn(_ turn: TurnRecord, retention: Retention, now: Date) throws -> TurnRecord
    /// Makes sure the store still writes to the file at its path, making it again if it was
    /// deleted; returns the file's generation, which changes each time it is made again
    /// (`AppDatabase.checkFile`).
    func checkFile() throws -> Int
}

extension HistoryStore {
    /// A store with no file of its own never loses it.
    public func checkFile() throws -> Int { 0 }
}

/// The history write queue. Writes never block the caller: `enqueue` returns at once and one
/// worker, on a dispatch queue of its own (not the concurrency pool, so no busy task can
/// delay it), commits items in order. A write that fails for a reason that can pass (disk full,
/// database locked or busy, I/O error) keeps the item in memory and retries it with backoff
/// (0.1 s, or `maxBackoff` if shorter, doubling to `maxBackoff`); meanwhile the writer is
/// `degraded`. Nothing already stored is touched by a failure.
///
/// The writer also keeps the current session: a turn that comes more than `sessionGap` after
/// the previous one starts a new session first.
///
/// Before and after each commit the worker checks that the database is still the file at its
/// path (`HistoryStore.checkFile`, one `stat`). When the file or its folder was deleted, the
/// store makes it again; the worker then starts a session there and writes the item again, so
/// an item is acknowledged only once a check after its commit proved it is in the file at the
/// path. A file that cannot be made again is a failure that can pass: degraded, retried.
public final class HistoryWriter: Sendable {
    /// What clients see in `status`.
    public struct Health: Sendable, Equatable {
        /// Writes are failing and being retried.
        public var degraded: Bool
        /// Items waiting to be committed.
        public var pending: Int
        /// The last write failure while degraded.
        public var lastError: String?
    }

    enum Item: Sendable {
        case session(speakerA: String, speakerB: String, at: Date, done: @Sendable (Result<SessionRecord, any Error>) -> Void)
        case turn(TurnRecord, done: @Sendable (Result<TurnRecord, any Error>) -> Void)

        func fail(_ error: any Error) {
            switch self {
            case .session(_, _, _, let done): done(.failure(error))
            case .turn(_, let done): done(.failure(error))
            }
        }
    }

    struct State {
        /// Items in order, each with a number, so the worker never finishes an item that
        /// `failPending` already answered.
        var queue: [(number: Int, item: Item)] = []
        var nextNumber = 0
        /// After `failPending`: new items fail at once instead of waiting forever.
        var closed = false
        var draining = false
        var lastError: String?
        var sessionID: Int64?
        /// The file generation (`HistoryStore.checkFile`) `sessionID` was written in.
        var sessionGeneration: Int?
        /// The last file generation seen.
        var fileGeneration: Int?
        /// When the last turn was enqueued, for the session gap.
        var lastTurnAt: Date?
        var speakers: (a: String, b: String)
        /// Whoever waits for the queue to be empty and the worker idle (`flush`).
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let store: any HistoryStore
    private let retention: Retention
    private let sessionGap: TimeInterval
    private let maxBackoff: Duration
    private let state: Mutex<State>
    private let worker = DispatchQueue(label: "parley.history")
    /// Told when the writer becomes degraded (with the error) or recovers (nil).
    private let onHealthChange: @Sendable (String?) -> Void
    /// The backoff is waited out on it (the worker's thread blocks: it has nothing else to do
    /// meanwhile), and its date is the wall clock retention by age and new sessions go by.
    private let clock: ParleyClock
    /// Told when the history file was found deleted and made again.
    private let onFileRecreated: @Sendable () -> Void

    /// `clock` is the daemon's by default; a test's drives retries and retention without waiting.
    public init(
        store: any HistoryStore, retention: Retention = Retention(), sessionGap: TimeInterval = 30 * 60, speakerA: String,
        speakerB: String, maxBackoff: Duration = .seconds(5), clock: ParleyClock = .continuous,
        onHealthChange: @escaping @Sendable (String?) -> Void = { _ in },
        onFileRecreated: @escaping @Sendable () -> Void = {}
    ) {
        self.onFileRecreated = onFileRecreated
        self.clock = clock
        self.store = store
        self.retention = retention
        self.sessionGap = sessionGap
        self.maxBackoff = maxBackoff
        self.onHealthChange = onHealthChange
        self.state = Mutex(State(speakers: (speakerA, speakerB)))
    }

    public var health: Health {
        state.withLock { Health(degraded: $0.lastError != nil, pending: $0.queue.count, lastError: $0.lastError) }
    }

    /// The session new turns go to; nil until the first session is committed.
    public var currentSessionID: Int64? {
        state.withLock { $0.sessionID }
    }

    // MARK: - Enqueueing

    /// Starts a new session (ending the current one) with these languages; `done` is told once
    /// it is committed.
    public func startSession(
        speakerA: String, speakerB: String, at date: Date? = nil,
        done: @escaping @Sendable (Result<SessionRecord, any Error>) -> Void = { _ in }
    ) {
        let (start, closed) = state.withLock { state in
            guard !state.closed else { return (false, true) }
            state.speakers = (speakerA, speakerB)
            state.lastTurnAt = nil
            Self.append(.session(speakerA: speakerA, speakerB: speakerB, at: date ?? clock.date, done: done), to: &state)
            return (Self.claimDrain(&state), false)
        }
        if closed { done(.failure(Self.closedError)) }
        if start { worker.async { self.drain() } }
    }

    /// Starts a new session and waits until it is committed.
    public func startSessionCommitted(speakerA: String, speakerB: String) async throws -> SessionRecord {
        try await withCheckedThrowingContinuation { continuation in
            startSession(speakerA: speakerA, speakerB: speakerB) { continuation.resume(with: $0) }
        }
    }

    /// Queues a turn for the current session (its `sessionID` is filled in when it is written);
    /// `done` is told the committed turn, which for a repeat of the previous turn is the stored
    /// one.
    public func enqueue(_ turn: TurnRecord, done: @escaping @Sendable (Result<TurnRecord, any Error>) -> Void) {
        let (start, closed) = state.withLock { state in
            guard !state.closed else { return (false, true) }
            if let last = state.lastTurnAt, turn.createdAt.timeIntervalSince(last) > sessionGap {
                let (a, b) = turn.languages
                state.speakers = (a, b)
                Self.append(.session(speakerA: a, speakerB: b, at: turn.createdAt, done: { _ in }), to: &state)
            }
            state.lastTurnAt = turn.createdAt
            Self.append(.turn(turn, done: done), to: &state)
            return (Self.claimDrain(&state), false)
        }
        if closed { done(.failure(Self.closedError)) }
        if start { worker.async { self.drain() } }
    }

    /// Queues a turn and waits until it is committed.
    public func store(_ turn: TurnRecord) async throws -> TurnRecord {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(turn) { continuation.resume(with: $0) }
        }
    }

    /// Waits until the queue is empty, at most `timeout`; false if items are still pending.
    public func flush(timeout: Duration) async -> Bool {
        _ = try? await clock.withDeadline(timeout, "history's flush") { await self.idle() }
        return state.withLock { $0.queue.isEmpty }
    }

    /// Returns once nothing is queued and the worker is not writing.
    private func idle() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard !state.queue.isEmpty || state.draining else { return true }
                state.idleWaiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Wakes whoever waits for the writer to be idle, when it is (under the lock).
    private static func takeIdleWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard state.queue.isEmpty, !state.draining else { return [] }
        defer { state.idleWaiters = [] }
        return state.idleWaiters
    }

    /// At exit, after `flush`: refuses new items and answers every item still waiting with a
    /// failure (so nobody waits for it forever). The turns among them are first handed to
    /// `save`, which keeps them elsewhere (`HistoryJournal.spill`) and returns where, or nil;
    /// the failure then says where they went. Returns how many items were given up.
    @discardableResult
    public func failPending(saving save: ([TurnRecord]) -> String? = { _ in nil }) -> Int {
        let (abandoned, idle) = state.withLock { state in
            state.closed = true
            let items = state.queue.map(\.item)
            state.queue.removeAll()
            return (items, Self.takeIdleWaiters(&state))
        }
        for waiter in idle { waiter.resume() }
        let turns = abandoned.compactMap { item -> TurnRecord? in
            if case .turn(let turn, _) = item { return turn }
            return nil
        }
        let error = (turns.isEmpty ? nil : save(turns)).map {
            HistoryError("the daemon is stopping and history could not be written; the turn was saved to \($0) and is stored at the next start")
        }
        for item in abandoned { item.fail(error ?? Self.closedError) }
        return abandoned.count
    }

    static let closedError = HistoryError("the daemon is stopping and history could not be written; the turn was not stored")

    private static func append(_ item: Item, to state: inout State) {
        state.queue.append((state.nextNumber, item))
        state.nextNumber += 1
    }

    private static func claimDrain(_ state: inout State) -> Bool {
        guard !state.draining else { return false }
        state.draining = true
        return true
    }

    // MARK: - The worker

    /// On `worker`: commits the queue in order, retrying what fails for a passing reason.
    private func drain() {
        var backoff = Backoff(first: min(.milliseconds(100), maxBackoff), longest: maxBackoff)
        while true {
            let (next, idle) = state.withLock { state -> ((Int, Item, Int64?)?, [CheckedContinuation<Void, Never>]) in
                guard let first = state.queue.first else {
                    state.draining = false
                    return (nil, Self.takeIdleWaiters(&state))
                }
                return ((first.number, first.item, state.sessionID), [])
            }
            guard let (number, item, previousSession) = next else {
                for waiter in idle { waiter.resume() }
                return
            }
            do {
                let generation = try checkedGeneration()
                switch item {
                case .session(let a, let b, let date, let done):
                    // A session of a deleted file is not ended in the new one (its id may be another's there).
                    let current = state.withLock { $0.sessionGeneration == generation } ? previousSession : nil
                    let session = try store.writeSession(speakerA: a, speakerB: b, at: date, ending: current)
                    // Written to a file deleted meanwhile: again, in the new one.
                    guard try checkedGeneration() == generation else { continue }
                    if committed(number, { $0.sessionID = session.id; $0.sessionGeneration = generation }) { done(.success(session)) }
                case .turn(var turn, let done):
                    guard var sessionID = previousSession else {
                        // No session could be written yet: the first item (the session) failed for good.
                        if committed(number) { done(.failure(HistoryError("no session to store the turn in"))) }
                        continue
                    }
                    let (speakers, sessionGeneration) = state.withLock { ($0.speakers, $0.sessionGeneration) }
                    if sessionGeneration != generation {
                        // The file was made again: its turns need a session there.
                        let session = try store.writeSession(speakerA: speakers.a, speakerB: speakers.b, at: turn.createdAt, ending: nil)
                        guard let id = session.id else { throw HistoryError("the new session has no id") }
                        state.withLock { $0.sessionID = id; $0.sessionGeneration = generation }
                        sessionID = id
                    }
                    turn.sessionID = sessionID
                    let stored = try store.writeTurn(turn, retention: retention, now: clock.date)
                    guard try checkedGeneration() == generation else { continue }
                    if committed(number) { done(.success(stored)) }
                }
                backoff.reset()
            } catch where Self.isPassing(error) {
                let message = "\(error)"
                let first = state.withLock { state in
                    defer { state.lastError = message }
                    return state.lastError == nil
                }
                if first { onHealthChange(message) }
                clock.block(for: backoff.next())
            } catch {
                // A failure that retrying cannot mend: give up on this item only.
                if committed(number) { item.fail(error) }
            }
        }
    }

    /// `store.checkFile()`, telling `onFileRecreated` when the generation changed.
    private func checkedGeneration() throws -> Int {
        let generation = try store.checkFile()
        let changed = state.withLock { state in
            defer { state.fileGeneration = generation }
            return state.fileGeneration.map { $0 != generation } ?? false
        }
        if changed { onFileRecreated() }
        return generation
    }

    /// Removes item `number` from the head of the queue after it was handled, and leaves the
    /// degraded state. False when `failPending` already answered it.
    private func committed(_ number: Int, _ update: (inout State) -> Void = { _ in }) -> Bool {
        let (mine, recovered) = state.withLock { state -> (Bool, Bool) in
            update(&state)
            defer { state.lastError = nil }
            guard state.queue.first?.number == number else { return (false, state.lastError != nil) }
            state.queue.removeFirst()
            return (true, state.lastError != nil)
        }
        if recovered { onHealthChange(nil) }
        return mine
    }

    /// Failures that pass: a full disk, a lock held by someone else, an I/O error.
    static func isPassing(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_FULL, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PROTOCOL,
            .SQLITE_NOMEM:
            return true
        default:
            return false
        }
    }
}
