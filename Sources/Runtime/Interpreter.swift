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
/// All mutable state sits in `shared`, behind one lock; the work an action calls for is queued
/// to its worker inside the lock that decided it, so the workers see it in order.
public final class Interpreter: Sendable {
    /// The recognition lanes by decoder, made when a language is first heard.
    let lanes: Mutex<[String: Lane]>
    let recognizers: @Sendable (String) -> (any SpeechRecognizer)?
    let laneKey: @Sendable (String) -> String
    let speech: SpeechWorker
    let recorder: TurnRecorder
    let events: EventBus
    let logger: Logger
    let observer: Observer?
    let clock: RuntimeClock
    let hearing: @Sendable (String) -> Bool
    let speaking: @Sendable (String) -> Bool
    /// The translator the conversation uses (also for `retry` and `languages`).
    public let translator: any Translator
    /// The accurate pass, when the daemon has accurate engines.
    let accurate: AccurateWorker?
    /// The engines behind it (for `status` and `languages`).
    public let accurateHearing: AccurateHearing?
    /// The trained voice-activity detector the capture loop feeds (nil: the level alone).
    public let voiceActivity: (any VoiceActivityDetector)?

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
    let translations: AsyncStream<(Speaker, String, TurnLanguages)>
    let translationInbox: AsyncStream<(Speaker, String, TurnLanguages)>.Continuation

    /// The first wait before a lost capture device is opened again (doubling up to 10 s).
    let reopenBackoff: TimeInterval

    /// How long a stop waits for the turn in flight.
    public static let stopTimeout: TimeInterval = 10

    struct Shared {
        var machine: ConversationMachine
        var endpointer: Endpointer
        var settings: RuntimeSettings
        var draft: TurnDraft?
        /// The languages the utterance being heard is decoded in (fixed when it starts): the
        /// expected speaker's first, then, in auto mode, the other side's.
        var utteranceLanguages: [String] = []
        /// The languages of the expected speaker and of the other side when the utterance started.
        var utteranceSides: (speaker: String, other: String)?
        /// Whether auto mode can tell the speakers apart by what it hears: both sides hearable,
        /// on decoders of their own.
        var dualDecoding = false
        var turnCount = 0
        var userPaused = false
        var deviceLost = false
        /// The lanes' recent views of the utterance's pause, by language, oldest first (the
        /// last `keptJudgements`): lanes run side by side, one may be a few periods ahead.
        var judgements: [String: [Judgement]] = [:]
        /// The sample through which the lanes were asked to judge the pause (a recording waits
        /// for their answer, so it gives the same turns as a live microphone).
        var awaitedJudgement: SampleTime?
        /// How the utterance heard last ended: what decided it and after how much silence.
        var utteranceEnd: (reason: EndpointEvent.EndReason, pause: SampleTime)?
        /// How far that utterance's voice stood above the room's floor (dB): a noisy room is
        /// heard by the engine that holds up in noise.
        var utteranceAboveFloorDB: Float?
        /// The audio of the utterance being heard (from its pre-roll), for the accurate pass.
        var utteranceAudio: [Int16] = []
        /// The translation and audio being made from the words before the current pause.
        var speculation: Speculation?
        /// Speculations started so far (their ids).
        var speculations = 0

        /// The latest audio every language of the utterance has judged, with each language's
        /// judgement of it. A lane that is ahead does not speak alone: in auto mode the other
        /// language's words, judged first, could otherwise end an English sentence after "and".
        var commonJudgement: (through: SampleTime, byLanguage: [(language: String, judgement: Judgement)])? {
            guard let first = utteranceLanguages.first, let candidates = judgements[first] else { return nil }
            for candidate in candidates.reversed() {
                let all = utteranceLanguages.compactMap { language in
                    judgements[language]?.last { $0.through == candidate.through }.map { (language: language, judgement: $0) }
                }
                if all.count == utteranceLanguages.count { return (candidate.through, all) }
            }
            return nil
        }

        /// The judgement of the language that explains the audio best, at the latest audio
        /// every language has judged (nil: none, or no words to judge).
        var bestJudgement: (language: String, end: SentenceEnd, through: SampleTime)? {
            guard let common = commonJudgement else { return nil }
            return common.byLanguage.compactMap { entry in entry.judgement.end.map { (language: entry.language, end: $0, through: common.through) } }
                .max { ($0.end.score ?? -.infinity) < ($1.end.score ?? -.infinity) }
        }

        /// The recognizer's view of the pause for the endpointer.
        var endCue: EndCue? {
            bestJudgement.map { EndCue(through: $0.through, probability: $0.end.probability) }
        }

