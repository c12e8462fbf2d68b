import ParleyControl
import ParleyCore
import Synchronization

/// What one control connection is doing, shared by its request loop, its idle watchdog and the
/// channel's close callback.
///
/// - A request is answered by a task of its own, so a client that goes away while it waits
///   (`say` during a full disk) frees its place at once while the work (storing the turn) goes on.
/// - A connection with no request in flight and no subscription is idle; the watchdog closes it
///   once it has been idle for the server's idle timeout. A subscriber is never idle.
/// - A reply that cannot be written for as long (the client sends requests and reads nothing)
///   gets the connection closed too.
final class ConnectionActivity: Sendable {
    private struct State {
        var lastActivity: ParleyClock.Instant
        var busy = false
        /// Since when a reply has been waiting to be written; nil when none is.
        var writingSince: ParleyClock.Instant?
        var subscription: Subscription?
        var gone = false
        /// The watchdog is closing the connection: no more requests are taken.
        var closing = false
        var serial = 0
        var waiter: (serial: Int, continuation: CheckedContinuation<ControlReply?, Never>)?
    }

    private let state: Mutex<State>
    /// The server's clock.
    private let clock: ParleyClock

    init(clock: ParleyClock) {
        self.clock = clock
        state = Mutex(State(lastActivity: clock.now))
    }

    /// A request arrived; false when the connection is being closed as idle.
    func begin() -> Bool {
        state.withLock { state in
            guard !state.closing else { return false }
            state.busy = true
            return true
        }
    }

    /// The request's reply is ready and being written: the idle clock starts again from now.
    /// Not from when the write returns: by then the client may have read the reply and acted on
    /// it, and a connection's idle time must not depend on which of the two came first.
    func writing() {
        state.withLock { state in
            let now = clock.now
            state.writingSince = now
            state.lastActivity = now
        }
    }

    /// The request's reply was written: the connection may be idle again.
    func end() {
        state.withLock { state in
            state.busy = false
            state.writingSince = nil
        }
    }

    /// The connection now carries events; it is never idle again. Cancelled when the client goes.
    func subscribed(_ subscription: Subscription) {
        let cancel = state.withLock { state -> Bool in
            state.subscription = subscription
            return state.gone
        }
        if cancel { subscription.cancel() }
    }

    var isGone: Bool { state.withLock { $0.gone } }

    /// A request is in flight (received, its reply not yet written).
    var isBusy: Bool { state.withLock { $0.busy } }

    /// The channel closed (the client left, or the server closed it): a reply being waited for
    /// is given up (its work goes on) and the subscription ends.
    func markGone() {
        let (waiter, subscription) = state.withLock { state in
            state.gone = true
            defer { state.waiter = nil }
            return (state.waiter?.continuation, state.subscription)
        }
        waiter?.resume(returning: nil)
        subscription?.cancel()
    }

    /// Runs `work` on a task of its own and returns its reply, or nil as soon as the client is
    /// gone; `work` then still runs to its end, and a subscription it made is cancelled.
    func reply(_ work: @escaping @Sendable () async -> ControlReply) async -> ControlReply? {
        let serial = state.withLock { state in
            state.serial += 1
            return state.serial
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let goneAlready = state.withLock { state -> Bool in
                    if state.gone { return true }
                    state.waiter = (serial, continuation)
                    return false
                }
                if goneAlready { continuation.resume(returning: nil) }
                // Not a child task: the client leaving must not cancel storing a turn.
                Task {
                    let reply = await work()
                    let waiter = self.state.withLock { state -> CheckedContinuation<ControlReply?, Never>? in
                        guard let waiter = state.waiter, waiter.serial == serial else { return nil }
                        state.waiter = nil
                        return waiter.continuation
                    }
                    if let waiter {
                        waiter.resume(returning: reply)
                    } else if case .subscribe(_, let events) = reply {
                        events.cancel()
                    }
                }
            }
        } onCancel: {
            markGone()
        }
    }

    /// When the connection will have been idle (or its reply stuck) for `timeout`, if nothing
    /// happens before; nil when it can no longer become idle (a subscriber, or gone).
    func idleDeadline(_ timeout: Duration) -> ParleyClock.Instant? {
        state.withLock { state in
            if state.subscription != nil || state.gone || state.closing { return nil }
            if let writingSince = state.writingSince { return writingSince + timeout }
            return state.busy ? clock.now + timeout : state.lastActivity + timeout
        }
    }

    enum Verdict {
        /// Keep the connection.
        case active
        /// Idle for the timeout: tell the client, then close. No request is taken from now on.
        case idle
        /// Its reply has not been written for the timeout: close without a word.
        case stuck
    }

    /// Whether the connection has been idle, or its reply stuck, for `timeout`.
    func verdict(_ timeout: Duration) -> Verdict {
        state.withLock { state in
            guard state.subscription == nil, !state.gone, !state.closing else { return .active }
            let now = clock.now
            if let writingSince = state.writingSince {
                guard now - writingSince >= timeout else { return .active }
                state.closing = true
                return .stuck
            }
            guard !state.busy, now - state.lastActivity >= timeout else { return .active }
            state.closing = true
            return .idle
        }
    }
}
