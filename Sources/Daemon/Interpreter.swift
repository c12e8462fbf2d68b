import Dispatch
import Foundation
import Logging
import ParleyAudio
import ParleyControl
import ParleyConversation
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleySynthesis
import ParleyTranslation
import Synchronization

/// The engines one conversation runs on, each behind its protocol.
public struct Engines {
    /// The warm recognizer for a language, loaded the first time it is asked for; nil when the
    /// language has no model. Called only on the recognition queue.
    public var recognizer: (String) -> (any SpeechRecognizer)?
    /// Whether a language has a recognizer model. Cheap, and safe from any thread.
    public var canHear: @Sendable (String) -> Bool
    public var translator: any Translator
    public var synthesizer: any SpeechSynthesizer
    public var playback: any AudioPlayback

    public init(
        recognizer: @escaping (String) -> (any SpeechRecognizer)?, canHear: @escaping @Sendable (String) -> Bool,
        translator: any Translator, synthesizer: any SpeechSynthesizer, playback: any AudioPlayback
    ) {
        self.recognizer = recognizer
        self.canHear = canHear
        self.translator = translator
        self.synthesizer = synthesizer
        self.playback = playback
    }
}

/// A request the conversation cannot take now, with what to do instead.
public struct ConversationRefusal: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs the conversation: performs what the state machine decides, on the right threads.
///
/// - The capture loop (the caller of `run(openCapture:)`) only measures levels, endpoints and
///   hands audio on; it never waits for an engine (a recording, which is not real time, waits
///   for the turn in flight so that it gives the same turns as a live microphone).
/// - Recognition runs on its own serial queue, fed while the person speaks.
/// - Synthesis and playback run on another; translation on the concurrency pool.
/// - History writes are asynchronous; a turn is reported once it is committed.
public final class Interpreter: @unchecked Sendable {
    // Engines are confined: recognizers to `recognitionQueue`, synthesizer and playback to
    // `speechQueue`. Everything mutable and shared sits in `shared`.
    private let engines: Engines
    private let history: HistoryWriter
    private let logger: Logger
    private let events: EventBus
    private let observer: Observer?

    private let shared: Mutex<Shared>
    private let signal = NSCondition()
    private let stopping = Atomic<Bool>(false)
    private let abortSpeech = Atomic<Bool>(false)
    /// Set once the capture loop has ended: late translations and speech are dropped, so
    /// nothing touches a device after it is closed.
    private let closing = Atomic<Bool>(false)
    private let recognitionQueue = DispatchQueue(label: "parley.recognition")
    private let speechQueue = DispatchQueue(label: "parley.speech")
    private let pendingWrites = DispatchGroup()
    private let clock = ContinuousClock()
    /// One settings change at a time, so two clients cannot undo each other's.
    private let settingsChange = NSLock()
    // Partial hypotheses; touched only on `recognitionQueue`.
    private var samplesSincePartial = 0
    private var lastPartial: String?
    /// CPU the recognizer used, and the speech it was given; touched only on `recognitionQueue`.
    private var recognitionCPU: Duration = .zero
    private var recognizedSamples = 0
    /// How much audio passes between two `partial` events (about 200 ms).
    static let partialInterval = captureSampleRate / 5

    struct Shared {
        var machine: ConversationMachine
        var endpointer: Endpointer
        var settings: RuntimeSettings
        var draft: TurnDraft?
        /// The language of the utterance being heard (fixed when it starts).
        var utteranceLanguage: String?
        var turnCount = 0
        var userPaused = false
        var deviceLost = false
        /// The language the utterance being heard will be translated into (fixed when it starts).
        var utteranceTarget: String?
        /// The language of the last turn that could not be translated, for the spoken notice.
        var noticeLanguage: String?

        /// Feeds the machine and applies what belongs to shared state right here.
        mutating func handle(_ event: ConversationMachine.Event) -> [ConversationMachine.Action] {
            absorb(machine.handle(event))
        }

        /// Applies the machine's actions that concern shared state (endpointer resets, the
        /// utterance's languages) and returns the rest for `perform`.
        mutating func absorb(_ actions: [ConversationMachine.Action]) -> [ConversationMachine.Action] {
            for action in actions {
                switch action {
                case .resetEndpointer: endpointer.reset()
                case .startRecognition(let speaker):
                    utteranceLanguage = settings.language(of: speaker)
                    utteranceTarget = settings.language(of: speaker.other)
                default: break
                }
            }
            return actions.filter { $0 != .resetEndpointer }
        }

        /// Takes the turn in flight to be recorded. The write is registered with `writes` under
        /// the same lock as the state change, so whoever sees the turn end also waits for it.
        mutating func takeDraftForRecording(_ writes: DispatchGroup) -> TurnDraft? {
            defer { draft = nil }
            if draft != nil { writes.enter() }
            return draft
        }

