import Foundation
import Logging
import ParleyAudio
import ParleyControl
import ParleyConversation
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleySynthesis
import ParleyTranslation
import Synchronization

/// The conversation runtime: owns the state machine and the endpointer and performs the
/// machine's actions through the parts that do the work.
///
/// - `CaptureLoop` (a thread of its own) reads the device, measures levels and feeds
///   `process(_:at:level:now:)`; it never waits for an engine (a recording, which is not real
///   time, waits for the turn in flight so that it gives the same turns as a live microphone).
/// - `RecognitionWorker`s (one per decoder: a "lane") and the `SpeechWorker` are actors, each on
///   a queue of its own, that own the recognizers and the synthesizer and playback device. In
///   auto mode an utterance goes to both languages' lanes at once, and what they heard says who
///   spoke (`Interpreter+Recognition.swift`).
/// - Translation runs one turn at a time on the concurrency pool (`translateTurns`); during a
///   pause, a `Speculation` translates and synthesizes the words so far ahead of the turn.
/// - `TurnRecorder` hands finished turns to the history write queue.
///
/// All mutable state sits in `shared`, behind one lock: the turn's logic (`TurnLogic`: the
/// machine, the endpointer, the utterance, the lanes' judgements, the running speculation and
/// the turn being recorded with its timings, pure and tested without threads), and beside it
/// what the runtime performs with (whoever waits for a typed turn, the speculation's
/// translation task). The work an action calls for is queued to its worker inside the lock
/// that decided it, so the workers see it in order.
public final class Interpreter: Sendable {
    /// The recognition lanes by decoder, made when a language is first heard.
    let lanes: Mutex<[String: Lane]>
    /// Makes a recognizer that the lane asking then owns.
    let recognizers: @Sendable (String) -> sending (any SpeechRecognizer)?
    let laneKey: @Sendable (String) -> String
    let speech: SpeechWorker
    let recorder: TurnRecorder
    let events: EventBus
    let logger: Logger
    let observer: Observer?
    /// The daemon's one clock (see `ParleyClock`).
    public let clock: ParleyClock
    let hearing: @Sendable (String) -> Bool
    /// Whether a language has a streaming recognizer (`EngineAccess.streams`).
    let streams: @Sendable (String) -> Bool
    let speaking: @Sendable (String) -> Bool
    /// The translator the conversation uses (also for `retry` and `languages`).
    public let translator: any Translator
    /// The accurate pass, when the daemon has accurate engines.
    let accurate: AccurateWorker?
    /// The engines behind it (for `status` and `languages`).
    public let accurateHearing: AccurateHearing?
    /// The trained voice-activity detector the capture loop feeds (nil: the level alone).
    public let voiceActivity: (any VoiceActivityDetector)?
    /// What Parley plays, on the capture timeline, for a live capture to cancel it (nil: echo
    /// cancelling is off).
    let echoReference: EchoReference?

    let shared: Mutex<Shared>
    /// The capture device, until `run` hands it to the capture loop.
    private let capture: Mutex<CaptureSource?>
    /// Wakes the capture loop when the state changes (pause, resume, a turn ended, stop).
    let wakeup = Wakeup()
    let stopping = Atomic<Bool>(false)
    /// Set once the capture loop has ended: late translations and speech are dropped, so
    /// nothing touches a device after it is closed.
    let closing = Atomic<Bool>(false)
    /// One settings change at a time, so two clients cannot undo each other's.
    let settingsChange = Mutex(())
    /// Logs a failure and tells subscribers; the conversation goes on.
    let report: @Sendable (String) -> Void
    /// Turns to translate: who spoke, the words, the languages, and the turn's serial
    /// (`TurnLogic.turnSerial`: a translation for an utterance that went on is dropped).
    let translations: AsyncStream<(Speaker, String, TurnLanguages, Int)>
    let translationInbox: AsyncStream<(Speaker, String, TurnLanguages, Int)>.Continuation

    /// How long a stop waits for the turn in flight.
    public static let stopTimeout: TimeInterval = 10

    struct Shared {
        /// The machine, the endpointer, the utterance, the lanes' judgements, the running
        /// speculation and the turn being recorded: the pure part.
        var turn: TurnLogic
        var settings: RuntimeSettings
        /// Who waits for the turn being recorded (a typed turn, a replay); nil for a spoken one.
        var waiter: TurnWaiter?
        var turnCount = 0
        /// The running speculation's translation task (its words and life are `turn`'s).
        var speculationWork: SpeculationWork?

