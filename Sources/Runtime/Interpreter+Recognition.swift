import Logging
import ParleyAudio
import ParleyConversation
import ParleyCore
import ParleyEndpoint
import ParleyProtocol
import ParleyRecognition
import Synchronization

/// Recognition lanes, and who spoke.
///
/// A lane is a `RecognitionWorker` for one decoder (languages on the same acoustic model share
/// one). An utterance is opened, fed and finished on the lane of each language it is decoded
/// in: the expected speaker's, and in auto mode the other side's too, side by side on two
/// queues. When both have finished, the language that explains the audio best says who spoke
/// (`LanguageDecision`); an utterance too short or too close to tell goes to whoever's turn it was.
extension Interpreter {
    struct Lane: Sendable {
        let worker: RecognitionWorker
        let loop: Task<Void, Never>
    }

    /// The lane of `language`'s decoder, made (and its loop started) on first use.
    func lane(for language: String) -> RecognitionWorker {
        let key = laneKey(language)
        return lanes.withLock { lanes in
            if let lane = lanes[key] { return lane.worker }
            let worker = RecognitionWorker(
                recognizer: recognizers, events: events, logger: logger, report: report,
                judged: { [weak self] language, through, end in self?.judged(language, through: through, end) })
            lanes[key] = Lane(worker: worker, loop: Task { await worker.run() })
            return worker
        }
    }

    /// A lane judged a pause: kept for the endpointer's next period, and a recording waiting
    /// for it goes on.
    func judged(_ language: String, through: SampleTime, _ end: SentenceEnd?) {
        shared.withLock { state in
            if state.turn.judged(language, through: through, end) { speculate(&state) }
        }
        wakeup.wake()
    }

    /// Asks every lane to end (after what it was given) and returns their loops to wait for.
    func closeLanes() -> [Task<Void, Never>] {
        lanes.withLock { lanes in
            for lane in lanes.values { lane.worker.inbox.yield(.close) }
            return lanes.values.map(\.loop)
        }
    }

    /// Whether auto mode can tell who spoke by decoding both languages.
    static func dualDecoding(_ settings: RuntimeSettings, hearing: (String) -> Bool, laneKey: (String) -> String) -> Bool {
        settings.mode == .auto && hearing(settings.speakerA) && hearing(settings.speakerB)
            && laneKey(settings.speakerA) != laneKey(settings.speakerB)
    }

    static func dualDecoding(_ settings: RuntimeSettings, _ engines: EngineAccess) -> Bool {
        dualDecoding(settings, hearing: engines.canHear, laneKey: engines.lane)
    }

    /// Queues the recognizer work `actions` call for, under the lock that decided them (the
    /// speculation a new or cancelled utterance dropped is forgotten by the caller:
    /// `process`, `locked`).
    func queueRecognition(_ actions: [ConversationMachine.Action], _ state: inout Shared) {
        for action in actions {
            switch action {
            case .startRecognition, .resumeRecognition:
                // Decided once for the utterance (a resumed one keeps its languages).
                let resumed = if case .resumeRecognition = action { true } else { false }
                if !resumed { state.turn.allowEndCue(judgedByEveryLanguage(state.turn)) }
                // On resumption each lane goes on from its words at the withdrawn end, fed the
                // audio since (the period's feed): its live words and its finish cover the
                // whole utterance without decoding it again.
                for language in state.turn.utteranceLanguages {
                    lane(for: language).inbox.yield(resumed ? .resume(language: language) : .start(language: language))
                }
            case .finishRecognition(let speaker, let turnLanguages):
                let sides = turnLanguages
                let languages = state.turn.utteranceLanguages.isEmpty ? [sides.source] : state.turn.utteranceLanguages
                state.turn.recognitionFinishing(speaker, sides, at: clock.now)
                state.waiter = nil
                let voiceFrom = state.turn.accurateVoiceFrom
                let utterance = state.turn.takeUtteranceAudio()
                let detect = detectsSpeaker(state.turn, languages: languages, sides: sides)
                let aboveFloor = state.turn.utteranceAboveFloorDB
                let ended = clock.now
                let serial = state.turn.turnSerial
                let collector = Collector(expecting: languages) { [self] results in
                    logger.debug("the streaming lanes finished \(clock.milliseconds(since: ended)) ms after the end of the turn")
                    guard let accurate, hearsAccurately(sides) else { return recognized(results, expected: speaker, sides: sides, serial: serial) }
                    let pass = AccuratePass.Utterance(
                        samples: utterance, expected: speaker, sides: sides, detect: detect,
                        streaming: results, aboveFloorDB: aboveFloor, voiceFrom: voiceFrom, laneLanguages: streamingLanes(languages))
                    accurate.inbox.yield(
                        .hear(pass, speculative: false, wanted: { [weak self] in self?.shared.withLock { $0.turn.turnSerial == serial } ?? false }) {
                            [self] heard in
                            recognized(
                                heard.recognition, speaker: heard.speaker, language: heard.language, target: heard.target, detection: heard.detection,
                                serial: serial)
                        })
                }
                for language in languages {
                    lane(for: language).inbox.yield(.finish(language: language) { collector.add(language, $0) })
                }
            case .cancelRecognition:
                for language in state.turn.utteranceLanguages { lane(for: language).inbox.yield(.cancel(language: language)) }
            default:
                break
            }
        }
    }

