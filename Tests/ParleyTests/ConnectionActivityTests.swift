import Foundation
import Synchronization
import Testing
import ParleyControl
@testable import ParleyControlSocket

/// The bookkeeping behind idle timeouts and clients that leave, without a socket or a clock:
/// a zero timeout has always passed.
@Suite("Control connection activity")
struct ConnectionActivityTests {
    @Test func onlyAConnectionWithNothingInFlightIsIdle() {
        let activity = ConnectionActivity()
        #expect(activity.begin())
        #expect(activity.verdict(.zero) == .active, "a request in flight is not idleness")
        activity.writing()
        #expect(activity.verdict(.zero) == .stuck, "a reply not written for the timeout")
        #expect(!activity.begin(), "a connection being closed takes no more requests")

        let quiet = ConnectionActivity()
        #expect(quiet.verdict(.seconds(3600)) == .active)
        #expect(quiet.idleDeadline(.seconds(3600)) != nil)
        #expect(quiet.verdict(.zero) == .idle)
        #expect(quiet.idleDeadline(.zero) == nil, "closing: nothing more to wait for")
        #expect(!quiet.begin())

        let answered = ConnectionActivity()
        #expect(answered.begin())
        answered.writing()
        answered.end()
        #expect(answered.verdict(.zero) == .idle)
    }

    @Test func aSubscriberIsNeverIdleAndIsCancelledWhenItsClientGoes() async {
        let bus = EventBus()
        let subscription = bus.subscribe()
        let activity = ConnectionActivity()
        activity.subscribed(subscription)
        #expect(activity.verdict(.zero) == .active)
        #expect(activity.idleDeadline(.zero) == nil)
        activity.markGone()
        #expect(await subscription.next() == nil, "the subscription ends with the connection")
        #expect(!bus.hasSubscribers)
    }

    @Test func aClientThatLeavesStopsTheWaitButNotTheWork() async {
        let activity = ConnectionActivity()
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
        let activity = ConnectionActivity()
        let reply = await activity.reply { .line(Data("ok".utf8)) }
        guard case .line(let line) = reply else {
            Issue.record("no reply")
            return
        }
        #expect(line == Data("ok".utf8))
    }
}
