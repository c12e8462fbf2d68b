import Foundation
import ParleyProtocol
import Synchronization

/// Fans events out to subscribers without ever making the publisher wait.
///
/// Each subscriber has a bounded queue. When it is full, level events go first, then the oldest
/// events; the subscriber is told how many it missed with a `lagged` event.
public final class EventBus: Sendable {
    private let subscribers = Mutex<[UInt64: Subscription]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let capacity: Int

    public init(capacity: Int = 256) {
        self.capacity = capacity
    }

    public var hasSubscribers: Bool {
        subscribers.withLock { !$0.isEmpty }
    }

    /// A new subscription; it ends when cancelled.
    public func subscribe() -> Subscription {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let subscription = Subscription(capacity: capacity) { [weak self] in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = subscription }
        return subscription
    }

    /// Publishes `{"type": type, "data": data}`. Encoding is skipped when nobody listens.
    public func publish<Payload: Encodable & Sendable>(_ type: String, _ data: Payload) {
        let current = subscribers.withLock { Array($0.values) }
        guard !current.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let line = try? encoder.encode(EventMessage(type: type, data: data)) else { return }
        let isLevel = type == EventType.level
        for subscription in current {
            subscription.offer(line, isLevel: isLevel)
        }
    }
}

/// One subscriber's queue of encoded event lines.
public final class Subscription: Sendable {
    private struct State {
        var queue: [(line: Data, isLevel: Bool)] = []
        var missed = 0
        var waiter: CheckedContinuation<Data?, Never>?
        var closed = false
        /// No more events come; what is queued is still delivered.
        var finished = false
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let onCancel: @Sendable () -> Void

    init(capacity: Int, onCancel: @escaping @Sendable () -> Void) {
        self.capacity = capacity
        self.onCancel = onCancel
    }

    func offer(_ line: Data, isLevel: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, Never>? in
            guard !state.closed else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.queue.count >= capacity {
                let victim = state.queue.firstIndex(where: \.isLevel) ?? state.queue.startIndex
                state.queue.remove(at: victim)
                state.missed += 1
            }
            state.queue.append((line, isLevel))
            return nil
        }
        waiter?.resume(returning: line)
    }

    /// Whether a `next()` is parked waiting for an event (tests wait for it before acting).
    var hasWaitingReader: Bool { state.withLock { $0.waiter != nil } }

    /// The next event line, waiting for one; nil once cancelled.
    public func next() async -> Data? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Data?, Never>) in
                let ready = state.withLock { state -> Data?? in
                    if state.closed { return .some(nil) }
                    if state.missed > 0 {
                        let missed = state.missed
                        state.missed = 0
                        return .some(Self.lagged(missed))
                    }
                    if !state.queue.isEmpty { return .some(state.queue.removeFirst().line) }
                    if state.finished { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Ends the subscription once what is queued has been read.
    public func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, Never>? in
            state.finished = true
            guard state.queue.isEmpty else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        onCancel()
    }

    /// Ends the subscription; a waiting `next()` returns nil.
    public func cancel() {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, Never>? in
            state.closed = true
            state.queue.removeAll()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        onCancel()
    }

    private static func lagged(_ missed: Int) -> Data {
        Data(#"{"data":{"missed":\#(missed)},"type":"lagged"}"#.utf8)
    }
}
