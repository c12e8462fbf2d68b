import Synchronization

/// The deadline passed before the work finished; `description` says what was waited for.
public struct DeadlinePassed: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension ParleyClock {
    /// Runs `work` until `duration` has passed on this clock, Parley's one way of giving up on
    /// work (a translation backend's turn, the engines' stop, history's flush at exit).
    ///
    /// Returns what `work` returns. When the deadline passes first, throws
    /// `DeadlinePassed(what)` at once: the work is cancelled and not awaited (work blocked in a
    /// device or a pipe cannot be interrupted, and goes on in the background until it ends).
    /// Cancelling the caller throws `CancellationError` at once, and cancels the work too.
    public func withDeadline<T: Sendable>(
        _ duration: Duration, _ what: String, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation)
                let worker = Task {
                    do {
                        race.finish(.success(try await work()))
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                let timer = Task {
                    try? await sleep(for: duration)
                    race.finish(.failure(DeadlinePassed(what)))
                }
                race.onFinish {
                    worker.cancel()
                    timer.cancel()
                }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// The first of several outcomes to arrive wins; the rest are dropped.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var cleanup: (@Sendable () -> Void)?
        var done = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.done { return true }
            state.cleanup = cleanup
            return false
        }
        if runNow { cleanup() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, cleanup) = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.done else { return (nil, nil) }
            state.done = true
            guard let continuation = state.continuation else {
                state.result = result
                return (nil, nil)
            }
            state.continuation = nil
            let cleanup = state.cleanup
            state.cleanup = nil
            return (continuation, cleanup)
        }
        continuation?.resume(with: result)
        cleanup?()
    }
}
