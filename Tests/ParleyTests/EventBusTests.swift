import Foundation
import ParleyTesting
import Testing
@testable import ParleyControl
@testable import ParleyProtocol

@Suite("Event bus")
struct EventBusTests {
    private func type(_ line: Data?) -> String? {
        line.flatMap { try? JSONDecoder().decode(Envelope.self, from: $0).type }
    }

    @Test func eventsArriveInOrder() async {
        let bus = EventBus(capacity: 8)
        let subscription = bus.subscribe()
        bus.publish(EventType.speechStart, SpeakerEvent(speaker: "a", language: "en"))
        bus.publish(EventType.speechEnd, SpeakerEvent(speaker: "a", language: "en"))
        #expect(type(await subscription.next()) == "speech_start")
        #expect(type(await subscription.next()) == "speech_end")
    }

    @Test func aSlowSubscriberLosesLevelsFirstAndIsToldHowMany() async {
        let bus = EventBus(capacity: 4)
        let subscription = bus.subscribe()
        bus.publish(EventType.transcript, TextEvent(speaker: "a", language: "en", text: "hello"))
        for _ in 0..<5 { bus.publish(EventType.level, LevelEvent(rmsDB: -40, peakDB: -30)) }
        bus.publish(EventType.turn, StateEvent(state: "x", speaker: nil))
        // Capacity 4: the transcript and the turn survive; three levels were dropped.
        let first = await subscription.next()
        #expect(type(first) == "lagged")
        let lagged = first.flatMap { String(data: $0, encoding: .utf8) } ?? ""
        #expect(lagged.contains(#""missed":3"#))
        var rest: [String?] = []
        for _ in 0..<4 { rest.append(type(await subscription.next())) }
        #expect(rest == ["transcript", "level", "level", "turn"])
    }

    @Test func aSubscriberThatNeverReadsDoesNotHoldUpThePublisher() {
        let bus = EventBus(capacity: 16)
        let subscription = bus.subscribe()
        let started = Date()
        for _ in 0..<10_000 { bus.publish(EventType.level, LevelEvent(rmsDB: -40, peakDB: -30)) }
        #expect(Date().timeIntervalSince(started) < 5)
        subscription.cancel()
    }

    @Test func finishDeliversWhatIsQueuedThenEnds() async {
        let bus = EventBus()
        let subscription = bus.subscribe()
        bus.publish(EventType.turn, StateEvent(state: "x", speaker: nil))
        subscription.finish()
        #expect(type(await subscription.next()) == "turn")
        #expect(await subscription.next() == nil)
    }

    @Test func cancelEndsAWaitingReader() async {
        let bus = EventBus()
        let subscription = bus.subscribe()
        async let next = subscription.next()
        // The reader is parked before the cancel, so the cancel is what ends it.
        #expect(await TestConversation.until { subscription.hasWaitingReader })
        subscription.cancel()
        #expect(await next == nil)
        #expect(!bus.hasSubscribers)
    }
}
