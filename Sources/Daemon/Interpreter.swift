import Dispatch
import Foundation
import Logging
import ParleyAudio
import ParleyConfig
import ParleyConversation
import ParleyEndpoint
import ParleyHistory
import ParleyRecognition
import ParleySynthesis
import ParleyTranslation
import Synchronization

/// The engines one conversation runs on, each behind its protocol.
public struct Engines {
    /// Recognizers by language; a language without one cannot be heard.
    public var recognizers: [String: any SpeechRecognizer]
    public var translator: any Translator
    public var synthesizer: any SpeechSynthesizer
    public var playback: any AudioPlayback

    public init(
        recognizers: [String: any SpeechRecognizer], translator: any Translator, synthesizer: any SpeechSynthesizer,
        playback: any AudioPlayback
    ) {
        self.recognizers = recognizers
        self.translator = translator
        self.synthesizer = synthesizer
        self.playback = playback
    }
}

/// Runs the conversation: performs what the state machine decides, on the right threads.
///
/// - The capture loop (the caller of `run(capture:)`) only measures levels, endpoints and hands
///   audio on; it never waits for an engine (a recording, which is not real time, waits for the
///   turn in flight so that it gives the same turns as a live microphone).
/// - Recognition runs on its own serial queue, fed while the person speaks.
/// - Synthesis and playback run on another; translation on the concurrency pool.
/// - History writes are asynchronous; a turn is reported once it is committed.
public final class Interpreter: @unchecked Sendable {
    // Engines are confined: recognizers to `recognitionQueue`, synthesizer and playback to
    // `speechQueue`. Everything mutable and shared sits in `shared`.
    private let engines: Engines
    private let config: ParleyConfig
    private let history: AppDatabase
    private let sessionID: Int64
    private let logger: Logger
    private let onTurn: @Sendable (TurnRecord) -> Void

    private let shared: Mutex<Shared>
    private let pacing = NSCondition()
    private let stopping = Atomic<Bool>(false)
    private let recognitionQueue = DispatchQueue(label: "parley.recognition")
    private let speechQueue = DispatchQueue(label: "parley.speech")
    private let pendingWrites = DispatchGroup()
    private let clock = ContinuousClock()

    struct Shared {
        var machine: ConversationMachine
        var endpointer: Endpointer
        var draft: TurnDraft?
        var turnCount = 0

        /// Feeds the machine and applies what belongs to shared state right here.
        mutating func handle(_ event: ConversationMachine.Event) -> [ConversationMachine.Action] {
            let actions = machine.handle(event)
            if actions.contains(.resetEndpointer) { endpointer.reset() }
            return actions.filter { $0 != .resetEndpointer }
        }
    }

    /// What is known about the turn in flight.
    struct TurnDraft {
        var speaker: Speaker
        var endOfSpeech: ContinuousClock.Instant
        var recognition: Recognition?
        var translation: String?
        var error: String?
        var asrMs: Int?
        var mtMs: Int?
        var ttsMs: Int?
        var responseMs: Int?
    }

    public init(
        config: ParleyConfig, engines: Engines, history: AppDatabase, sessionID: Int64, logger: Logger,
        onTurn: @escaping @Sendable (TurnRecord) -> Void = { _ in }
    ) {
        self.config = config
        self.engines = engines
        self.history = history
        self.sessionID = sessionID
        self.logger = logger
        self.onTurn = onTurn
        let hearable = Set(Speaker.allCases.filter { engines.recognizers[config.language(of: $0)] != nil })
        let machine = ConversationMachine(
            settings: .init(mode: config.mode, echoTail: samples(ms: config.echoTailMs), hearable: hearable))
        self.shared = Mutex(Shared(machine: machine, endpointer: Endpointer(settings: config.endpoint, sampleRate: captureSampleRate)))
    }

    // MARK: - Queries

    /// The state now, and how many turns were logged.
    public var snapshot: (state: ConversationMachine.State, turns: Int) {
        shared.withLock { ($0.machine.state, $0.turnCount) }
    }

    /// True when `speaker`'s language has a recognizer.
    public func isHearable(_ speaker: Speaker) -> Bool {
        engines.recognizers[config.language(of: speaker)] != nil
    }

    // MARK: - Capture loop