    /// Whether the accurate pass gives the words of an utterance between `sides`.
    func hearsAccurately(_ sides: TurnLanguages) -> Bool {
        guard accurate != nil, let hearing = accurateHearing else { return false }
        return hearing.name(for: sides.source) != nil || hearing.name(for: sides.target) != nil
    }

    /// Whether who spoke is told by what is heard: auto mode, with both languages decoded by
    /// the streaming lanes, or a detector and both languages heard.
    func detectsSpeaker(_ turn: TurnLogic, languages: [String], sides: TurnLanguages) -> Bool {
        guard turn.machine.settings.mode == .auto else { return false }
        if languages.count > 1 { return true }
        guard accurateHearing?.detector != nil else { return false }
        return [sides.source, sides.target].allSatisfy { hearing($0) || accurateHearing?.name(for: $0) != nil }
    }

    /// Whether who speaks is fixed (what `state`, `speech_start` and `partial` events say as
    /// `decided`): false while auto mode tells it from the audio, for the utterance being heard
    /// or, while listening, the next one; nil in the other states.
    func speakerDecided(_ turn: TurnLogic) -> Bool? {
        switch turn.machine.state {
        case .hearing:
            guard let sides = turn.utteranceSides else { return true }
            return !detectsSpeaker(turn, languages: turn.utteranceLanguages, sides: sides)
        case .listening(let speaker):
            let settings = turn.machine.settings
            let language = speaker == .a ? settings.languageA : settings.languageB
            let other = speaker == .a ? settings.languageB : settings.languageA
            let sides = TurnLanguages(source: language, target: other)
            return !detectsSpeaker(turn, languages: turn.dualDecoding ? [language, other] : [language], sides: sides)
        default:
            return nil
        }
    }

    /// Every lane has finished the utterance: decide who spoke, then go on with their words.
    private func recognized(_ results: [(language: String, recognition: Recognition)], expected: Speaker, sides: TurnLanguages, serial: Int) {
        let decision = TurnLogic.decideLanguage(results, sides: sides)
        let language = decision?.language ?? sides.source
        let (speaker, target) = sides.heard(language, expected: expected)
        let finished = results.first { $0.language == language }?.recognition ?? Recognition(text: "", confidence: nil)
        recognized(finished, speaker: speaker, language: language, target: target, detection: decision?.detection, serial: serial)
    }
}

/// Gathers one utterance's results from its lanes and hands them on once all are in.
final class Collector: Sendable {
    private let expecting: [String]
    private let results = Mutex<[String: Recognition]>([:])
    private let done: @Sendable ([(language: String, recognition: Recognition)]) -> Void

    init(expecting: [String], done: @escaping @Sendable ([(language: String, recognition: Recognition)]) -> Void) {
        self.expecting = expecting
        self.done = done
    }

    func add(_ language: String, _ recognition: Recognition) {
        let all = results.withLock { results -> [(language: String, recognition: Recognition)]? in
            results[language] = recognition
            guard results.count == expecting.count else { return nil }
            return expecting.compactMap { language in results[language].map { (language, $0) } }
        }
        if let all { done(all) }
    }
}
