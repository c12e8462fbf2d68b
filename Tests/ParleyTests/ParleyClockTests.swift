import Foundation
import ParleyCore
import ParleyTesting
import Testing

/// The daemon's one clock and the timing rules built on it, on a clock the test moves.
@Suite("Clock")
struct ParleyClockTests {
    @Test func itReadsTheClockItWrapsFromWhenItWasMade() async throws {
        let manual = ManualClock()
        manual.advance(by: .seconds(5))
        let clock = ParleyClock(manual)
        #expect(clock.now == ParleyClock.Instant(offset: .zero))
        manual.advance(by: .milliseconds(1_250))
        #expect(clock.now - ParleyClock.Instant(offset: .zero) == .milliseconds(1_250))
        #expect(clock.milliseconds(since: ParleyClock.Instant(offset: .milliseconds(250))) == 1_000)
        // A sleep ends when the wrapped clock passes its deadline.
        let slept = Task { try await clock.sleep(for: .seconds(2)) }
        #expect(await manual.nextSleep() == .seconds(2))
        manual.advance(by: .seconds(2))
        try await slept.value
    }

    @Test func aSleepOnTheManualClockEndsWhenItsTaskIsCancelled() async {
        let manual = ManualClock()
        let clock = ParleyClock(manual)
        let slept = Task { try await clock.sleep(for: .seconds(30)) }
        _ = await manual.nextSleep()
        slept.cancel()
        #expect(await slept.result.isFailure)
        #expect(manual.sleepers == 0)
    }

    @Test func aTestWaitingForASleepThatNeverComesIsFreedWhenCancelled() async {
        let manual = ManualClock()
        // Cancelled while it waits (as a test's time limit cancels it), or just before: it
        // returns, with zero, either way.
        let waiting = Task { await manual.nextSleep() }
        await Task.yield()
        waiting.cancel()
        #expect(await waiting.value == .zero)
        // Cancelled before it waits: it returns at once.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await manual.nextSleep()
        }
        #expect(await early.value == .zero)
        // A sleep that begins afterwards is still handed to the next test that waits.
        let clock = ParleyClock(manual)
        let slept = Task { try await clock.sleep(for: .seconds(3)) }
        #expect(await manual.nextSleep() == .seconds(3))
        manual.advance(by: .seconds(3))
        #expect(await !slept.result.isFailure)
    }

    @Test func itsDateIsTheWallClockMovedByTheClockItWraps() {
        let manual = ManualClock()
        let clock = ParleyClock(manual)
        let made = clock.date
        manual.advance(by: .seconds(3_600))
        #expect(clock.date.timeIntervalSince(made) == 3_600)
        let fixed = Date(timeIntervalSince1970: 1_000_000)
        #expect(ParleyClock(manual, date: { fixed }).date == fixed)
    }

    @Test func blockingWaitsOnTheClock() async {
        let manual = ManualClock()
        let clock = ParleyClock(manual)
        // On a thread of its own, as the history writer's worker.
        let blocked = Task {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    clock.block(for: .milliseconds(700))
                    continuation.resume(returning: clock.now)
                }
            }
        }
        #expect(await manual.nextSleep() == .milliseconds(700))
        manual.advance(by: .milliseconds(700))
        #expect(await blocked.value == ParleyClock.Instant(offset: .milliseconds(700)))
    }

    @Test func aBackoffDoublesUpToItsLongestAndStartsAgainOnceItWorks() {
        var backoff = Backoff(first: .milliseconds(500), longest: .seconds(2))
        #expect((0..<5).map { _ in backoff.next() } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2)])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(500))
    }

    @Test func aRateLimitAllowsOnceAnIntervalOnTheClock() {
        let manual = ManualClock()
        let limit = RateLimit(once: .seconds(1), clock: ParleyClock(manual))
        #expect(limit.allows)
        #expect(limit.take())
        #expect(!limit.take(), "at once again")
        manual.advance(by: .milliseconds(999))
        #expect(!limit.allows)
        #expect(!limit.take())
        manual.advance(by: .milliseconds(1))
        #expect(limit.allows)
        limit.record()
        #expect(!limit.allows, "recorded now")
        manual.advance(by: .seconds(1))
        #expect(limit.take())
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { true } else { false }
    }
}
