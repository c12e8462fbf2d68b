import Foundation
import ParleyCore
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
/// A backend that failed a turn for want of an answer (transient failures past their retries,
/// or the deadline) is a broken circuit: the turns that follow skip it at no cost, while a
/// background probe asks it a fixed word after a cool-down (30 s, doubled after each failed
/// probe up to 5 min). The first probe it answers closes the circuit. No one's words are used
/// for a probe.
///
/// When every backend fails, the error names what each one said.
public final class TranslatorChain: Translator {
    /// A backend and the name it goes by in config, errors and `parley languages`.
    public struct Backend: Sendable {
        public var name: String
        public var translator: any Translator
        /// Whether it only stands in for the backends before it: start-up neither starts nor
        /// checks it for a pair they offer, and the first turn it takes starts it. Apertium's
        /// own routes behind Bergamot's are such a backend: warm, the English-Spanish pipeline
        /// alone holds about 110 MiB, for turns that only come when Bergamot's worker has
        /// failed (and a cold pipeline answers in 0.15 s here).
        public var standby: Bool

        public init(name: String, translator: any Translator, standby: Bool = false) {
            self.name = name
            self.translator = translator
            self.standby = standby
        }

        /// Whether start-up should start and check it in `pair`: it offers the pair, and is not
        /// standing by behind an earlier backend that offers it too.
        func checked(in pair: LanguagePair, behind earlier: ArraySlice<Backend>) -> Bool {
            translator.supports(pair) && !(standby && earlier.contains { $0.translator.supports(pair) })
        }
    }

    /// Time as the chain sees it; tests make the waits short or move the clock.
    public struct Timing: Sendable {
        /// The clock deadlines, retries, 429 cool-downs and broken circuits are timed by: the
        /// daemon's; a test's manual one.
        public var clock: ParleyClock
        /// The waits before the retries of a transient failure.
        public var backoff: [Duration]
        /// How long one backend may take over a turn, retries included.
        public var deadline: Duration
        /// How long a backend that failed is skipped before the first probe.
        public var coolDown: Duration
        /// The longest wait between probes (each failed probe doubles the wait up to this).
        public var longestCoolDown: Duration

        public init(
            backoff: [Duration] = [.seconds(1), .seconds(2), .seconds(4)], deadline: Duration = .seconds(5),
            clock: ParleyClock = .continuous, coolDown: Duration = .seconds(30), longestCoolDown: Duration = .seconds(300)
        ) {
            self.backoff = backoff
            self.deadline = deadline
            self.clock = clock
            self.coolDown = coolDown
            self.longestCoolDown = max(coolDown, longestCoolDown)
        }

        /// What a backend that did not answer within the deadline is told it did.
        var noAnswer: String { "no answer within the \(deadline.milliseconds) ms deadline" }
    }

    public let backends: [Backend]
    private let timing: Timing
    private let cache: TranslationCache
    /// Backends told to wait (HTTP 429), by name, until when.
    private let coolingDown = Mutex<[String: ParleyClock.Instant]>([:])
    private let circuits: Circuits
    /// Told, in one line, when a backend that was asked failed and a later one translated the
    /// turn (the daemon logs it).
    private let fellBack: (@Sendable (String) -> Void)?

    /// `fellBack` hears one line each time a turn is translated by a later backend after an
    /// earlier one was asked and failed.
    public init(_ backends: [Backend], timing: Timing = Timing(), cacheCapacity: Int = 256, fellBack: (@Sendable (String) -> Void)? = nil) {
        self.backends = backends
        self.timing = timing
        self.cache = TranslationCache(capacity: cacheCapacity)
        self.circuits = Circuits(timing: timing)
        self.fellBack = fellBack
    }

