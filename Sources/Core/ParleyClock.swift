import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Parley's one clock: the daemon's composition (ParleyDaemon) makes it once and hands it to
/// each part that waits or measures time (docs/architecture.md, "Time", lists the few waits
/// that stand for real time and are not on it yet): the runtime
/// (turn timings, the capture backoff), the translator chain (deadlines, retries, cool-downs),
/// the history writer (its backoff, the dates turns are kept by), the control socket (idle
/// timeout, stuck replies, drain, refusal logs) and the caption page (the wrong-code limit).
///
/// It wraps any `Clock` with `Duration` steps: `ContinuousClock` in the daemon, a clock the test
/// moves by hand (ParleyTesting's `ManualClock`) in unit tests, so a test of a 30 s idle timeout
/// takes no time at all. Its instants count from when the clock was made; `date` is the wall
/// clock the records are dated by, which a test's clock moves too.
///
/// Turn-taking itself never reads it: the capture timeline (samples) is the conversation's clock.
public struct ParleyClock: Clock, Sendable {
    /// A point in time: how long after the clock was made.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
        public static func - (lhs: Instant, rhs: Instant) -> Duration { rhs.duration(to: lhs) }
        /// Whole milliseconds from this instant to `end`: what history's timings store.
        public func milliseconds(to end: Instant) -> Int { Int(duration(to: end).milliseconds) }
    }

    private let reading: @Sendable () -> Duration
    private let sleeping: @Sendable (Duration, Duration?) async throws -> Void
    private let dating: @Sendable () -> Date
    public let minimumResolution: Duration

    /// `clock`'s time; `date` is the wall clock (nil: the date when made, moved by `clock`, as
    /// a test wants).
    public init<C: Clock>(_ clock: C, date: (@Sendable () -> Date)? = nil) where C.Duration == Duration {
        let origin = clock.now
        reading = { origin.duration(to: clock.now) }
        sleeping = { offset, tolerance in try await clock.sleep(until: origin.advanced(by: offset), tolerance: tolerance) }
        minimumResolution = clock.minimumResolution
        let made = Date()
        dating = date ?? { made.addingTimeInterval(origin.duration(to: clock.now).timeInterval) }
    }

    /// The daemon's clock: monotonic time, and the system's wall clock for dates. One for the
    /// process, so that its instants can be compared wherever they were read.
    public static let continuous = ParleyClock(ContinuousClock(), date: { Date() })

    public var now: Instant { Instant(offset: reading()) }

    /// The wall clock: when a turn was made, how old a stored one is.
    public var date: Date { dating() }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeping(deadline.offset, tolerance)
    }

    /// Whole milliseconds from `start` to now.
    public func milliseconds(since start: Instant) -> Int {
        start.milliseconds(to: now)
    }

    /// Blocks the calling thread until `duration` has passed on this clock: for a thread that
    /// has nothing else to do meanwhile (the history writer's backoff). Never call it from a task.
    public func block(for duration: Duration) {
        let done = DispatchSemaphore(value: 0)
        Task {
            try? await sleep(for: duration)
            done.signal()
        }
        done.wait()
    }
}

extension Duration {
    /// Whole milliseconds (rounded down).
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// Seconds, as a `TimeInterval`.
    public var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Waits before trying again something that failed: `first`, doubling each time up to
/// `longest`, and back to `first` once it works.
public struct Backoff: Sendable, Equatable {
    public let first: Duration
    public let longest: Duration
    /// The wait before the next try.
    public private(set) var current: Duration

    public init(first: Duration, longest: Duration) {
        self.first = first
        self.longest = max(first, longest)
        current = first
    }

    /// The wait before the next try; the one after will be twice as long, up to `longest`.
    public mutating func next() -> Duration {
        defer { current = min(current * 2, longest) }
        return current
    }

    /// It worked: the next failure waits `first` again.
    public mutating func reset() { current = first }
}

/// Something allowed at most once per `interval` on a clock: a log line said once a second
/// however often its cause comes, a pairing code tried again only a second after a wrong one.
public final class RateLimit: Sendable {
    public let interval: Duration
    private let clock: ParleyClock
    private let last = Mutex<ParleyClock.Instant?>(nil)

    public init(once interval: Duration, clock: ParleyClock) {
        self.interval = interval
        self.clock = clock
    }

    /// Whether it may happen now: it never happened, or last `interval` ago or more.
    public var allows: Bool {
        let now = clock.now
        return last.withLock { last in last.map { now - $0 >= interval } ?? true }
    }

    /// It happened now.
    public func record() {
        let now = clock.now
        last.withLock { $0 = now }
    }

    /// Whether it may happen now, and if so, that it did.
    public func take() -> Bool {
        let now = clock.now
        return last.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
