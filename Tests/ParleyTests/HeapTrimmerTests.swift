import ParleyCore
import ParleyTesting
import Synchronization
import Testing

@testable import ParleyDaemon

/// parleyd gives freed heap pages back once a turn is over and the room stayed quiet.
@Suite("Heap trimming after a turn")
struct HeapTrimmerTests {
    final class Count: Sendable {
        let value = Mutex(0)
        var current: Int { value.withLock { $0 } }
    }

    @Test func backToListeningAndQuietTrimsOnce() async throws {
        let count = Count()
        let manual = ManualClock()
        let trimmer = HeapTrimmer(quiet: .seconds(2), clock: ParleyClock(manual), trim: { count.value.withLock { $0 += 1 } }, first: {})
        for state in ["hearing", "recognizing", "translating", "speaking", "echo_guard", "listening"] {
            trimmer.stateChanged(to: state)
        }
        #expect(await manual.nextSleep() == .seconds(2), "the quiet it waits for")
        #expect(count.current == 0)
        manual.advance(by: .seconds(2))
        #expect(await TestConversation.until { count.current == 1 })
    }

    @Test func aTurnStartingBeforeTheQuietEndsIsNotInterrupted() async throws {
        let count = Count()
        let manual = ManualClock()
        let trimmer = HeapTrimmer(quiet: .seconds(2), clock: ParleyClock(manual), trim: { count.value.withLock { $0 += 1 } }, first: {})
        trimmer.stateChanged(to: "listening")
        _ = await manual.nextSleep()
        manual.advance(by: .seconds(1))
        trimmer.stateChanged(to: "hearing")
        manual.advance(by: .seconds(5))
        // The wait ended with a turn begun since: nothing is trimmed, then or later.
        trimmer.stateChanged(to: "listening")
        _ = await manual.nextSleep()
        #expect(count.current == 0)
        manual.advance(by: .seconds(2))
        #expect(await TestConversation.until { count.current == 1 }, "only the second quiet trims")
    }

    /// The first trim, once start-up is over, also releases the code start-up ran; later ones
    /// do not.
    @Test func theFirstTrimAlsoReleasesCode() async throws {
        let trims = Count()
        let firsts = Count()
        let manual = ManualClock()
        let trimmer = HeapTrimmer(
            quiet: .seconds(2), clock: ParleyClock(manual), trim: { trims.value.withLock { $0 += 1 } },
            first: { firsts.value.withLock { $0 += 1 } })
        for turn in 1...3 {
            trimmer.stateChanged(to: "hearing")
            trimmer.stateChanged(to: "listening")
            _ = await manual.nextSleep()
            manual.advance(by: .seconds(2))
            #expect(await TestConversation.until { trims.current == turn })
        }
        #expect(firsts.current == 1)
    }
}
