import Dispatch

/// A serial executor on a dispatch queue of its own.
///
/// The recognition and speech workers are actors on one of these: their work blocks (PocketSphinx
/// decodes, ALSA writes wait for the device), so it must not run on, nor wait for, the
/// concurrency pool. A busy pool (translation, history, many clients) can then never delay the
/// audio path, and the compiler still checks the workers' isolation as for any actor.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

/// Waits for `work` at most `timeout`; false if it had not finished by then (it goes on in the
/// background: work blocked in a device cannot be interrupted). Used at shutdown, where a hung
/// device must not hold up the exit.
func finished(within timeout: Duration, _ work: @escaping @Sendable () async -> Void) async -> Bool {
    let (outcomes, outcome) = AsyncStream<Bool>.makeStream()
    Task {
        await work()
        outcome.yield(true)
    }
    let timer = Task {
        try? await Task.sleep(for: timeout)
        outcome.yield(false)
    }
    defer { timer.cancel() }
    for await done in outcomes { return done }
    return false
}