        /// What clients see as the state.
        var stateName: String {
            deviceLost ? "device_lost" : machine.state.name
        }
    }

    /// What is known about the turn in flight.
    struct TurnDraft {
        var speaker: Speaker
        var sourceLang: String
        var targetLang: String
        /// When the end of speech was decided (or the text typed).
        var endOfSpeech: ContinuousClock.Instant
        var recognition: Recognition?
        var translation: String?
        /// The translation's pronunciation, in IPA.
        var ipa: String?
        var error: String?
        var lowConfidence = false
        var asrMs: Int?
        var mtMs: Int?
        var ttsMs: Int?
        var responseMs: Int?
        /// Told the committed turn (typed turns wait for it).
        var completion: (@Sendable (Result<TurnRecord, any Error>) -> Void)?
        /// A past turn spoken again (`replay`): not translated again, not stored again.
        var replaying: TurnRecord?
    }

    /// Told that the capture loop goes round (systemd's watchdog) and that the state changed
    /// (systemd's status line). Both are called on the thread at hand and must be quick.
    public struct Observer: Sendable {
        public var heartbeat: @Sendable () -> Void
        public var stateChanged: @Sendable (Snapshot) -> Void

        public init(heartbeat: @escaping @Sendable () -> Void, stateChanged: @escaping @Sendable (Snapshot) -> Void) {
            self.heartbeat = heartbeat
            self.stateChanged = stateChanged
        }
    }

    public init(
        settings: RuntimeSettings, endpoint: EndpointSettings, repeatPrompt: Bool, engines: Engines,
        history: HistoryWriter, events: EventBus, logger: Logger, observer: Observer? = nil
    ) {
        self.observer = observer
        self.engines = engines
        self.history = history
        self.events = events
        self.logger = logger
        var endpoint = endpoint
        endpoint.silenceMs = settings.silenceMs
        let machine = ConversationMachine(
            settings: .init(
                mode: settings.mode, echoTail: samples(ms: settings.echoTailMs),
                hearable: Self.hearable(settings, engines.canHear), repeatPrompt: repeatPrompt))
        self.shared = Mutex(
            Shared(machine: machine, endpointer: Endpointer(settings: endpoint, sampleRate: captureSampleRate), settings: settings))
    }

    private static func hearable(_ settings: RuntimeSettings, _ canHear: (String) -> Bool) -> Set<Speaker> {
        Set(Speaker.allCases.filter { canHear(settings.language(of: $0)) })
    }

    // MARK: - Queries

    public struct Snapshot: Sendable {
        public var state: String
        public var speaker: Speaker?
        public var turns: Int
        public var settings: RuntimeSettings
    }

    public var snapshot: Snapshot {
        shared.withLock { Snapshot(state: $0.stateName, speaker: $0.machine.state.speaker, turns: $0.turnCount, settings: $0.settings) }
    }

    /// True when `speaker`'s language has a recognizer.
    public func isHearable(_ speaker: Speaker) -> Bool {
        engines.canHear(snapshot.settings.language(of: speaker))
    }

    /// True when `language` has a recognizer model.
    public func canHear(_ language: String) -> Bool { engines.canHear(language) }

    /// True when `language` has a voice (safe from any thread, see `SpeechSynthesizer.hasVoice`).
    public func canSpeak(_ language: String) -> Bool { engines.synthesizer.hasVoice(for: language) }

    /// The translator the conversation uses (for `retry` and `languages`).
    public var translator: any Translator { engines.translator }

    /// Whether a turn no backend could translate is answered with a spoken notice to the
    /// speaker (`[translator] failure_notice`); off until set.
    public func setFailureNotice(_ on: Bool) {
        shared.withLock { $0.machine.settings.failureNotice = on }
    }

    // MARK: - Capture loop