    deinit {
        circuits.stopProbing()
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

    /// The route is the backend's name, with the backend's own route when it is not direct
    /// ("apertium via ca"); a repeated phrase from the cache keeps the route it took.
    public func translateNamingRoute(_ text: String, from source: String, to target: String) async throws -> RoutedTranslation {
        let answer = try await translateRouted(text, from: source, to: target)
        return RoutedTranslation(text: answer.text, route: answer.route)
    }

    /// How `pair` would go: the first backend that has it, with its route ("apertium via es").
    public func routeName(for pair: LanguagePair) -> String? {
        guard let backend = backends.first(where: { $0.translator.supports(pair) }) else { return nil }
        return Self.routeName(backend.name, backend.translator.routeName(for: pair))
    }

    /// A backend's route as a turn names it: the backend alone for its direct route, the
    /// backend and its pivot ("apertium via es"), and a route that names each leg's engine
    /// ("bergamot en-pt + apertium pt-es") as it is.
    static func routeName(_ backend: String, _ route: String?) -> String {
        guard let route, route != "direct" else { return backend }
        return route.hasPrefix("via ") ? "\(backend) \(route)" : route
    }

    /// A retry someone asked for: backends whose circuit is broken are asked too.
    public func retranslate(_ text: String, from source: String, to target: String) async throws -> String {
        try await translateNamingBackend(text, from: source, to: target, askingSkipped: true).text
    }

    /// Translates and says which backend answered ("cache" for a repeated phrase).
    /// `askingSkipped` asks backends whose circuit is broken too (a retry someone asked for);
    /// one that answers has its circuit closed.
    public func translateNamingBackend(
        _ text: String, from source: String, to target: String, askingSkipped: Bool = false
    ) async throws -> (text: String, backend: String) {
        let answer = try await translateRouted(text, from: source, to: target, askingSkipped: askingSkipped)
        return (answer.text, answer.cached ? "cache" : answer.backend)
    }

    private func translateRouted(
        _ text: String, from source: String, to target: String, askingSkipped: Bool = false
    ) async throws -> (text: String, backend: String, route: String, cached: Bool) {
        let key = TranslationCache.Key(source: source, target: target, text: text)
        if let cached = cache.entry(for: key) { return (cached.value, "cache", cached.route ?? "cache", true) }
        let pair = LanguagePair(source, target)
        var failures: [String] = []
        /// What the backends that were asked and failed said (not those skipped).
        var asked: [String] = []
        for backend in backends {
            try Task.checkCancellation()
            guard backend.translator.supports(pair) else {
                failures.append("\(backend.name): no \(pair) pair")
                continue
            }
            if let until = coolingDown.withLock({ $0[backend.name] }), until > timing.clock.now {
                failures.append("\(backend.name): rate-limited for \((until - timing.clock.now).seconds) s more")
                continue
            }
            let wasBroken = circuits.broken(backend.name)
            if let broken = wasBroken, !askingSkipped {
                failures.append("\(backend.name): skipped since it failed (\(broken)); it is probed in the background and used again once it answers")
                continue
            }
            do {
                let answer = try await attempt(backend, text, from: source, to: target)
                let translation = OpeningMarks.added(to: answer.text, language: target)
                guard translation.count <= Self.longestTranslation(of: text) else {
                    failures.append(
                        "\(backend.name): its translation was \(translation.count) characters for a sentence of \(text.count), "
                            + "more than 10 times as long plus 200, and was rejected; check the server, or take it out of [translator] backends")
                    asked.append("\(backend.name)'s translation was rejected (\(translation.count) characters for \(text.count))")
                    continue
                }
                if wasBroken != nil { circuits.close(backend.name) }
                let route = Self.routeName(backend.name, answer.route)
                if !asked.isEmpty, let fellBack {
                    fellBack("translation: \(asked.joined(separator: "; ")); \(backend.name) translated the turn instead (\(route))")
                }
                cache.insert(translation, route: route, for: key)
                return (translation, backend.name, route, false)
            } catch is CancellationError {
                throw CancellationError()
            } catch let error as Unanswered {
                circuits.open(backend, pair: pair, reason: error.description)
                failures.append("\(backend.name): \(error)")
                asked.append("\(backend.name) failed (\(error))")
            } catch {
                failures.append("\(backend.name): \(error)")
                asked.append("\(backend.name) failed (\(error))")
            }
        }
        if failures.isEmpty { failures.append("no translation backend is configured") }
        throw TranslationError("no backend could translate \(pair): " + failures.joined(separator: "; "))
    }

    /// The clock a backend's answer races its deadline on: real time, not `timing.clock`. The
    /// deadline itself (what is left of it for a retry) is on `timing.clock`; the race's timer
    /// is not, because a test's hand-moved clock counts every sleep, and the retries' backoff is
    /// what those tests check.
    static let raceClock = ParleyClock.continuous

    /// The longest translation accepted for `text`: ten times its length plus 200 characters.
    /// Anything longer is a broken or hostile server's answer, not a translation.
    public static func longestTranslation(of text: String) -> Int { 10 * text.count + 200 }

    /// One backend's go at a turn: retries of transient failures, within the deadline.
    private func attempt(_ backend: Backend, _ text: String, from source: String, to target: String) async throws -> RoutedTranslation {
        let deadline = timing.clock.now + timing.deadline
        var retries = 0
        while true {
            let remaining = deadline - timing.clock.now
            guard remaining > .zero else { throw Unanswered(timing.noAnswer) }
            do {
                return try await Self.raceClock.withDeadline(remaining, timing.noAnswer) {
                    try await backend.translator.translateNamingRoute(text, from: source, to: target)
                }
            } catch let error as DeadlinePassed {
                throw Unanswered(error.description)
            } catch let error as BackendError {
                switch error.kind {
                case .permanent:
                    throw error
                case .rateLimited(let wait):
                    coolingDown.withLock { $0[backend.name] = timing.clock.now + wait }
                    throw error
                case .transient:
                    guard retries < timing.backoff.count else {
                        throw Unanswered("\(error) (after \(retries) retries)")
                    }
                    let pause = timing.backoff[retries]
                    retries += 1
                    guard timing.clock.now + pause < deadline else {
                        throw Unanswered("\(error) (no time left in the \(timing.deadline.milliseconds) ms deadline for a retry)")
                    }
                    try await timing.clock.sleep(for: pause)
                }
            }
        }
    }

    /// Asks every backend a fixed word, all at once, each in the first of `pairs` it offers,
    /// within the deadline, once the backend has prepared the pair (a local pipeline starting
    /// cold, or the two of a pivot, is given its own cold-start allowance: that is not a
    /// failure). A backend that does not answer has its circuit broken now, so no turn waits
    /// for it; it is probed in the background until it answers. A backend standing by
    /// (`Backend.standby`) is left alone in the pairs an earlier backend offers. Returns a line
    /// for each backend that does not answer, for the log.
    public func checkBackends(_ pairs: [LanguagePair]) async -> [String] {
        let timing = self.timing
        return await withTaskGroup(of: String?.self) { group in
            for (index, backend) in backends.enumerated() {
                guard let pair = pairs.first(where: { backend.checked(in: $0, behind: backends[..<index]) }) else { continue }
                group.addTask { [circuits] in
                    try? await backend.translator.prepare(pair)
                    guard let problem = await Circuits.problem(of: backend.translator, pair: pair, timing: timing) else { return nil }
                    circuits.open(backend, pair: pair, reason: problem)
                    return "translation backend \(backend.name) does not answer (\(problem)); turns skip it until it does, "
                        + "and it is asked again every \(timing.coolDown.seconds) s or more; check that it runs and its [translator] url"
                }
            }
            return await group.reduce(into: [String]()) { lines, line in
                if let line { lines.append(line) }
            }
        }
    }

    /// Forgets cool-downs, broken circuits and cached translations (tests).
    func reset() {
        coolingDown.withLock { $0.removeAll() }
        circuits.stopProbing()
        cache.removeAll()
    }

    /// Whether `name`'s circuit is broken: it failed, and has not answered a probe since.
    public func isSkipping(_ name: String) -> Bool { circuits.broken(name) != nil }

    /// Waits until the probes now under way have finished (tests).
    func probesFinished() async { await circuits.probesFinished() }

    /// When `name` may be asked again after a 429, if it is cooling down.
    public func coolingDownUntil(_ name: String) -> ParleyClock.Instant? {
        coolingDown.withLock { $0[name] }.flatMap { $0 > timing.clock.now ? $0 : nil }
    }
}

/// A backend gave no answer to a turn: its transient failures outlasted the retries, or the
/// deadline passed. It breaks the backend's circuit.
struct Unanswered: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The chain's broken circuits: backends skipped since they failed, each with a probe that
/// asks it again after a cool-down until it answers.
final class Circuits: Sendable {
    private struct Broken {
        var since: ParleyClock.Instant
        var reason: String
        var probe: Task<Void, Never>?
    }