        /// How many recent judgements each language keeps.
        static let keptJudgements = 16

        /// Whether a lane has yet to judge the audio through `awaitedJudgement`.
        var isAwaitingJudgement: Bool {
            guard let awaited = awaitedJudgement else { return false }
            return utteranceLanguages.contains { (judgements[$0]?.last?.through ?? -1) < awaited }
        }

        /// Feeds the machine and applies what belongs to shared state right here.
        mutating func handle(_ event: ConversationMachine.Event) -> [ConversationMachine.Action] {
            absorb(machine.handle(event))
        }

        /// Applies the machine's actions that concern shared state (endpointer resets, the
        /// utterance's languages) and returns the rest.
        mutating func absorb(_ actions: [ConversationMachine.Action]) -> [ConversationMachine.Action] {
            for action in actions {
                switch action {
                case .resetEndpointer: endpointer.reset()
                case .startRecognition(_, let languages):
                    judgements = [:]
                    awaitedJudgement = nil
                    utteranceEnd = nil
                    let sides = (speaker: languages.source, other: languages.target)
                    utteranceSides = sides
                    utteranceLanguages = dualDecoding ? [sides.speaker, sides.other] : [sides.speaker]
                default: break
                }
            }
            return actions.filter { $0 != .resetEndpointer }
        }

        /// Takes the turn in flight to be recorded, registering its write with `recorder` under
        /// the same lock as the state change, so whoever sees the turn end also waits for it.
        mutating func takeDraft(for recorder: TurnRecorder) -> TurnDraft? {
            defer { draft = nil }
            if draft != nil { recorder.reserve() }
            return draft
        }

        /// What clients see as the state.
        var stateName: String {
            deviceLost ? "device_lost" : machine.state.name
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
        clock: RuntimeClock = .continuous, date: @escaping @Sendable () -> Date = { Date() }, reopenBackoff: TimeInterval = 0.5
    ) {
        self.observer = observer
        self.reopenBackoff = reopenBackoff
        self.capture = Mutex(capture)
        self.events = events
        self.logger = logger
        self.clock = clock
        self.hearing = engines.canHear
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
        self.speech = SpeechWorker(synthesizer: synthesizer, playback: playback, clock: clock, logger: logger)
        self.recorder = TurnRecorder(history: history, events: events, logger: logger, date: date, logsTranscripts: logsTranscripts)
        (translations, translationInbox) = AsyncStream.makeStream()
        var endpoint = endpoint
        endpoint.silenceMs = settings.silenceMs
        let machine = ConversationMachine(
            settings: .init(
                mode: settings.mode, echoTail: samples(ms: settings.echoTailMs),
                hearable: Self.hearable(settings, engines.canHear), repeatPrompt: repeatPrompt, failureNotice: failureNotice,
                languageA: settings.speakerA, languageB: settings.speakerB))
        var shared = Shared(machine: machine, endpointer: Endpointer(settings: endpoint, sampleRate: captureSampleRate), settings: settings)
        shared.dualDecoding = Self.dualDecoding(settings, engines)
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
    }

    public var snapshot: Snapshot {
        shared.withLock { Snapshot(state: $0.stateName, speaker: $0.machine.state.speaker, turns: $0.turnCount, settings: $0.settings) }
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

    /// Whether a turn no backend could translate is answered with a spoken notice to the
    /// speaker (`[translator] failure_notice`).
    public func setFailureNotice(_ on: Bool) {
        shared.withLock { $0.machine.settings.failureNotice = on }
    }

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
        let result = await CaptureLoop(interpreter: self, backoff: reopenBackoff).run(source)
        let recognitionLoops = closeLanes()
        speech.inbox.yield(.close)
        accurate?.inbox.yield(.close)
        translationInbox.finish()
        // Playback is closed on the speech worker once it is idle; a worker that never gets
        // there (a hung device) is left alone rather than closed under its feet.
        let done = await finished(within: .seconds(Self.stopTimeout)) {
            for loop in recognitionLoops { await loop.value }
            await accurateLoop?.value
            await speechLoop.value
        }
        if !done { logger.warning("an engine did not finish in time; exiting anyway") }
        translationLoop.cancel()
        try result.get()
    }

    /// A position on the capture timeline, for the log ("12.34 s").
    static func seconds(_ samples: SampleTime) -> String {
        let hundredths = samples * 100 / 16_000
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
    }

    /// Asks the capture loop to end after the period it is reading.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        wakeup.wake()
    }

    // MARK: - Audio