        /// Feeds the machine (through the turn's logic, which applies what concerns it).
        mutating func handle(_ event: ConversationMachine.Event) -> [ConversationMachine.Action] {
            turn.handle(event)
        }

        /// Takes the turn in flight to be recorded, with whoever waits for it, registering its
        /// write with `recorder` under the same lock as the state change, so whoever sees the
        /// turn end also waits for it.
        mutating func takeDraft(for recorder: TurnRecorder) -> (draft: TurnDraft, waiter: TurnWaiter?)? {
            defer { waiter = nil }
            guard let draft = turn.takeDraft() else { return nil }
            recorder.reserve()
            return (draft, waiter)
        }
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
        settings: RuntimeSettings, endpoint: EndpointSettings, repeatPrompt: Bool, failureNotice: Bool = false,
        engines: EngineAccess,
        synthesizer: sending any SpeechSynthesizer, playback: sending any AudioPlayback, capture: sending CaptureSource,
        history: HistoryWriter,
        events: EventBus, logger: Logger, logsTranscripts: @escaping @Sendable () -> Bool = { false }, observer: Observer? = nil,
        clock: ParleyClock = .continuous, echoCancel: Bool = false
    ) {
        self.observer = observer
        self.capture = Mutex(capture)
        self.events = events
        self.logger = logger
        self.clock = clock
        self.hearing = engines.canHear
        self.streams = engines.streams
        self.speaking = engines.canSpeak
        self.translator = engines.translator
        self.accurateHearing = engines.accurate
        self.voiceActivity = engines.voiceActivity
        let report: @Sendable (String) -> Void = { message in
            logger.error("\(message)")
            events.publish(EventType.error, ErrorEvent(message: message))
        }
        // An engine that fails is told to subscribers too, as any other failure of a turn.
        self.accurate = engines.accurate.map { AccurateWorker(hearing: $0, logger: logger, report: report) }
        self.recognizers = engines.recognizer
        self.laneKey = engines.lane
        self.report = report
        self.lanes = Mutex([:])
        let echoReference = echoCancel ? EchoReference(tailMs: EchoHearing.tailMs, leadMs: EchoHearing.leadMs, keepMs: EchoHearing.keepMs) : nil
        self.echoReference = echoReference
        self.speech = SpeechWorker(
            synthesizer: synthesizer, playback: echoReference.map { EchoReferencedPlayback(playback, reference: $0) } ?? playback, clock: clock,
            logger: logger)
        self.recorder = TurnRecorder(history: history, events: events, logger: logger, date: { clock.date }, logsTranscripts: logsTranscripts)
        (translations, translationInbox) = AsyncStream.makeStream()
        var endpoint = endpoint
        endpoint.silenceMs = settings.silenceMs
        let machine = ConversationMachine(
            settings: .init(
                mode: settings.mode, echoTail: samples(ms: settings.echoTailMs),
                hearable: Self.hearable(settings, engines.canHear), repeatPrompt: repeatPrompt, failureNotice: failureNotice,
                languageA: settings.speakerA, languageB: settings.speakerB))
        var turn = TurnLogic(
            machine: machine, endpointer: Endpointer(settings: endpoint, sampleRate: captureSampleRate), keepsAudio: engines.accurate != nil)
        turn.dualDecoding = Self.dualDecoding(settings, engines)
        let shared = Shared(turn: turn, settings: settings)
        self.shared = Mutex(shared)
    }

    static func hearable(_ settings: RuntimeSettings, _ canHear: (String) -> Bool) -> Set<Speaker> {
        Set(Speaker.allCases.filter { canHear(settings.language(of: $0)) })
    }

    // MARK: - Queries

    public struct Snapshot: Sendable {
        public var state: String
        public var speaker: Speaker?
        public var turns: Int
        public var settings: RuntimeSettings
        /// Listening or hearing: whether who speaks is fixed (false while auto mode tells it
        /// from the audio: `speaker` is only expected); nil in the other states.
        public var decided: Bool?
    }

    public var snapshot: Snapshot {
        shared.withLock {
            Snapshot(
                state: $0.turn.stateName, speaker: $0.turn.machine.state.speaker, turns: $0.turnCount, settings: $0.settings,
                decided: speakerDecided($0.turn))
        }
    }

