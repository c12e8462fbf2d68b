import Foundation
import Synchronization
import Testing
import ParleyControl
import ParleyCore
import ParleyTesting
@testable import ParleyControlSocket

/// The bookkeeping behind idle timeouts and clients that leave, without a socket, on a clock
/// the test moves: a zero timeout has always passed, a longer one passes when the test says.
@Suite("Control connection activity")
struct ConnectionActivityTests {
    @Test func onlyAConnectionWithNothingInFlightIsIdle() {
        let activity = ConnectionActivity(clock: .continuous)
        #expect(activity.begin())
        #expect(activity.verdict(.zero) == .active, "a request in flight is not idleness")
        activity.writing()
        #expect(activity.verdict(.zero) == .stuck, "a reply not written for the timeout")
        #expect(!activity.begin(), "a connection being closed takes no more requests")

        let quiet = ConnectionActivity(clock: .continuous)
        #expect(quiet.verdict(.seconds(3600)) == .active)
        #expect(quiet.idleDeadline(.seconds(3600)) != nil)
        #expect(quiet.verdict(.zero) == .idle)
        #expect(quiet.idleDeadline(.zero) == nil, "closing: nothing more to wait for")
        #expect(!quiet.begin())

        let answered = ConnectionActivity(clock: .continuous)
        #expect(answered.begin())
        answered.writing()
        answered.end()
        #expect(answered.verdict(.zero) == .idle)
    }

    @Test func aConnectionIsIdleOnceTheTimeoutHasPassedOnTheClockSinceItsLastReply() {
        let manual = ManualClock()
        let timeout = Duration.seconds(30)
        let activity = ConnectionActivity(clock: ParleyClock(manual))
        #expect(activity.idleDeadline(timeout) == ParleyClock.Instant(offset: .seconds(30)))
        manual.advance(by: .seconds(20))
        // A request answered at 20 s: the idle clock starts again.
        #expect(activity.begin())
        manual.advance(by: .seconds(15))
        #expect(activity.verdict(timeout) == .active, "a request in flight for 15 s")
        #expect(activity.idleDeadline(timeout) == ParleyClock.Instant(offset: .seconds(65)), "busy: a timeout from now")
        activity.writing()
        activity.end()
        #expect(activity.idleDeadline(timeout) == ParleyClock.Instant(offset: .seconds(65)))
        manual.advance(by: .seconds(30) - .milliseconds(1))
        #expect(activity.verdict(timeout) == .active, "a millisecond short of the timeout")
        manual.advance(by: .milliseconds(1))
        #expect(activity.verdict(timeout) == .idle)
        #expect(!activity.begin())
    }

    /// The client reads its reply as soon as it is written, and may act (here the clock moves)
    /// before the server notes that the write returned: the idle time counts from the reply,
    /// whichever came first. (ControlTimingTests hung on this: the watchdog slept 30 s more.)
    @Test func theIdleClockStartsAtTheReplyNotWhenItsWriteReturns() {
        let manual = ManualClock()
        let timeout = Duration.seconds(30)
        let activity = ConnectionActivity(clock: ParleyClock(manual))
        manual.advance(by: .seconds(10))
        #expect(activity.begin())
        activity.writing()
        manual.advance(by: .seconds(20))
        activity.end()
        #expect(activity.idleDeadline(timeout) == ParleyClock.Instant(offset: .seconds(40)))
        manual.advance(by: .seconds(10))
        #expect(activity.verdict(timeout) == .idle)
    }

    @Test func aReplyNotWrittenForTheTimeoutIsStuck() {
        let manual = ManualClock()
        let timeout = Duration.seconds(30)
        let activity = ConnectionActivity(clock: ParleyClock(manual))
        #expect(activity.begin())
        manual.advance(by: .seconds(5))
        activity.writing()
        #expect(activity.idleDeadline(timeout) == ParleyClock.Instant(offset: .seconds(35)))
        manual.advance(by: .seconds(29))
        #expect(activity.verdict(timeout) == .active)
        manual.advance(by: .seconds(1))
        #expect(activity.verdict(timeout) == .stuck)
    }

    @Test func aSubscriberIsNeverIdleAndIsCancelledWhenItsClientGoes() async {
        let bus = EventBus()
        let subscription = bus.subscribe()
        let manual = ManualClock()
        let activity = ConnectionActivity(clock: ParleyClock(manual))
        activity.subscribed(subscription)
        manual.advance(by: .seconds(3600))
        #expect(activity.verdict(.seconds(30)) == .active, "an hour without a request")
        #expect(activity.idleDeadline(.zero) == nil)
        activity.markGone()
        #expect(await subscription.next() == nil, "the subscription ends with the connection")
        #expect(!bus.hasSubscribers)
    }

    @Test func aClientThatLeavesStopsTheWaitButNotTheWork() async {
        let activity = ConnectionActivity(clock: .continuous)
        let release = AsyncStream<Void>.makeStream()
        let done = AsyncStream<Void>.makeStream()
        let waiting = Task {
            await activity.reply {
                for await _ in release.stream {}
                done.continuation.finish()
                return .line(Data("late".utf8))
            }
        }
        activity.markGone()
        #expect(await waiting.value == nil, "the wait ends as soon as the client is gone")
        release.continuation.finish()
        for await _ in done.stream {}
        #expect(activity.isGone)
    }

    @Test func aReplyComesBackWhileTheClientStays() async {
        let activity = ConnectionActivity(clock: .continuous)
        let reply = await activity.reply { .line(Data("ok".utf8)) }
        guard case .line(let line) = reply else {
            Issue.record("no reply")
            return
        }
        #expect(line == Data("ok".utf8))
    }
}
