import ParleyCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Gives the heap's free pages back to the system once a turn is over and the room has been
/// quiet for a while (glibc's `malloc_trim`).
///
/// A turn's buffers (the utterance, the engines' scratch, the translation and its speech) are
/// freed when it ends, but glibc keeps the pages in the arena of the thread that used them:
/// parleyd grew by about 17 MiB of such pages over eight turns (docs/benchmarks.md, "Memory
/// after turns"). The trim runs in a utility task, `quiet` after parleyd went back to
/// listening, and not at all when anything happened meanwhile: never during a turn. The first
/// trim, once start-up is over, also gives back the code pages start-up ran (`CodePages`).
final class HeapTrimmer: Sendable {
    private let generation = Mutex<UInt64>(0)
    private let trimmed = Mutex(false)
    private let quiet: Duration
    private let clock: ParleyClock
    private let trim: @Sendable () -> Void
    private let first: @Sendable () -> Void

    init(
        quiet: Duration = .seconds(2), clock: ParleyClock, trim: @escaping @Sendable () -> Void = Heap.trim,
        first: @escaping @Sendable () -> Void = { CodePages.release() }
    ) {
        self.quiet = quiet
        self.clock = clock
        self.trim = trim
        self.first = first
    }

    /// Told every state change (the interpreter's observer; quick, on the caller's thread).
    func stateChanged(to state: String) {
        let current = generation.withLock { value -> UInt64 in
            value &+= 1
            return value
        }
        guard state == "listening" else { return }
        let deadline = clock.now + quiet
        Task(priority: .utility) { [self] in
            try? await clock.sleep(until: deadline)
            // Still listening since then: nothing started in between.
            guard generation.withLock({ $0 == current }) else { return }
            trim()
            let wasFirst = trimmed.withLock { done -> Bool in
                defer { done = true }
                return !done
            }
            if wasFirst { first() }
        }
    }
}
