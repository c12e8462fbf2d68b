import Dispatch

/// A serial executor on a dispatch queue of its own.
///
/// The recognition and speech workers and the Apertium translator are actors on one of these:
/// their work blocks (PocketSphinx decodes, ALSA writes wait for the device, Apertium's answer is
/// waited for with `poll`), so it must not run on, nor wait for, the concurrency pool. A busy
/// pool (translation, history, many clients) can then never delay the audio path, and the
/// compiler still checks the actors' isolation as for any actor.
public final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