    private let timing: TranslatorChain.Timing
    private let state = Mutex<[String: Broken]>([:])

    init(timing: TranslatorChain.Timing) {
        self.timing = timing
    }

    /// Why `name` is skipped and since when, if its circuit is broken.
    func broken(_ name: String) -> String? {
        let now = timing.clock.now
        return state.withLock { $0[name] }.map { "\($0.reason), \((now - $0.since).seconds) s ago" }
    }

    /// Breaks `backend`'s circuit (if it is not broken already) and starts its probe.
    func open(_ backend: TranslatorChain.Backend, pair: LanguagePair, reason: String) {
        let (timing, name, translator) = (self.timing, backend.name, backend.translator)
        let since = timing.clock.now
        let opened = state.withLock { broken -> Bool in
            guard broken[name] == nil else { return false }
            broken[name] = Broken(since: since, reason: reason)
            return true
        }
        guard opened else { return }
        let probe = Task { [weak self] in
            var wait = timing.coolDown
            while !Task.isCancelled {
                do {
                    try await timing.clock.sleep(for: wait)
                } catch {
                    return
                }
                guard !Task.isCancelled else { return }
                if await Self.problem(of: translator, pair: pair, timing: timing) == nil {
                    self?.close(name)
                    return
                }
                wait = min(wait * 2, timing.longestCoolDown)
            }
        }
        let keep = state.withLock { broken -> Bool in
            guard broken[name] != nil else { return false }
            broken[name]?.probe = probe
            return true
        }
        if !keep { probe.cancel() }
    }

    /// Nil when the backend answers a probe within the deadline (a translation, or a refusal
    /// that shows it is up: a 4xx, a 429); else what went wrong.
    static func problem(of translator: any Translator, pair: LanguagePair, timing: TranslatorChain.Timing) async -> String? {
        do {
            _ = try await TranslatorChain.raceClock.withDeadline(timing.deadline, timing.noAnswer) {
                try await translator.translate(fixedProbeText, from: pair.source, to: pair.target)
            }
            return nil
        } catch let error as BackendError {
            return error.kind == .transient ? error.description : nil
        } catch {
            return "\(error)"
        }
    }

    /// Closes `name`'s circuit and stops its probe.
    func close(_ name: String) {
        state.withLock { $0.removeValue(forKey: name) }?.probe?.cancel()
    }

    /// Closes every circuit and cancels the probes.
    func stopProbing() {
        let probes = state.withLock { broken -> [Task<Void, Never>] in
            defer { broken.removeAll() }
            return broken.values.compactMap(\.probe)
        }
        probes.forEach { $0.cancel() }
    }

    /// Waits for the probes now under way.
    func probesFinished() async {
        let probes = state.withLock { $0.values.compactMap(\.probe) }
        for probe in probes { await probe.value }
    }
}