    /// Reads `capture` until the recording ends or `stop()` is called, then waits for the turn
    /// in flight and the history writes. Runs on the caller's thread.
    public func run(capture: any AudioCapture) throws(AudioError) {
        var position: SampleTime = 0
        // Whatever ends the loop, the turn in flight is settled before the devices are closed.
        defer { finishInput(at: position) }
        while !stopping.load(ordering: .relaxed) {
            let frame = try capture.read()
            if frame.isEmpty { break }
            let start = position
            position += SampleTime(frame.count)
            let now = position
            let level = Levels(measuring: frame)
            let endOfSpeech = clock.now
            let (actions, audio, speaker) = shared.withLock { state -> ([ConversationMachine.Action], [Int16]?, Speaker?) in
                var actions = state.handle(.clock(now: now))
                guard state.machine.acceptsAudio else { return (actions, nil, nil) }
                let wasInSpeech = state.endpointer.isInSpeech
                var audio: [Int16]?
                switch state.endpointer.process(frame, at: start, rmsDB: level.rmsDB) {
                case .started(let at, let preroll)?:
                    actions += state.handle(.speechStarted(at: at))
                    audio = preroll
                case .ended(let end, _)?:
                    if let speaker = state.machine.state.speaker {
                        state.draft = TurnDraft(speaker: speaker, endOfSpeech: endOfSpeech)
                    }
                    actions += state.handle(.speechEnded(at: end))
                case .discarded?:
                    actions += state.handle(.speechDiscarded)
                case nil:
                    if wasInSpeech { audio = frame }
                }
                return (actions, audio, state.machine.state.speaker)
            }
            perform(actions)
            if let audio, let speaker {
                recognitionQueue.async {
                    do {
                        try self.recognizer(for: speaker)?.feed(audio)
                    } catch {
                        self.logger.error("recognition failed", metadata: ["error": "\(error)"])
                    }
                }
            }
            if !capture.isRealTime { waitWhileBusy() }
        }
    }

