import Dispatch
import Foundation
import Testing

/// The trait of a suite or test that blocks its thread: it starts processes and waits for them,
/// reads pipes and sockets, sleeps, or keeps a thread busy for seconds. Its tests run on threads
/// of their own (`ThreadPerJobExecutor`), not on the cooperative pool. `.startsProcesses`, for
/// the suites that start parleyd, the engines, a sound server or a browser, also runs no more of
/// them at once than the machine has cores.
///
/// Both test targets run in one process, and that pool, shared by every test and every task of
/// the runtimes they start, has only as many threads as the machine has cores. A test blocking
/// one of them takes it away from the rest: on two cores, two such tests at once stopped every
/// in-memory conversation (their `Interpreter`s run as tasks on the pool) until they timed out.
/// And the end-to-end tests all started at once (a parleyd or two each, with its engines) left
/// the in-memory tests and themselves too little of the processor to meet their deadlines.
/// Limited to one a core, they load the machine as Tests/run/run-tests.sh's two lanes do, while
/// the in-memory tests run beside them. With these traits on every suite of ParleyEndToEndTests
/// and on the blocking tests of ParleyTests, a plain parallel `swift test` passes.
///
/// A test waiting for its turn is inside its time limit already (`.timeLimit` counts from before
/// the traits' scopes), so a suite with time limits takes `.blocksThreads` only; it starts at
/// most a small server, and the limit then measures the test alone.
///
/// Only the test's own task prefers those threads (and the child tasks of its task groups and
/// `async let`s): the `Task {}`s it starts, and the runtimes in them, run on the pool as in
/// parleyd, so they must not block.
public struct BlocksThreads: SuiteTrait, TestTrait, TestScoping {
    /// The trait the current task runs under, if any.
    @TaskLocal public static var current: BlocksThreads?

    /// How many tests that start processes run at once: one a core.
    private static let slots = Slots(ProcessInfo.processInfo.activeProcessorCount)

    /// Whether its tests start processes, and so wait for one of `slots`.
    public let startsProcesses: Bool

    public var isRecursive: Bool { true }

    /// Each test case, never a whole suite: a suite holding a slot would keep its own tests
    /// waiting for one.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if startsProcesses { await Self.slots.take() }
        do {
            try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) {
                try await Self.$current.withValue(self) { try await function() }
            }
        } catch {
            if startsProcesses { await Self.slots.give() }
            throw error
        }
        if startsProcesses { await Self.slots.give() }
    }
}

extension Trait where Self == BlocksThreads {
    /// The tests block their thread (`BlocksThreads`): they run on threads of their own.
    public static var blocksThreads: Self { BlocksThreads(startsProcesses: false) }

    /// The tests start processes and wait for them (`BlocksThreads`): they run on threads of
    /// their own, one a core at a time.
    public static var startsProcesses: Self { BlocksThreads(startsProcesses: true) }
}

/// A task executor that never makes a job wait for a thread another job is blocking: each job
/// runs on a serial dispatch queue of its own. Such a queue overcommits (libdispatch starts
/// another thread when all of its threads are busy), unlike the cooperative pool, which never
/// has more threads than cores. A job is one stretch of a task between two suspensions, so a
/// blocked test holds one thread and nothing else waits for it.
public final class ThreadPerJobExecutor: TaskExecutor {
    public static let shared = ThreadPerJobExecutor()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: "parley.test.blocking").async { job.runSynchronously(on: executor) }
    }
}

/// A counting semaphore that waits without blocking a thread: `take()` suspends until one of
/// the `count` slots is free; the slots are handed out in the order they were asked for.
actor Slots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) {
        free = max(1, count)
    }

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
