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