    /// Asks the capture loop to end after the period it is reading.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        pacing.lock()
        pacing.broadcast()
        pacing.unlock()
    }

    /// At the end of a recording an utterance in progress is still processed; on stop it is
    /// abandoned. Either way the turn already in flight is finished (within `stopTimeout`) and
    /// its history write waited for.
    private func finishInput(at position: SampleTime) {
        let stopped = stopping.load(ordering: .relaxed)
        let endOfSpeech = clock.now
        let actions = shared.withLock { state -> [ConversationMachine.Action] in
            guard case .hearing(let speaker, _) = state.machine.state else { return [] }
            if stopped {
                state.endpointer.reset()
                return state.handle(.speechDiscarded)
            }
            state.draft = TurnDraft(speaker: speaker, endOfSpeech: endOfSpeech)
            _ = state.endpointer.forceEnd(at: position)
            return state.handle(.speechEnded(at: position))
        }
        perform(actions)
        waitWhileBusy(until: stopped ? Date(timeIntervalSinceNow: Self.stopTimeout) : .distantFuture)
        recognitionQueue.sync {}
        speechQueue.sync {}
        pendingWrites.wait()
    }

    /// How long a stop waits for the turn in flight.
    static let stopTimeout: TimeInterval = 10

    /// A recording waits here while a turn is in flight; a live microphone never does.
    private func waitWhileBusy() {
        pacing.lock()
        defer { pacing.unlock() }
        while shared.withLock({ $0.machine.isBusy }) && !stopping.load(ordering: .relaxed) {
            _ = pacing.wait(until: Date(timeIntervalSinceNow: 1))
        }
    }

    /// Waits for the turn in flight to finish, whether or not a stop was asked for.
    private func waitWhileBusy(until deadline: Date) {
        pacing.lock()
        defer { pacing.unlock() }
        while shared.withLock({ $0.machine.isBusy }) && Date() < deadline {
            _ = pacing.wait(until: min(deadline, Date(timeIntervalSinceNow: 1)))
        }
    }

    // MARK: - Performing actions

    private func perform(_ actions: [ConversationMachine.Action]) {
        for action in actions {
            switch action {
            case .startRecognition(let speaker):
                recognitionQueue.async {
                    do {
                        try self.recognizer(for: speaker)?.startUtterance()
                    } catch {
                        self.logger.error("recognition failed", metadata: ["error": "\(error)"])
                    }
                }
            case .finishRecognition(let speaker):
                recognitionQueue.async { self.finishRecognition(speaker) }
            case .cancelRecognition:
                recognitionQueue.async { self.engines.recognizers.values.forEach { $0.cancelUtterance() } }
            case .translate(let speaker, let text):
                Task { await self.translate(text, spokenBy: speaker) }
            case .speak(let speaker, let text):
                speechQueue.async { self.speak(text, translationOf: speaker) }
            case .reportNoSpeech(let speaker):
                logger.info("nothing recognized; still listening", metadata: ["speaker": "\(speaker.rawValue)"])
            case .stateChanged(let state):
                logger.debug("state", metadata: ["state": "\(state.name)", "speaker": "\(state.speaker?.rawValue ?? "-")"])
                pacing.lock()
                pacing.broadcast()
                pacing.unlock()
            case .resetEndpointer:
                break  // applied inside `Shared.handle`
            }
        }
    }

    private func recognizer(for speaker: Speaker) -> (any SpeechRecognizer)? {
        engines.recognizers[config.language(of: speaker)]
    }

    private func milliseconds(since instant: ContinuousClock.Instant) -> Int {
        let elapsed = clock.now - instant
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    /// On `recognitionQueue`.
    private func finishRecognition(_ speaker: Speaker) {
        var recognition = Recognition(text: "", confidence: nil)
        if let recognizer = recognizer(for: speaker) {
            do {
                recognition = try recognizer.finishUtterance()
            } catch {
                logger.error("recognition failed", metadata: ["error": "\(error)"])
            }
        }
        let finished = recognition
        let actions = shared.withLock { state in
            if let end = state.draft?.endOfSpeech {
                state.draft?.asrMs = milliseconds(since: end)
            }
            state.draft?.recognition = finished
            return state.handle(.recognized(text: finished.text))
        }
        if !finished.text.isEmpty {
            logger.info("heard", metadata: ["speaker": "\(speaker.rawValue)", "text": "\(finished.text)"])
        }
        perform(actions)
    }

    private func translate(_ text: String, spokenBy speaker: Speaker) async {
        let source = config.language(of: speaker)
        let target = config.language(of: speaker.other)
        let started = clock.now
        do {
            let translation = try await engines.translator.translate(text, from: source, to: target)
            guard !translation.isEmpty else {
                throw TranslationError("the translation of \"\(text)\" came back empty")
            }
            let elapsed = milliseconds(since: started)
            let actions = shared.withLock { state in
                state.draft?.translation = translation
                state.draft?.mtMs = elapsed
                return state.handle(.translated(text: translation))
            }
            perform(actions)
        } catch {
            logger.error("translation failed; the turn is kept untranslated", metadata: ["error": "\(error)"])
            let (actions, draft) = shared.withLock { state in
                state.draft?.error = "\(error)"
                state.draft?.mtMs = milliseconds(since: started)
                let actions = state.handle(.translationFailed)
                defer { state.draft = nil }
                return (actions, state.draft)
            }
            // Recorded before the state change is announced, so whoever waits for it also waits for the write.
            if let draft { record(draft) }
            perform(actions)
        }
    }

    /// On `speechQueue`.
    private func speak(_ text: String, translationOf speaker: Speaker) {
        let target = config.language(of: speaker.other)
        let started = clock.now
        var first = true
        var produced = 0
        do {
            produced = try engines.synthesizer.synthesize(text, language: target) { chunk in
                if first {
                    first = false
                    let actions = shared.withLock { state in
                        state.draft?.ttsMs = milliseconds(since: started)
                        if let end = state.draft?.endOfSpeech {
                            state.draft?.responseMs = milliseconds(since: end)
                        }
                        return state.handle(.speakingStarted)
                    }
                    perform(actions)
                }
                try engines.playback.write(chunk)
            }
            try engines.playback.drain()
        } catch {
            logger.error("speech output failed", metadata: ["error": "\(error)"])
            shared.withLock { $0.draft?.error = "\(error)" }
        }
        let played = SampleTime(produced) * SampleTime(captureSampleRate) / SampleTime(engines.synthesizer.sampleRate)
        let (actions, draft) = shared.withLock { state in
            let actions = state.handle(.speakingFinished(playedSamples: played))
            defer { state.draft = nil }
            return (actions, state.draft)
        }
        if let draft { record(draft) }
        perform(actions)
    }

    // MARK: - History

    private func record(_ draft: TurnDraft) {
        guard let recognition = draft.recognition else { return }
        let turn = TurnRecord(
            sessionID: sessionID, speaker: draft.speaker.rawValue,
            sourceLang: config.language(of: draft.speaker), targetLang: config.language(of: draft.speaker.other),
            sourceText: recognition.text, translatedText: draft.translation, confidence: recognition.confidence,
            status: draft.translation == nil ? .untranslated : .translated, error: draft.error, createdAt: Date(),
            asrMs: draft.asrMs, mtMs: draft.mtMs, ttsMs: draft.ttsMs, responseMs: draft.responseMs)
        pendingWrites.enter()
        Task {
            defer { pendingWrites.leave() }
            do {
                let stored = try await history.insert(turn)
                shared.withLock { $0.turnCount += 1 }
                onTurn(stored)
            } catch {
                logger.error("could not store the turn in history", metadata: ["error": "\(error)"])
            }
        }
    }
}