    /// Captures until the recording ends or `stop()` is called, then settles the turn in flight
    /// and waits for the history writes. Runs on the caller's thread.
    ///
    /// A live device that fails is closed and reopened with backoff (state `device_lost`); pause
    /// closes it and resume reopens it.
    public func run(openCapture: () throws(AudioError) -> any AudioCapture) throws(AudioError) {
        var capture: (any AudioCapture)? = try openCapture()
        let isRealTime = capture?.isRealTime ?? true
        var position: SampleTime = 0
        var backoff: TimeInterval = 0.5
        var pendingLevel: Levels?
        defer {
            finishInput(at: position)
            capture?.close()
        }
        while !stopping.load(ordering: .relaxed) {
            observer?.heartbeat()
            if shared.withLock({ $0.userPaused }) {
                if let open = capture {
                    open.close()
                    capture = nil
                    logger.info("microphone released (paused)")
                }
                waitForSignal(seconds: 1)
                continue
            }
            guard let current = capture else {
                do {
                    capture = try openCapture()
                    deviceRestored()
                } catch {
                    deviceLost(error)
                    waitForSignal(seconds: backoff)
                    backoff = min(backoff * 2, 10)
                }
                continue
            }
            let frame: [Int16]
            do {
                frame = try current.read()
                backoff = 0.5
            } catch {
                guard isRealTime else { throw error }
                current.close()
                capture = nil
                deviceLost(error)
                // A device that opens but cannot be read must not be retried in a tight loop.
                waitForSignal(seconds: backoff)
                backoff = min(backoff * 2, 10)
                continue
            }
            if frame.isEmpty { break }
            let start = position
            position += SampleTime(frame.count)
            let level = Levels(measuring: frame)
            publishLevel(level, pending: &pendingLevel)
            process(frame, at: start, level: level, now: position)
            if !isRealTime { waitWhileBusy(until: .distantFuture, unlessStopping: true) }
        }
    }

    private func process(_ frame: [Int16], at start: SampleTime, level: Levels, now: SampleTime) {
        var audio: [Int16]?
        let actions = locked({ state -> [ConversationMachine.Action] in
            var actions = state.handle(.clock(now: now))
            guard state.machine.acceptsAudio else { return actions }
            let wasInSpeech = state.endpointer.isInSpeech
            switch state.endpointer.process(frame, at: start, rmsDB: level.rmsDB) {
            case .started(let at, let preroll)?:
                actions += state.handle(.speechStarted(at: at))
                audio = preroll
            case .ended(let end, _)?:
                actions += state.handle(.speechEnded(at: end))
            case .discarded?:
                actions += state.handle(.speechDiscarded)
            case nil:
                if wasInSpeech { audio = frame }
            }
            return actions
        }, then: { state in
            // Queued after the utterance was opened, in the same lock.
            guard let audio, let language = state.utteranceLanguage else { return }
            let speaker = state.machine.state.speaker
            self.recognitionQueue.async {
                do {
                    guard let recognizer = self.engines.recognizer(language) else { return }
                    try self.measuringCPU { try recognizer.feed(audio) }
                    self.recognizedSamples += audio.count
                    self.publishPartial(from: recognizer, speaker: speaker, language: language, fed: audio.count)
                } catch {
                    self.report("recognition failed: \(error)")
                }
            }
        })
        perform(actions)
    }

    /// Runs `body` under the lock and queues the recognizer work its actions call for in that
    /// same lock (then `then`), so the recognizer sees opens, audio, finishes and cancels in the
    /// order the machine decided them, whichever thread decided.
    private func locked(
        _ body: (inout Shared) -> [ConversationMachine.Action], then: ((inout Shared) -> Void)? = nil
    ) -> [ConversationMachine.Action] {
        shared.withLock { state in
            let actions = body(&state)
            for action in actions {
                switch action {
                case .startRecognition:
                    let language = state.utteranceLanguage
                    recognitionQueue.async {
                        guard let language else { return }
                        self.samplesSincePartial = 0
                        self.lastPartial = nil
                        do {
                            try self.engines.recognizer(language)?.startUtterance()
                        } catch {
                            self.report("recognition failed: \(error)")
                        }
                    }
                case .finishRecognition(let speaker):
                    state.draft = TurnDraft(
                        speaker: speaker, sourceLang: state.utteranceLanguage ?? state.settings.language(of: speaker),
                        targetLang: state.utteranceTarget ?? state.settings.language(of: speaker.other), endOfSpeech: clock.now)
                    let language = state.draft?.sourceLang
                    recognitionQueue.async { self.finishRecognition(speaker, language: language) }
                case .cancelRecognition:
                    let language = state.utteranceLanguage
                    recognitionQueue.async {
                        guard let language else { return }
                        self.engines.recognizer(language)?.cancelUtterance()
                    }
                default:
                    break
                }
            }
            then?(&state)
            return actions
        }
    }

    /// On `recognitionQueue`: the words so far, when they changed, every `partialInterval`.
    private func publishPartial(from recognizer: any SpeechRecognizer, speaker: Speaker?, language: String, fed: Int) {
        samplesSincePartial += fed
        guard samplesSincePartial >= Self.partialInterval, events.hasSubscribers, let speaker else { return }
        samplesSincePartial = 0
        guard let words = recognizer.partial(), words != lastPartial else { return }
        lastPartial = words
        events.publish(EventType.partial, TextEvent(speaker: speaker.rawValue, language: language, text: words))
    }