    /// True when `speaker`'s language has a recognizer.
    public func isHearable(_ speaker: Speaker) -> Bool {
        hearing(snapshot.settings.language(of: speaker))
    }

    /// True when `language` can be heard: a recognizer model, or an accurate engine.
    public func canHear(_ language: String) -> Bool { hearing(language) }

    /// The engine whose words a `language` turn keeps: the accurate engine that hears it first,
    /// else "pocketsphinx"; nil when it cannot be heard.
    public func engine(for language: String) -> String? {
        accurateHearing?.name(for: language) ?? (hearing(language) ? "pocketsphinx" : nil)
    }

    /// True when `language` has a voice.
    public func canSpeak(_ language: String) -> Bool { speaking(language) }

    // MARK: - Running

    /// Runs the conversation until the recording ends or `stop()` is called: the workers, and
    /// the capture loop on a thread of its own. Then the turn in flight is settled, its history
    /// write queued, and the devices closed.
    public func run() async throws(AudioError) {
        guard let source = capture.withLock({ $0.take() }) else { throw AudioError(.open, "the conversation already ran") }
        let speechLoop = Task { await speech.run() }
        let accurateLoop = accurate.map { worker in Task { await worker.run() } }
        accurate?.inbox.yield(.warm)
        let translationLoop = Task { await translateTurns() }
        let result = await CaptureLoop(interpreter: self).run(source)
        let recognitionLoops = closeLanes()
        speech.inbox.yield(.close)
        accurate?.inbox.yield(.close)
        translationInbox.finish()
        // Playback is closed on the speech worker once it is idle; a worker that never gets
        // there (a hung device) is left alone rather than closed under its feet.
        do {
            try await clock.withDeadline(.seconds(Self.stopTimeout), "the engines' stop") {
                for loop in recognitionLoops { await loop.value }
                await accurateLoop?.value
                await speechLoop.value
            }
        } catch {
            logger.warning("an engine did not finish in time; exiting anyway")
        }
        translationLoop.cancel()
        try result.get()
    }