    /// One captured period: the machine's clock moves to `now`, the endpointer judges the audio
    /// (its level, and `speech`, the voice-activity detector's probability when one runs), and
    /// audio of an utterance goes to the recognizer. Called by the capture loop.
    /// Returns the level above which the next period needs the voice detector's judgement:
    /// in silence, a period the level alone calls quiet cannot start speech (the detector may
    /// skip it); in speech every period is judged; while Parley speaks, none.
    @discardableResult
    func process(_ frame: [Int16], at start: SampleTime, level: Levels, speech: Float? = nil, now: SampleTime) -> Float {
        var judgeAbove: Float = .infinity
        let actions = shared.withLock { state -> [ConversationMachine.Action] in
            var actions = state.handle(.clock(now: now))
            defer {
                judgeAbove = state.machine.acceptsAudio ? (state.endpointer.phase == .silence ? state.endpointer.thresholdDB : -.infinity) : .infinity
            }
            guard state.machine.acceptsAudio else {
                queueRecognition(actions, &state)
                return actions
            }
            let wasInSpeech = state.endpointer.isInSpeech
            var audio: [Int16]?
            switch state.endpointer.process(frame, at: start, rmsDB: level.rmsDB, speech: speech, cue: judgedByEveryLanguage(state) ? state.endCue : nil) {
            case .started(let at, let preroll)?:
                logger.debug("speech started at \(Self.seconds(at))")
                actions += state.handle(.speechStarted(at: at))
                audio = preroll
                if accurate != nil { state.utteranceAudio = preroll }
            case .ended(let end, let reason, let pause)?:
                state.utteranceAboveFloorDB = state.endpointer.lastSpeechAboveFloorDB
                logger.debug(
                    "speech ended at \(Self.seconds(end)) (\(reason.rawValue), after \(Self.seconds(pause)) of pause; \(Int(state.utteranceAboveFloorDB ?? 0)) dB above the floor)")
                if accurate != nil { state.utteranceAudio += frame }
                state.utteranceEnd = (reason, pause)
                actions += state.handle(.speechEnded(at: end))
            case .discarded(let end)?:
                logger.debug("sound discarded at \(Self.seconds(end)): too short, or no louder than the background")
                actions += state.handle(.speechDiscarded)
            case nil:
                if wasInSpeech {
                    audio = frame
                    // Before a speculation below looks at it: the pause it measures ends here.
                    if accurate != nil { state.utteranceAudio += frame }
                }
                // Speech resumed after a pause: what was made from the words before it is dropped.
                if state.endpointer.isInSpeech, state.endpointer.pause == nil { dropSpeculation(&state) }
                // A pause nearing the silence limit is speculated on (`lateSpeculationMs`).
                if state.endpointer.pause != nil { speculate(&state) }
            }
            queueRecognition(actions, &state)
            // Queued after the utterance was opened, in the same lock. During a pause the lanes
            // judge whether the words so far end the sentence.
            state.awaitedJudgement = nil
            if let audio, let speaker = state.machine.state.speaker {
                var judge: JudgeRequest?
                if state.endpointer.wantsCue, let pause = state.endpointer.pause {
                    judge = JudgeRequest(through: now, pause: Int(pause))
                }
                state.awaitedJudgement = judge?.through
                for (index, language) in state.utteranceLanguages.enumerated() {
                    lane(for: language).inbox.yield(.feed(audio, speaker: speaker, language: language, partials: index == 0, judge: judge))
                }
            }
            return actions
        }
        perform(actions)
        return judgeAbove
    }

    /// Whether every language the utterance may be in has a streaming recognizer whose language
    /// model judges its pauses. When one has none (French, Portuguese: Whisper hears them, no
    /// PocketSphinx model does), another language's model would judge that person's pauses and
    /// end their sentences where theirs do not end: the silence limit ends the turn instead.
    func judgedByEveryLanguage(_ state: Shared) -> Bool {
        guard let sides = state.utteranceSides else { return true }
        let possible = detectsSpeaker(state, languages: state.utteranceLanguages, sides: sides) ? [sides.speaker, sides.other] : [sides.speaker]
        return possible.allSatisfy { recognizers($0) != nil }
    }

    /// Runs `body` under the lock and queues the recognizer work its actions call for in that
    /// same lock, so the recognizer sees opens, audio, finishes and cancels in the order the
    /// machine decided them, whichever thread decided.
    func locked(_ body: (inout Shared) -> [ConversationMachine.Action]) -> [ConversationMachine.Action] {
        shared.withLock { state in
            let actions = body(&state)
            queueRecognition(actions, &state)
            return actions
        }
    }
}

/// A lane's view of a pause: how likely the words heard through sample `through` end the
/// sentence (nil: no words yet, or the recognizer cannot tell).
struct Judgement: Sendable {
    var through: SampleTime
    var end: SentenceEnd?
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