    /// Levels go out at about 25 Hz: two 20 ms periods per event.
    private func publishLevel(_ level: Levels, pending: inout Levels?) {
        guard let first = pending else {
            pending = level
            return
        }
        pending = nil
        guard events.hasSubscribers else { return }
        let power = (pow(10, first.rmsDB / 10) + pow(10, level.rmsDB / 10)) / 2
        events.publish(EventType.level, LevelEvent(rmsDB: max(Levels.silenceDB, 10 * log10(power)), peakDB: max(first.peakDB, level.peakDB)))
    }

    /// Asks the capture loop to end after the period it is reading.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        wake()
    }

    /// At the end of a recording an utterance in progress is still processed; on stop it is
    /// abandoned. Either way the turn already in flight is finished (within `stopTimeout`) and
    /// its history write waited for.
    private func finishInput(at position: SampleTime) {
        let stopped = stopping.load(ordering: .relaxed)
        let actions = locked { state -> [ConversationMachine.Action] in
            guard case .hearing = state.machine.state else { return [] }
            if stopped {
                state.endpointer.reset()
                return state.handle(.speechDiscarded)
            }
            _ = state.endpointer.forceEnd(at: position)
            return state.handle(.speechEnded(at: position))
        }
        perform(actions)
        waitWhileBusy(until: stopped ? Date(timeIntervalSinceNow: Self.stopTimeout) : .distantFuture, unlessStopping: false)
        shared.withLock { _ in closing.store(true, ordering: .relaxed) }
        _ = pendingWrites.wait(timeout: .now() + Self.stopTimeout)
        // Playback is closed on its own queue once that queue is idle; a queue that never
        // drains (a hung device) is left alone rather than closed under its feet.
        let speechDone = onQueue(speechQueue, within: Self.stopTimeout) { self.engines.playback.close() }
        let recognitionDone = onQueue(recognitionQueue, within: Self.stopTimeout) { self.logRecognitionCost() }
        if !speechDone || !recognitionDone {
            logger.warning("an engine did not finish in time; exiting anyway")
        }
    }

    /// Runs `work` on `queue` and waits for it at most `seconds`; false if it did not run in time.
    private func onQueue(_ queue: DispatchQueue, within seconds: TimeInterval, _ work: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async {
            work()
            done.signal()
        }
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// On `recognitionQueue`.
    private func logRecognitionCost() {
        guard recognizedSamples > 0 else { return }
        let cpu = Double(recognitionCPU.components.seconds) + Double(recognitionCPU.components.attoseconds) / 1e18
        let speech = Double(recognizedSamples) / Double(captureSampleRate)
        logger.notice(
            "recognition used \(String(format: "%.3f", cpu)) s of CPU for \(String(format: "%.2f", speech)) s of speech (\(String(format: "%.3f", cpu / speech)) of a core)")
    }

    /// On `recognitionQueue`: runs `work`, adding the CPU time this thread spent to `recognitionCPU`.
    private func measuringCPU<T>(_ work: () throws -> T) rethrows -> T {
        func now() -> Duration {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }
        let start = now()
        defer { recognitionCPU += now() - start }
        return try work()
    }

    /// How long a stop waits for the turn in flight.
    static let stopTimeout: TimeInterval = 10

    /// Waits while a turn is in flight: a recording does so after every period (unless a stop
    /// was asked for); a stop does so once, up to a deadline.
    private func waitWhileBusy(until deadline: Date, unlessStopping: Bool) {
        signal.lock()
        defer { signal.unlock() }
        while shared.withLock({ $0.machine.isBusy }) && Date() < deadline {
            if unlessStopping && stopping.load(ordering: .relaxed) { return }
            _ = signal.wait(until: min(deadline, Date(timeIntervalSinceNow: 1)))
        }
    }

    private func waitForSignal(seconds: TimeInterval) {
        signal.lock()
        defer { signal.unlock() }
        if !stopping.load(ordering: .relaxed) {
            _ = signal.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }

    private func wake() {
        signal.lock()
        signal.broadcast()
        signal.unlock()
    }

    private func deviceLost(_ error: AudioError) {
        var first = false
        let actions = locked { state -> [ConversationMachine.Action] in
            guard !state.deviceLost else { return [] }
            state.deviceLost = true
            first = true
            return state.userPaused ? [] : state.handle(.pause)
        }
        if first {
            report("microphone lost, retrying: \(error)")
            publishState()
        }
        perform(actions)
    }

    private func deviceRestored() {
        let (actions, wasLost) = shared.withLock { state -> ([ConversationMachine.Action], Bool) in
            guard state.deviceLost else { return ([], false) }
            state.deviceLost = false
            return (state.userPaused ? [] : state.handle(.resume), true)
        }
        if wasLost {
            logger.notice("microphone is back")
            publishState()
        }
        perform(actions)
    }

    // MARK: - Commands

    /// Push-to-talk: `speaker` speaks next.
    public func listen(_ speaker: Speaker) throws(ConversationRefusal) {
        guard isHearable(speaker) else {
            throw ConversationRefusal("speaker \(speaker.rawValue) cannot be heard (no speech model); they can type with `parley say`")
        }
        perform(shared.withLock { $0.handle(.listen(speaker)) })
    }

    /// Ends the utterance being heard, or cuts the speech being played.
    public func stopTurn() {
        perform(locked { $0.handle(.stop) })
    }

    /// Releases the microphone; a turn in flight finishes first.
    public func pause() {
        perform(locked { state in
            state.userPaused = true
            return state.deviceLost ? [] : state.handle(.pause)
        })
        wake()
    }

    /// Takes the microphone back.
    public func resume() {
        perform(shared.withLock { state in
            state.userPaused = false
            return state.deviceLost ? [] : state.handle(.resume)
        })
        wake()
    }

    /// A typed turn: translated, spoken and logged. Returns once the turn is committed.
    public func say(_ speaker: Speaker, text: String) async throws -> TurnRecord {
        let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !words.isEmpty else { throw ConversationRefusal("the text is empty; give the words to translate") }
        let now = clock.now
        return try await withCheckedThrowingContinuation { continuation in
            let actions = shared.withLock { state -> [ConversationMachine.Action] in
                guard !closing.load(ordering: .relaxed) else { return [] }
                let actions = state.handle(.typed(speaker, text: words))
                guard !actions.isEmpty else { return [] }
                state.draft = TurnDraft(
                    speaker: speaker, sourceLang: state.settings.language(of: speaker),
                    targetLang: state.settings.language(of: speaker.other), endOfSpeech: now,
                    recognition: Recognition(text: words, confidence: nil),
                    completion: { continuation.resume(with: $0) })
                return actions
            }
            guard !actions.isEmpty else {
                continuation.resume(throwing: ConversationRefusal("busy with a turn (\(snapshot.state)); try again when Parley is listening"))
                return
            }
            perform(actions)
        }
    }

    /// Speaks a past turn's translation again, as a turn of its speaker (echo guard and all),
    /// without translating or storing it again. Returns once it was spoken.
    public func replay(_ turn: TurnRecord) async throws -> TurnRecord {
        guard let speaker = Speaker(rawValue: turn.speaker), let translation = turn.translatedText else {
            throw ConversationRefusal("turn \(turn.id ?? 0) has no translation to speak")
        }
        let now = clock.now
        return try await withCheckedThrowingContinuation { continuation in
            let actions = shared.withLock { state -> [ConversationMachine.Action] in
                guard !closing.load(ordering: .relaxed) else { return [] }
                let actions = state.handle(.typed(speaker, text: turn.sourceText))
                guard !actions.isEmpty else { return [] }
                state.draft = TurnDraft(
                    speaker: speaker, sourceLang: turn.sourceLang, targetLang: turn.targetLang, endOfSpeech: now,
                    recognition: Recognition(text: turn.sourceText, confidence: nil), translation: translation,
                    completion: { continuation.resume(with: $0) }, replaying: turn)
                return actions
            }
            guard !actions.isEmpty else {
                continuation.resume(throwing: ConversationRefusal("busy with a turn (\(snapshot.state)); try again when Parley is listening"))
                return
            }
            perform(actions)
        }
    }

    /// What `set` can change; nil fields stay as they are.
    public struct Change: Sendable {
        public var speakerA: String?
        public var speakerB: String?
        public var mode: ConversationMode?
        public var silenceMs: Int?
        public var echoTailMs: Int?
        public var minConfidence: Double?

        public init(
            speakerA: String? = nil, speakerB: String? = nil, mode: ConversationMode? = nil, silenceMs: Int? = nil,
            echoTailMs: Int? = nil, minConfidence: Double? = nil
        ) {
            self.speakerA = speakerA
            self.speakerB = speakerB
            self.mode = mode
            self.silenceMs = silenceMs
            self.echoTailMs = echoTailMs
            self.minConfidence = minConfidence
        }
    }

    /// Changes settings; languages and mode apply from the next turn. Throws, changing nothing,
    /// when a language cannot be spoken or translated.
    @discardableResult
    public func apply(_ change: Change) throws(ConversationRefusal) -> RuntimeSettings {
        settingsChange.lock()
        defer { settingsChange.unlock() }
        var next = snapshot.settings
        next.speakerA = change.speakerA ?? next.speakerA
        next.speakerB = change.speakerB ?? next.speakerB
        next.mode = change.mode ?? next.mode
        next.silenceMs = change.silenceMs ?? next.silenceMs
        next.echoTailMs = change.echoTailMs ?? next.echoTailMs
        next.minConfidence = change.minConfidence ?? next.minConfidence
        try check(next)
        return commit(next)
    }

    /// Exchanges the two speakers' languages, from the next turn.
    @discardableResult
    public func swapLanguages() -> RuntimeSettings {
        settingsChange.lock()
        defer { settingsChange.unlock() }
        var next = snapshot.settings
        swap(&next.speakerA, &next.speakerB)
        return commit(next)
    }

    private func check(_ settings: RuntimeSettings) throws(ConversationRefusal) {
        for (key, language) in [("speaker_a", settings.speakerA), ("speaker_b", settings.speakerB)] {
            guard language.count == 2, language.allSatisfy({ $0.isASCII && $0.isLowercase }) else {
                throw ConversationRefusal("\(key) \"\(language)\" is not a two-letter ISO 639-1 code such as \"en\"")
            }
            guard engines.synthesizer.hasVoice(for: language) else {
                throw ConversationRefusal("\(key): espeak-ng has no voice for \"\(language)\"; see `espeak-ng --voices`")
            }
        }
        guard settings.speakerA != settings.speakerB else {
            throw ConversationRefusal("speaker_a and speaker_b are both \"\(settings.speakerA)\"; give them different languages")
        }
        for pair in [LanguagePair(settings.speakerA, settings.speakerB), LanguagePair(settings.speakerB, settings.speakerA)]
        where !engines.translator.supports(pair) {
            throw ConversationRefusal("no installed translation for \(pair); install the Apertium pair (e.g. apertium-\(pair.source)-\(pair.target))")
        }
        guard (50...10_000).contains(settings.silenceMs) else { throw ConversationRefusal("silence_ms must be from 50 to 10000") }
        guard (0...10_000).contains(settings.echoTailMs) else { throw ConversationRefusal("echo_tail_ms must be from 0 to 10000") }
        guard (0...1).contains(settings.minConfidence) else { throw ConversationRefusal("min_confidence must be from 0 to 1") }
    }

    private func commit(_ settings: RuntimeSettings) -> RuntimeSettings {
        let hearable = Self.hearable(settings, engines.canHear)
        let actions = shared.withLock { state -> [ConversationMachine.Action] in
            state.settings = settings
            state.endpointer.settings.silenceMs = settings.silenceMs
            var machineSettings = state.machine.settings
            machineSettings.mode = settings.mode
            machineSettings.echoTail = samples(ms: settings.echoTailMs)
            machineSettings.hearable = hearable
            return state.absorb(state.machine.reconfigure(machineSettings))
        }
        perform(actions)
        // Keep the new languages' engines warm before their first turn.
        for language in [settings.speakerA, settings.speakerB] {
            recognitionQueue.async { _ = self.engines.recognizer(language) }
        }
        let translator = engines.translator
        Task {
            for pair in [LanguagePair(settings.speakerA, settings.speakerB), LanguagePair(settings.speakerB, settings.speakerA)] {
                try? await translator.prepare(pair)
            }
        }
        logger.notice("settings changed", metadata: ["a": "\(settings.speakerA)", "b": "\(settings.speakerB)", "mode": "\(settings.mode.rawValue)"])
        publishState()
        return settings
    }

    // MARK: - Performing actions

    private func perform(_ actions: [ConversationMachine.Action]) {
        for action in actions {
            switch action {
            case .startRecognition, .cancelRecognition:
                break  // queued by `locked`
            case .finishRecognition(let speaker):
                publish(EventType.speechEnd, speaker: speaker)  // the work was queued by `locked`
            case .translate(let speaker, let text):
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                Task { await self.translate(text, spokenBy: speaker) }
            case .speak(let speaker, let text):
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                // Cleared here, not on the speech queue, so a stop that comes meanwhile is kept.
                abortSpeech.store(false, ordering: .relaxed)
                speechQueue.async { self.speak(text, for: speaker, prompt: false) }
            case .askToRepeat(let speaker):
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                let language = shared.withLock { $0.draft?.sourceLang ?? $0.settings.language(of: speaker) }
                abortSpeech.store(false, ordering: .relaxed)
                speechQueue.async { self.speak(RepeatPrompt.text(for: language), for: speaker, prompt: true) }
            case .tellUntranslated(let speaker):
                // The failed turn is already stored: the language comes from the settings that
                // turn was translated with, kept in `noticeLanguage`.
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                let language = shared.withLock { $0.noticeLanguage ?? $0.settings.language(of: speaker) }
                abortSpeech.store(false, ordering: .relaxed)
                speechQueue.async { self.speak(UntranslatedNotice.text(for: language), for: speaker, prompt: true, language: language) }
            case .stopSpeaking:
                abortSpeech.store(true, ordering: .relaxed)
            case .reportNoSpeech(let speaker):
                logger.info("nothing recognized; still listening", metadata: ["speaker": "\(speaker.rawValue)"])
                publish(EventType.noSpeech, speaker: speaker)
            case .stateChanged(let state):
                logger.debug("state", metadata: ["state": "\(state.name)", "speaker": "\(state.speaker?.rawValue ?? "-")"])
                if case .hearing(let speaker, _) = state { publish(EventType.speechStart, speaker: speaker) }
                publishState()
                wake()
            case .releaseCapture, .reopenCapture:
                wake()  // the capture loop follows `userPaused`
            case .resetEndpointer:
                break  // applied inside `Shared.handle`
            }
        }
    }

    /// Shutting down: the turn in flight is stored as it stands (untranslated or unspoken), and
    /// whoever waits for it (`say`) is answered.
    private func abandonTurn() {
        if let draft = shared.withLock({ $0.takeDraftForRecording(pendingWrites) }) {
            record(draft)
        }
    }

    private func milliseconds(since instant: ContinuousClock.Instant) -> Int {
        let elapsed = clock.now - instant
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    /// On `recognitionQueue`.
    private func finishRecognition(_ speaker: Speaker, language: String?) {
        var recognition = Recognition(text: "", confidence: nil)
        if let language, let recognizer = engines.recognizer(language) {
            do {
                recognition = try measuringCPU { try recognizer.finishUtterance() }
            } catch {
                report("recognition failed: \(error)")
            }
        }
        let finished = recognition
        let actions = shared.withLock { state -> [ConversationMachine.Action] in
            let confident = (finished.confidence ?? 1) >= state.settings.minConfidence
            if let end = state.draft?.endOfSpeech {
                state.draft?.asrMs = milliseconds(since: end)
            }
            state.draft?.recognition = finished
            state.draft?.lowConfidence = !finished.text.isEmpty && !confident
            let actions = state.handle(.recognized(text: finished.text, confident: confident))
            if actions.contains(.askToRepeat(speaker)) {
                state.draft?.error = "low confidence; the speaker was asked to repeat"
            } else if state.draft?.lowConfidence == true {
                state.draft?.error = "low confidence (\(finished.confidence ?? 0) < \(state.settings.minConfidence))"
            }
            return actions
        }
        if !finished.text.isEmpty {
            logger.info("heard", metadata: ["speaker": "\(speaker.rawValue)", "text": "\(finished.text)"])
            events.publish(
                EventType.transcript,
                TextEvent(speaker: speaker.rawValue, language: language ?? "", text: finished.text, confidence: finished.confidence))
        }
        perform(actions)
    }

    private func translate(_ text: String, spokenBy speaker: Speaker) async {
        let (source, target, replayed) = shared.withLock { state in
            (
                state.draft?.sourceLang ?? state.settings.language(of: speaker), state.draft?.targetLang ?? state.settings.language(of: speaker.other),
                state.draft?.replaying?.translatedText
            )
        }
        let started = clock.now
        do {
            let translation = if let replayed { replayed } else { try await engines.translator.translate(text, from: source, to: target) }
            guard !translation.isEmpty else {
                throw TranslationError("the translation of \"\(text)\" came back empty")
            }
            let elapsed = milliseconds(since: started)
            let actions = shared.withLock { state in
                state.draft?.translation = translation
                state.draft?.mtMs = elapsed
                return state.handle(.translated(text: translation))
            }
            events.publish(EventType.translation, TextEvent(speaker: speaker.rawValue, language: target, text: translation))
            perform(actions)
        } catch {
            report("translation failed; the turn is kept untranslated: \(error)")
            let (actions, draft) = shared.withLock { state in
                state.draft?.error = "\(error)"
                state.draft?.mtMs = milliseconds(since: started)
                state.noticeLanguage = source
                return (state.handle(.translationFailed), state.takeDraftForRecording(pendingWrites))
            }
            if let draft { record(draft) }
            perform(actions)
        }
    }

    private struct Aborted: Error {}

    /// On `speechQueue`. Speaks the translation of `speaker`'s turn to the other side, or a
    /// prompt to `speaker` in their own language.
    private func speak(_ text: String, for speaker: Speaker, prompt: Bool, language fixed: String? = nil) {
        let language = fixed ?? shared.withLock { state in
            prompt ? (state.draft?.sourceLang ?? state.settings.language(of: speaker)) : (state.draft?.targetLang ?? state.settings.language(of: speaker.other))
        }
        let listener = prompt ? speaker : speaker.other
        guard !closing.load(ordering: .relaxed) else {
            abandonTurn()
            return
        }
        let started = clock.now
        var first = true
        var produced = 0
        do {
            produced = try engines.synthesizer.synthesize(text, language: language) { chunk in
                if abortSpeech.load(ordering: .relaxed) { throw Aborted() }
                if first {
                    first = false
                    let actions = shared.withLock { state in
                        state.draft?.ttsMs = milliseconds(since: started)
                        if let end = state.draft?.endOfSpeech, !prompt {
                            state.draft?.responseMs = milliseconds(since: end)
                        }
                        return state.handle(.speakingStarted)
                    }
                    publish(EventType.speakingStart, speaker: listener, language: language)
                    perform(actions)
                }
                try engines.playback.write(chunk)
            }
            try engines.playback.drain()
            // After the audio is out, so it costs the listener nothing.
            if !prompt, let ipa = engines.synthesizer.ipa(text, language: language) {
                shared.withLock { $0.draft?.ipa = ipa }
            }
        } catch {
            if abortSpeech.load(ordering: .relaxed) {
                engines.playback.discard()
                logger.info("speech stopped")
            } else {
                report("speech output failed: \(error)")
                shared.withLock { $0.draft?.error = "\(error)" }
            }
        }
        publish(EventType.speakingEnd, speaker: listener, language: language)
        let played = SampleTime(produced) * SampleTime(captureSampleRate) / SampleTime(engines.synthesizer.sampleRate)
        let (actions, draft) = shared.withLock { state in
            (state.handle(.speakingFinished(playedSamples: played)), state.takeDraftForRecording(pendingWrites))
        }
        if let draft { record(draft) }
        perform(actions)
    }

    // MARK: - Events and history

    private func publish(_ type: String, speaker: Speaker, language: String? = nil) {
        let language = language ?? snapshot.settings.language(of: speaker)
        events.publish(type, SpeakerEvent(speaker: speaker.rawValue, language: language))
    }

    private func publishState() {
        let snapshot = self.snapshot
        events.publish(EventType.state, StateEvent(state: snapshot.state, speaker: snapshot.speaker?.rawValue))
        observer?.stateChanged(snapshot)
    }

    /// Logs a failure and tells subscribers; the conversation goes on.
    private func report(_ message: String) {
        logger.error("\(message)")
        events.publish(EventType.error, ErrorEvent(message: message))
    }

    /// Stores a turn taken with `takeDraftForRecording` (which entered `pendingWrites`).
    private func record(_ draft: TurnDraft) {
        guard let recognition = draft.recognition else {
            draft.completion?(.failure(ConversationRefusal("the turn was abandoned")))
            pendingWrites.leave()
            return
        }
        if let replayed = draft.replaying {
            draft.completion?(.success(replayed))
            pendingWrites.leave()
            return
        }
        let turn = TurnRecord(
            sessionID: 0, speaker: draft.speaker.rawValue, sourceLang: draft.sourceLang, targetLang: draft.targetLang,
            sourceText: recognition.text, translatedText: draft.translation, ipa: draft.ipa, confidence: recognition.confidence,
            status: draft.translation == nil ? .untranslated : .translated, error: draft.error,
            lowConfidence: draft.lowConfidence, createdAt: Date(), asrMs: draft.asrMs, mtMs: draft.mtMs,
            ttsMs: draft.ttsMs, responseMs: draft.responseMs)
        // Queued, never waited for here: a failing disk cannot stop the conversation. The turn
        // is acknowledged (event, `say` reply) once committed.
        pendingWrites.leave()
        history.enqueue(turn) { [self] result in
            switch result {
            case .success(let stored):
                shared.withLock { $0.turnCount += 1 }
                logger.info("turn", metadata: ["id": "\(stored.id ?? 0)", "speaker": "\(stored.speaker)", "response_ms": "\(stored.responseMs ?? -1)"])
                events.publish(EventType.turn, stored.info)
                draft.completion?(.success(stored))
            case .failure(let error):
                report("could not store the turn in history: \(error)")
                draft.completion?(.failure(error))
            }
        }
    }
}

/// "Please say that again", in the speaker's own language.
enum RepeatPrompt {
    static let texts: [String: String] = [
        "en": "Sorry, please say that again.",
        "es": "Perdón, ¿puede repetirlo, por favor?",
        "fr": "Pardon, pouvez-vous répéter, s'il vous plaît ?",
        "de": "Entschuldigung, bitte wiederholen Sie das.",
        "it": "Scusi, può ripetere, per favore?",
        "pt": "Desculpe, pode repetir, por favor?",
        "ca": "Perdó, pot repetir-ho, si us plau?",
        "gl": "Perdón, pode repetilo, por favor?",
        "eo": "Pardonu, bonvolu ripeti.",
    ]

    static func text(for language: String) -> String {
        texts[language] ?? texts["en", default: "Please repeat."]
    }
}