    /// Asks the capture loop to end after the period it is reading.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        wakeup.wake()
    }

    // MARK: - Audio

    /// One captured period, through the turn's logic (`TurnLogic.hear`); the recognizer work it
    /// calls for is queued in the same lock. Called by the capture loop. Returns the level above
    /// which the next period needs the voice detector's judgement.
    @discardableResult
    func process(_ frame: [Int16], at start: SampleTime, level: Levels, speech: Float? = nil, now: SampleTime) -> Float {
        let (actions, judgeAbove) = shared.withLock { state -> ([ConversationMachine.Action], Float) in
            let period = state.turn.hear(frame, at: start, rmsDB: level.rmsDB, speech: speech, now: now)
            for line in period.log { logger.debug("\(line)") }
            for line in period.notices { logger.notice("\(line)") }
            forgetDroppedSpeculation(&state)
            if period.speculation == .consider { speculate(&state) }
            if let through = period.tellOpening { tellOpening(&state, through: through) }
            queueRecognition(period.actions, &state)
            // Queued after the utterance was opened, in the same lock.
            if let feed = period.feed {
                let judge = feed.judge.map { JudgeRequest(through: $0.through, pause: $0.pause) }
                // The expected speaker's lane gives the live words: a guess while auto mode has not decided.
                let decided = state.turn.utteranceSides.map { !detectsSpeaker(state.turn, languages: state.turn.utteranceLanguages, sides: $0) } ?? true
                for (index, language) in state.turn.utteranceLanguages.enumerated() {
                    let partials: RecognitionWorker.Partials? = index == 0 ? (decided ? .decided : .guessed) : nil
                    lane(for: language).inbox.yield(.feed(feed.audio, speaker: feed.speaker, language: language, partials: partials, judge: judge))
                }
            }
            return (period.actions, period.judgeAbove)
        }
        perform(actions)
        return judgeAbove
    }

    // MARK: What the capture loop asks (it reads and changes the turn only through these)

    /// Whether the utterance whose end was just decided may still go on (the person speaking
    /// on before Parley answers): a recording is then read on while the turn is in flight.
    var mayGoOn: Bool { shared.withLock { $0.turn.mayGoOn } }

    /// Whether a client paused the conversation: the microphone is released.
    var isPaused: Bool { shared.withLock { $0.turn.userPaused } }

    /// Whether a turn is in flight (a recording waits for it).
    var isBusy: Bool { shared.withLock { $0.turn.machine.isBusy } }

    /// Whether Parley is speaking, or its voice may still be in what the microphone hears (the
    /// echo guard), once the conversation's clock is at `now` (the echo guard may end there):
    /// what is captured then is not heard as a person (`EchoHearing` keeps a person's voice
    /// heard over it).
    func isSpeakingAloud(at now: SampleTime) -> Bool {
        var aloud = false
        let actions = locked { state in
            let actions = state.turn.handle(.clock(now: now))
            switch state.turn.machine.state {
            case .speaking, .echoGuard: aloud = true
            default: aloud = false
            }
            return actions
        }
        perform(actions)
        return aloud
    }

    /// Whether captured audio reaches the endpointer now (someone is listened to).
    var acceptsAudio: Bool { shared.withLock { $0.turn.machine.acceptsAudio } }

    /// Whether the lanes' judgement of the pause read so far, or the words of the accurate pass
    /// started at it, are awaited (a recording waits for them).
    var isAwaitingJudgement: Bool { shared.withLock { $0.turn.isAwaitingJudgement || $0.turn.isAwaitingAccurateWords } }

    /// The capture was opened: whether it hears Parley, and whether it is live or a recording.
    func captureOpened(hearsPlayback: Bool, realTime: Bool) {
        shared.withLock { $0.turn.captureOpened(hearsPlayback: hearsPlayback, realTime: realTime) }
    }

    /// The input is over: nothing more is heard, and what comes back from now on is closing work.
    func inputClosed() {
        shared.withLock { _ in closing.store(true, ordering: .relaxed) }
    }

    /// The device was lost or is back (`TurnLogic.microphone`): the machine's actions, and
    /// whether that changed anything (a loss already known changes nothing).
    func microphone(_ event: TurnLogic.Microphone) -> (actions: [ConversationMachine.Action], deviceChanged: Bool) {
        var changed = false
        let actions = locked { state -> [ConversationMachine.Action] in
            let result = state.turn.microphone(event)
            changed = result.deviceChanged
            return result.actions
        }
        return (actions, changed)
    }

    /// Whether every language the utterance may be in has a streaming recognizer whose language
    /// model judges its pauses. When one has none (French, Portuguese: Whisper hears them, no
    /// PocketSphinx model does), another language's model would judge that person's pauses and
    /// end their sentences where theirs do not end: the silence limit ends the turn instead.
    /// Asked once per utterance, as its recognition starts (`queueRecognition`).
    func judgedByEveryLanguage(_ turn: TurnLogic) -> Bool {
        guard let sides = turn.utteranceSides else { return true }
        let possible = detectsSpeaker(turn, languages: turn.utteranceLanguages, sides: sides) ? [sides.source, sides.target] : [sides.source]
        return possible.allSatisfy(streams)
    }

    /// Of `languages` (an utterance's, `TurnLogic.utteranceLanguages`), those a streaming
    /// recognizer decodes (`AccuratePass.Utterance.laneLanguages`). An utterance is decoded in a
    /// language Whisper alone hears (Portuguese) too, by no recognizer: the lanes tell nothing
    /// of it, and the detector must hear the whole utterance to tell it.
    func streamingLanes(_ languages: [String]) -> Set<String> {
        Set(languages.filter(streams))
    }

    /// Runs `body` under the lock and queues the recognizer work its actions call for in that
    /// same lock, so the recognizer sees opens, audio, finishes and cancels in the order the
    /// machine decided them, whichever thread decided.
    func locked(_ body: (inout Shared) -> [ConversationMachine.Action]) -> [ConversationMachine.Action] {
        shared.withLock { state in
            let actions = body(&state)
            forgetDroppedSpeculation(&state)
            queueRecognition(actions, &state)
            return actions
        }
    }
}

/// Wakes a waiting capture loop: a condition variable, signalled on every state change.
final class Wakeup: Sendable {
    private let condition = NSCondition()

    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until woken or `deadline`, while `keepWaiting` holds (checked under the lock).
    func wait(until deadline: Date, while keepWaiting: () -> Bool) {
        condition.lock()
        defer { condition.unlock() }
        while keepWaiting() && Date() < deadline {
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 1)))
        }
    }
}
