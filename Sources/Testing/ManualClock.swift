import ParleyCore
import Synchronization

/// A clock that moves only when the test says so (`advance(by:)`), for timing turns, idle
/// timeouts, drains and backoffs exactly, without waiting. Sleepers wake when the clock passes
/// their deadline. `ParleyClock(manual)` is what the code under test is given.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var wake: CheckedContinuation<Void, Never>
        /// Already handed to `nextSleep`.
        var announced = false
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        /// Tests waiting in `nextSleep`, by id.
        var watchers: [(id: Int, continuation: CheckedContinuation<Duration, Never>)] = []
        var nextID = 0
        /// Sleeps cancelled before they began.
        var cancelled: Set<Int> = []
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// Returns at `deadline`, or at once, throwing, when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (due, watcher) = state.withLock { state -> (Bool, (CheckedContinuation<Duration, Never>, Duration)?) in
                    guard deadline > state.now, !state.cancelled.contains(id) else { return (true, nil) }
                    var sleeper = Sleeper(id: id, deadline: deadline, wake: continuation)
                    var watcher: (CheckedContinuation<Duration, Never>, Duration)?
                    if !state.watchers.isEmpty {
                        sleeper.announced = true
                        watcher = (state.watchers.removeFirst().continuation, state.now.duration(to: deadline))
                    }
                    state.sleepers.append(sleeper)
                    return (false, watcher)
                }
                if due { continuation.resume() }
                if let (watcher, wait) = watcher { watcher.resume(returning: wait) }
            }
        } onCancel: {
            let wake = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index).wake
            }
            wake?.resume()
        }
        state.withLock { _ = $0.cancelled.remove(id) }
        try Task.checkCancellation()
    }

    /// Moves the clock forward and wakes whoever slept until then.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.map(\.wake)
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        due.forEach { $0.resume() }
    }

    /// Waits until the code under test sleeps on this clock (a sleep not handed out before),
    /// and returns how long that sleep is from now: the test then knows what is waited for,
    /// and moves the clock past it when it chooses. A test cancelled meanwhile (its time limit
    /// ran out: the code under test never slept again) gets `.zero` at once instead of hanging.
    public func nextSleep() async -> Duration {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Duration? in
                    // Checked under the lock the cancellation handler takes: cancelled before
                    // this, it is seen here; after, the handler finds the watcher.
                    if Task.isCancelled { return .zero }
                    guard let index = state.sleepers.firstIndex(where: { !$0.announced }) else {
                        state.watchers.append((id, continuation))
                        return nil
                    }
                    state.sleepers[index].announced = true
                    return state.now.duration(to: state.sleepers[index].deadline)
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let watcher = state.withLock { state in
                state.watchers.firstIndex { $0.id == id }.map { state.watchers.remove(at: $0).continuation }
            }
            watcher?.resume(returning: .zero)
        }
    }

    /// Lets the next `count` sleeps pass, one at a time, in the order they began: each is
    /// waited for (`nextSleep`), then the clock is moved to its end. Returns how long they were.
    public func letSleepsPass(_ count: Int) async -> [Duration] {
        var waits: [Duration] = []
        for _ in 0..<count {
            let wait = await nextSleep()
            waits.append(wait)
            advance(by: wait)
        }
        return waits
    }

    /// How many sleep on this clock now.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }
}
