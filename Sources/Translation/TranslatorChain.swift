import Foundation
import Synchronization

/// Translators tried in order until one answers, with a cache of recent translations in front.
///
/// For each backend, a turn:
/// - skips a backend cooling down after an HTTP 429, until its Retry-After has passed;
/// - retries transient failures (5xx, refused or closed connections, timeouts) after 1 s,
///   2 s and 4 s;
/// - does not retry other failures (other 4xx, an uninstalled pair);
/// - gives up on the backend when the turn's deadline for it passes, and moves on.
///
/// When every backend fails, the error names what each one said.
public final class TranslatorChain: Translator {
    /// A backend and the name it goes by in config, errors and `parley languages`.
    public struct Backend: Sendable {
        public var name: String
        public var translator: any Translator

        public init(name: String, translator: any Translator) {
            self.name = name
            self.translator = translator
        }
    }

    /// Time as the chain sees it; tests make the waits short or move the clock.
    public struct Timing: Sendable {
        /// The waits before the retries of a transient failure.
        public var backoff: [Duration]
        /// How long one backend may take over a turn, retries included.
        public var deadline: Duration
        /// Sleeps (between retries).
        public var sleep: @Sendable (Duration) async throws -> Void
        /// Now, for 429 cool-downs.
        public var now: @Sendable () -> ContinuousClock.Instant

        public init(
            backoff: [Duration] = [.seconds(1), .seconds(2), .seconds(4)], deadline: Duration = .seconds(5),
            sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
            now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
        ) {
            self.backoff = backoff
            self.deadline = deadline
            self.sleep = sleep
            self.now = now
        }
    }

    public let backends: [Backend]
    private let timing: Timing
    private let cache: TranslationCache
    /// Backends told to wait (HTTP 429), by name, until when.
    private let coolingDown = Mutex<[String: ContinuousClock.Instant]>([:])

    public init(_ backends: [Backend], timing: Timing = Timing(), cacheCapacity: Int = 256) {
        self.backends = backends
        self.timing = timing
        self.cache = TranslationCache(capacity: cacheCapacity)
    }

    public func supports(_ pair: LanguagePair) -> Bool {
        backends.contains { $0.translator.supports(pair) }
    }

    /// Prepares the pair on every backend that has it; a backend that cannot is left for the
    /// turn to find out.
    public func prepare(_ pair: LanguagePair) async throws {
        var failures: [String] = []
        for backend in backends where backend.translator.supports(pair) {
            do {
                try await backend.translator.prepare(pair)
                return
            } catch {
                failures.append("\(backend.name): \(error)")
            }
        }
        if !failures.isEmpty { throw TranslationError(failures.joined(separator: "; ")) }
    }

    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        try await translateNamingBackend(text, from: source, to: target).text
    }

    /// Translates and says which backend answered ("cache" for a repeated phrase).
    public func translateNamingBackend(_ text: String, from source: String, to target: String) async throws -> (text: String, backend: String) {
        let key = TranslationCache.Key(source: source, target: target, text: text)
        if let cached = cache.value(for: key) { return (cached, "cache") }
        let pair = LanguagePair(source, target)
        var failures: [String] = []
        for backend in backends {
            try Task.checkCancellation()
            guard backend.translator.supports(pair) else {
                failures.append("\(backend.name): no \(pair) pair")
                continue
            }
            if let until = coolingDown.withLock({ $0[backend.name] }), until > timing.now() {
                failures.append("\(backend.name): rate-limited for \((until - timing.now()).seconds) s more")
                continue
            }
            do {
                let translation = try await attempt(backend, text, from: source, to: target)
                cache.insert(translation, for: key)
                return (translation, backend.name)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                failures.append("\(backend.name): \(error)")
            }
        }
        if failures.isEmpty { failures.append("no translation backend is configured") }
        throw TranslationError("no backend could translate \(pair): " + failures.joined(separator: "; "))
    }

    /// One backend's go at a turn: retries of transient failures, within the deadline.
    private func attempt(_ backend: Backend, _ text: String, from source: String, to target: String) async throws -> String {
        let clock = ContinuousClock()
        let deadline = clock.now + timing.deadline
        var retries = 0
        while true {
            let remaining = deadline - clock.now
            guard remaining > .zero else { throw TranslationError("no answer within the \(timing.deadline.milliseconds) ms deadline") }
            do {
                return try await withDeadline(remaining, limit: timing.deadline) {
                    try await backend.translator.translate(text, from: source, to: target)
                }
            } catch let error as BackendError {
                switch error.kind {
                case .permanent:
                    throw error
                case .rateLimited(let wait):
                    coolingDown.withLock { $0[backend.name] = timing.now() + wait }
                    throw error
                case .transient:
                    guard retries < timing.backoff.count else {
                        throw TranslationError("\(error) (after \(retries) retries)")
                    }
                    let pause = timing.backoff[retries]
                    retries += 1
                    guard clock.now + pause < deadline else {
                        throw TranslationError("\(error) (no time left in the \(timing.deadline.milliseconds) ms deadline for a retry)")
                    }
                    try await timing.sleep(pause)
                }
            }
        }
    }

    /// Runs `work`, abandoning it (cancelled, not awaited) when `duration` passes.
    private func withDeadline<T: Sendable>(
        _ duration: Duration, limit: Duration, _ work: @escaping @Sendable () async throws -> T
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
                    try? await Task.sleep(for: duration)
                    race.finish(.failure(TranslationError("no answer within the \(limit.milliseconds) ms deadline")))
                    worker.cancel()
                }
                race.onFinish { worker.cancel(); timer.cancel() }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// Forgets cool-downs and cached translations (tests).
    func reset() {
        coolingDown.withLock { $0.removeAll() }
        cache.removeAll()
    }

    /// When `name` may be asked again after a 429, if it is cooling down.
    public func coolingDownUntil(_ name: String) -> ContinuousClock.Instant? {
        coolingDown.withLock { $0[name] }.flatMap { $0 > timing.now() ? $0 : nil }
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

extension Duration {
    /// Whole milliseconds, for messages.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// Recent translations, least recently used dropped first, so a repeated phrase costs nothing.
public final class TranslationCache: Sendable {
    public struct Key: Hashable, Sendable {
        public var source: String
        public var target: String
        public var text: String
    }

    private struct Storage {
        var values: [Key: (value: String, used: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    public let capacity: Int
    private let storage = Mutex(Storage())

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    public func value(for key: Key) -> String? {
        storage.withLock { storage in
            guard let entry = storage.values[key] else { return nil }
            storage.tick += 1
            storage.values[key] = (entry.value, storage.tick)
            return entry.value
        }
    }

    public func insert(_ value: String, for key: Key) {
        guard capacity > 0 else { return }
        storage.withLock { storage in
            storage.tick += 1
            storage.values[key] = (value, storage.tick)
            if storage.values.count > capacity, let oldest = storage.values.min(by: { $0.value.used < $1.value.used })?.key {
                storage.values.removeValue(forKey: oldest)
            }
        }
    }

    public var count: Int { storage.withLock { $0.values.count } }

    func removeAll() { storage.withLock { $0.values.removeAll() } }
}
