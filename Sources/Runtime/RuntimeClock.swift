/// The monotonic time the runtime measures turns with (recognition, translation, synthesis and
/// response times), read from any `Clock` with `Duration` steps: `ContinuousClock` in the
/// daemon, a clock the test moves by hand in unit tests.
///
/// Turn-taking itself never reads it: the capture timeline (samples) is the conversation's clock.
public struct RuntimeClock: Sendable {
    private let reading: @Sendable () -> Duration

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        reading = { origin.duration(to: clock.now) }
    }

    /// The daemon's clock.
    public static var continuous: RuntimeClock { RuntimeClock(ContinuousClock()) }

    /// Time since the clock was made.
    public var now: Duration { reading() }

    /// Whole milliseconds from `start` to now.
    public func milliseconds(since start: Duration) -> Int {
        let elapsed = now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
