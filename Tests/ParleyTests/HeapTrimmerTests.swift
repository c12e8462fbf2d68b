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
        let trimmer = HeapTrimmer(quiet: .milliseconds(50)) { count.value.withLock { $0 += 1 } }
        for state in ["hearing", "recognizing", "translating", "speaking", "echo_guard", "listening"] {
            trimmer.stateChanged(to: state)
        }
        #expect(count.current == 0)
        try await Task.sleep(for: .milliseconds(400))
        #expect(count.current == 1)
    }

    @Test func aTurnStartingBeforeTheQuietEndsIsNotInterrupted() async throws {
        let count = Count()
        let trimmer = HeapTrimmer(quiet: .milliseconds(200)) { count.value.withLock { $0 += 1 } }
        trimmer.stateChanged(to: "listening")
        try await Task.sleep(for: .milliseconds(20))
        trimmer.stateChanged(to: "hearing")
        try await Task.sleep(for: .milliseconds(500))
        #expect(count.current == 0)
    }
}
