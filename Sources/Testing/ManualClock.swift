import Synchronization

/// A clock that moves only when the test says so (`advance(by:)`), for timing turns exactly.
/// Sleepers wake when the clock passes their deadline.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [(deadline: Instant, wake: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        await withCheckedContinuation { continuation in
            let due = state.withLock { state -> Bool in
                guard deadline > state.now else { return true }
                state.sleepers.append((deadline, continuation))
                return false
            }
            if due { continuation.resume() }
        }
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
}
