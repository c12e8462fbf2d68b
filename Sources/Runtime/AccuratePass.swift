import Foundation
import Logging
import ParleyAudio
import ParleyConversation
import ParleyCore
import ParleyProtocol
import ParleyRecognition
import Synchronization

/// The accurate pass: once an utterance has ended, an accurate engine hears it whole, and its
/// words are the turn's (translated, spoken, stored, shown as final).
///
/// - Who spoke (auto mode): the detector (Whisper) chooses between the two languages. When it
///   cannot, the streaming recognizers' decision stands (`LanguageDecision`).
/// - The words: the first engine that hears the language (Moonshine for English, Whisper for
///   the rest), the next one when it fails or does not trust its words (`Transcript.distrusted`),
///   and the streaming recognizer's words when every engine failed. Words no engine made out
///   are no words. A failure is reported in one line; the turn goes on.
/// - No words (the engines heard noise, a cough) means no turn.
enum AccuratePass {
    /// One ended utterance, with what the streaming lanes heard.
    struct Utterance: Sendable {
        var samples: [Int16]
        var expected: Speaker
        /// The expected speaker's language (`source`) and the other's.
        var sides: TurnLanguages
        /// Whether the speaker is told by what is heard (auto mode, both languages heard).
        var detect: Bool
        var streaming: [(language: String, recognition: Recognition)]
        /// How far the voice stood above the room's floor (dB; nil: unknown).
        var aboveFloorDB: Float? = nil
        /// Where the voice begins in `samples` (what comes before is the endpointer's pre-roll).
        var voiceFrom = 0
        /// The languages the streaming lanes decode this utterance in (`TurnLogic.utteranceLanguages`).
        var laneLanguages: Set<String> = []

        /// What `engine` hears: from its `roomBeforeVoiceMs` before the voice, else all of it.
        func samples(for engine: any UtteranceTranscriber) -> [Int16] {
            guard let room = engine.roomBeforeVoiceMs else { return samples }
            return Array(samples[min(samples.count, max(0, voiceFrom - room * captureSampleRate / 1000))...])
        }

        /// A room this noisy is heard by the engines that hold up in noise first (Whisper): the
        /// voice less than `noisyBelowDB` above the floor.
        var noisy: Bool { (aboveFloorDB ?? .infinity) < AccuratePass.noisyBelowDB }
    }

    /// Where a room counts as noisy: the voiced periods' mean level over the floor. Clean
    /// recordings measure 31-41 dB; the same sentences over babble or a kitchen at 15 dB SNR
    /// (by RMS over the sentence) 18-26 dB, and a room tone of pink noise at about 20 dB SNR
    /// (bench/turn-end.py's room) 22-30 dB. Moonshine keeps within a few words of Whisper at
    /// 20 dB SNR in every noise measured, and at 10 dB in all but babble, where it writes the
    /// background talkers' words too (66 % WER against 20 %: docs/benchmarks.md, "Noise"); so
    /// only a voice under 22 dB over the floor (about 15 dB SNR and worse) goes to Whisper
    /// first, and a room tone keeps Moonshine's speed (a third of Whisper's time for English).
    static let noisyBelowDB: Float = 22

    /// What the pass decided.
    struct Heard: Sendable {
        var speaker: Speaker
        var language: String
        var target: String
        var recognition: Recognition
        var detection: SpeakerDetection?
        /// The language told from the utterance's opening, kept for the next pass over it.
        var opening: Opening? = nil
        /// Whether an engine stopped hearing it because it was not wanted any more
        /// (`AccurateHearing.stop`): no words, and nothing to answer a turn from.
        var stopped = false

        /// The engine that heard a voice in it but did not trust its words (`Transcript.distrusted`),
        /// so that the next engine heard it (or, with `recognition` empty, none made it out).
        var distrustedBy: String? = nil

        /// An utterance whose pass was stopped: nobody gets its (empty) words.
        static func stopped(_ utterance: Utterance) -> Heard {
            let (speaker, target) = utterance.sides.heard(utterance.sides.source, expected: utterance.expected)
            return Heard(
                speaker: speaker, language: utterance.sides.source, target: target, recognition: Recognition(text: "", confidence: nil),
                stopped: true)
        }
    }

    /// What the detector told from the opening of an utterance (`TurnLogic.openingMs` of its voice): a
    /// later pass over the same utterance (at its next pause, or at its end) gives the detector
    /// the same samples, and is answered from this instead.
    struct Opening: Sendable {
        var samples: [Int16]
        /// The languages it was told between.
        var candidates: [String]
        var transcript: Transcript
    }

    /// The opening of `utterance` that `detector` hears while another engine hears the words:
    /// what it would hear of the whole, through `TurnLogic.openingMs` after the voice begins.
    static func opening(of utterance: Utterance, for detector: any UtteranceTranscriber) -> [Int16] {
        let heard = utterance.samples(for: detector)
        let before = utterance.samples.count - heard.count
        return Array(heard.prefix(max(0, utterance.voiceFrom - before) + TurnLogic.openingMs * captureSampleRate / 1000))
    }

    /// What the detector is asked to tell the language from the opening alone: where the lanes
    /// decode both candidate languages (they are seldom wrong, and the detector only checks them);
    /// nil where one has no lane (Portuguese: the detector hears the whole).
    static func openingRequest(_ request: TranscriptionRequest, for utterance: Utterance) -> TranscriptionRequest? {
        guard Set(request.candidates).isSubset(of: utterance.laneLanguages) else { return nil }
        var asked = request
        asked.detectOnly = Set(request.candidates)
        return asked
    }

    /// What the detector is asked to tell the language of `utterance`'s opening while the person
    /// goes on speaking (`TurnLogic.Period.tellOpening`: `utterance` holds the pre-roll and the
    /// opening): the detector, the samples and the request. The pass at the utterance's pause or
    /// end then finds it told (`hear`'s `known`), and the engine that hears the words (Moonshine)
    /// has the processor to itself. Nil where the pass would not tell it from the opening.
    static func openingToTell(_ utterance: Utterance, with hearing: AccurateHearing) -> (
        detector: any UtteranceTranscriber, samples: [Int16], request: TranscriptionRequest
    )? {
        let sides = utterance.sides
        guard utterance.detect, let detector = hearing.detector, let request = hearing.detection(between: [sides.source, sides.target]),
            let asked = openingRequest(request, for: utterance)
        else { return nil }
        return (detector, opening(of: utterance, for: detector), asked)
    }

    /// Hears `utterance` with `hearing`'s engines. Blocks: called on the accurate worker.
    /// `known`: the opening whose language was told last, in the last pass or while the person
    /// spoke (the same utterance's gives the same samples, and its language is not told again).
    /// It may wait for an opening being told: it is called before the detector is asked anything
    /// in an utterance it tells, so the detector hears one thing at a time.
    static func hear(_ utterance: Utterance, with hearing: AccurateHearing, known: () -> Opening? = { nil }, report: (String) -> Void) -> Heard {
        let sides = utterance.sides
        var language: String?
        var detection: SpeakerDetection?
        var detected: Transcript?
        // While the detector tells the language, the engine that hears the language the
        // streaming lanes take the speech for (when it is not the detector: Moonshine) already
        // hears it, on another core, and its words are then ready with the language. When the
        // lanes take it for a language the detector hears itself (Spanish), nothing runs beside
        // the detector: Moonshine on a Spanish sentence took a core from Whisper for nothing.
        var early: Ahead?
        var opened: Opening?
        let noisy = utterance.noisy
        if utterance.detect, let request = hearing.detection(between: [sides.source, sides.target], noisy: noisy), let detector = hearing.detector {
            let likely = likelyLanguage(of: utterance)
            var heardByDetector = utterance.samples(for: detector)
            var asked = request
            var fromOpening = false
            if let first = hearing.engines(for: likely, noisy: noisy).first, first !== detector {
                early = Ahead(first, utterance.samples(for: first), language: likely)
                // Where the lanes decode both languages, they are seldom wrong: the detector only
                // tells the language, from the opening, and if that is a language it hears itself
                // (the lanes were wrong), it hears the whole after (below). Where the other
                // language has no lane (French, Portuguese), it tells and decodes in one call.
                if let told = openingRequest(request, for: utterance) {
                    heardByDetector = opening(of: utterance, for: detector)
                    asked = told
                    fromOpening = true
                }
            }
            let told = known()
            do throws(RecognizerError) {
                let transcript: Transcript
                if fromOpening, let told, told.candidates == asked.candidates, told.samples == heardByDetector {
                    transcript = told.transcript
                } else {
                    transcript = try detector.transcribe(heardByDetector, asked)
                }
                if fromOpening { opened = Opening(samples: heardByDetector, candidates: asked.candidates, transcript: transcript) }
                if transcript.language == sides.source || transcript.language == sides.target {
                    language = transcript.language
                    detected = transcript.decoded ? transcript : nil
                    let rival = transcript.language == sides.source ? sides.target : sides.source
                    detection = SpeakerDetection(
                        decidedBy: .languageID, scores: transcript.languageProbabilities, rivalLanguage: rival,
                        rivalText: utterance.streaming.first { $0.language == rival }?.recognition.text)
                }
            } catch where error.stopped {
                // Not wanted any more: no other engine hears it (the one beside is waited for:
                // it must not hear on while the next pass starts).
                _ = early?.result()
                return .stopped(utterance)
            } catch {
                report("\(detector.name) could not tell the language: \(error); the streaming recognizers decide")
            }
        }
        if language == nil, let decision = TurnLogic.decideLanguage(utterance.streaming, sides: sides) {
            language = decision.language
            detection = decision.detection
        }
        let chosen = language ?? sides.source
        let (speaker, target) = sides.heard(chosen, expected: utterance.expected)
        let streamed = utterance.streaming.first { $0.language == chosen }?.recognition
        var recognition: Recognition?
        // The engines that heard it, and the first words one of them did not trust (Whisper on a
        // soft or accented voice it could not make out): the next engine that hears the language
        // hears it then; when none makes it out, nothing was recognized, as the first said.
        var heardBy: [ObjectIdentifier] = []
        var distrusted: Transcript?
        func take(_ transcript: Transcript, from engine: any UtteranceTranscriber) {
            heardBy.append(ObjectIdentifier(engine))
            if transcript.distrusted {
                distrusted = distrusted ?? transcript
            } else {
                recognition = Recognition(transcript, streaming: streamed)
            }
        }
        if let detected, let detector = hearing.detector, hearing.engines(for: chosen, noisy: noisy).first === detector {
            take(detected, from: detector)
        }
        if recognition == nil, let early, early.language == chosen {
            heardBy.append(ObjectIdentifier(early.engine))
            switch early.result() {
            case .success(let transcript): take(transcript, from: early.engine)
            case .failure(let error) where error.stopped: return .stopped(utterance)
            case .failure(let error):
                report("\(early.engine.name) could not hear the \(chosen) turn: \(error); \(fallback(after: early.engine, for: chosen, in: hearing, noisy: noisy, heard: heardBy, distrusted: distrusted != nil)) hears it")
            }
        }
        for engine in hearing.engines(for: chosen, noisy: noisy) where recognition == nil && !heardBy.contains(ObjectIdentifier(engine)) {
            do throws(RecognizerError) {
                take(try engine.transcribe(utterance.samples(for: engine), TranscriptionRequest(language: chosen)), from: engine)
            } catch where error.stopped {
                return .stopped(utterance)
            } catch {
                report("\(engine.name) could not hear the \(chosen) turn: \(error); \(fallback(after: engine, for: chosen, in: hearing, noisy: noisy, heard: heardBy, distrusted: distrusted != nil)) hears it")
            }
        }
        let unheard = distrusted.map { Recognition($0, streaming: streamed) }
        return Heard(
            speaker: speaker, language: chosen, target: target,
            recognition: recognition ?? unheard ?? streamed ?? Recognition(text: "", confidence: nil), detection: detection, opening: opened,
            distrustedBy: distrusted?.engine)
    }

    /// The language the streaming lanes take the utterance for: the one lane whose words a pause's
    /// pass was started on, else their decision (`TurnLogic.decideLanguage`: the expected
    /// speaker's when they cannot tell).
    static func likelyLanguage(of utterance: Utterance) -> String {
        let sides = utterance.sides
        if utterance.streaming.count == 1, let only = utterance.streaming.first?.language, only == sides.source || only == sides.target {
            return only
        }
        return TurnLogic.decideLanguage(utterance.streaming, sides: sides)?.language ?? sides.source
    }

    /// An engine hearing an utterance on a thread of its own, while the detector runs.
    final class Ahead: Sendable {
        let engine: any UtteranceTranscriber
        let language: String
        private let words: Pending<Result<Transcript, RecognizerError>>

        init(_ engine: any UtteranceTranscriber, _ samples: [Int16], language: String) {
            self.engine = engine
            self.language = language
            words = Pending(name: "parley-ahead") {
                Result { () throws(RecognizerError) in try engine.transcribe(samples, TranscriptionRequest(language: language)) }
            }
        }

        /// Waits for the words.
        func result() -> Result<Transcript, RecognizerError> {
            words.value() ?? .failure(RecognizerError("\(engine.name) gave no answer"))
        }
    }

    /// Who hears a language once `engine` has failed: the next engine (in the room's order) not
    /// heard yet, else the streaming recognizer, or nobody when an engine did not trust its words
    /// (they are no words, not the streaming recognizer's guess).
    static func fallback(
        after engine: any UtteranceTranscriber, for language: String, in hearing: AccurateHearing, noisy: Bool = false,
        heard: [ObjectIdentifier] = [], distrusted: Bool = false
    ) -> String {
        let engines = hearing.engines(for: language, noisy: noisy)
        if let index = engines.firstIndex(where: { $0 === engine }),
            let next = engines[(index + 1)...].first(where: { !heard.contains(ObjectIdentifier($0)) })
        {
            return next.name
        }
        return distrusted ? "nobody" : "the streaming recognizer"
    }
}

extension Recognition {
    /// An accurate engine's words, with the streaming recognizer's hypothesis kept beside them.
    init(_ transcript: Transcript, streaming: Recognition?) {
        let words = transcript.text.split(separator: " ").map(String.init)
        self.init(
            text: transcript.text, confidence: transcript.confidence,
            words: transcript.confidence.map { confidence in words.map { RecognizedWord(text: $0, confidence: confidence) } } ?? [],
            score: nil, frames: streaming?.frames ?? 0)
        engine = transcript.engine
        streamingText = streaming?.text
    }
}

/// Runs the accurate pass on a queue of its own: its engines block (Moonshine decodes in
/// process, Whisper is waited for on a pipe), so they never hold the capture loop or the
/// concurrency pool.
actor AccurateWorker {
    enum Command: Sendable {
        /// Load the engines now (start the Whisper worker), so the first turn is fast.
        case warm
        /// Hear an utterance, only while `wanted` says so when its turn in the queue comes
        /// (speech may have resumed: after a pause, or after an end that was withdrawn);
        /// `speculative`: at a pause, ahead of the end of the turn. `asked`: when it was asked for
        /// (a pass may wait in the queue behind another).
        case hear(
            AccuratePass.Utterance, speculative: Bool, wanted: @Sendable () -> Bool = { true }, asked: ContinuousClock.Instant = .now,
            reply: @Sendable (AccuratePass.Heard) -> Void)
        /// Tell the language of an utterance's opening while the person speaks on
        /// (`AccuratePass.openingToTell`), on a thread of its own (`Telling`), while `wanted` says
        /// so (the utterance is still the one heard).
        case tell(AccuratePass.Utterance, wanted: @Sendable () -> Bool)
        case close
    }

    private let executor = QueueExecutor(label: "parley.accurate")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    nonisolated let inbox: AsyncStream<Command>.Continuation
    private let commands: AsyncStream<Command>
    private let hearing: AccurateHearing
    private let report: @Sendable (String) -> Void
    private let logger: Logger
    /// What the last speculation heard: the end of a turn on the same audio is answered from it.
    private var lastSpeculation: (utterance: AccuratePass.Utterance, heard: AccuratePass.Heard)?
    /// The opening whose language the last pass told (`AccuratePass.Opening`).
    private var lastOpening: AccuratePass.Opening?
    /// Ends of turns answered from a speculation, and passes run (for tests and the log).
    private(set) var reused = 0
    private(set) var passes = 0
    /// Passes stopped because they were not wanted any more (of `passes`).
    private(set) var stopped = 0
    /// Openings whose language was told while the person spoke (`Command.tell`).
    private(set) var openingsTold = 0
    /// The opening whose language is being told while the person speaks, on a thread of its own
    /// (a pass that starts meanwhile has Moonshine hear the words beside it).
    private var telling: Telling?

    /// Waits for the opening being told, if any, and keeps it as the last one told.
    private func settleTelling() {
        guard let told = telling?.opening() else {
            telling = nil
            return
        }
        telling = nil
        openingsTold += 1
        lastOpening = told
    }
    /// How often (ms) a running pass checks whether it is still wanted.
    static let watchIntervalMs = 30

    init(hearing: AccurateHearing, logger: Logger, report: @escaping @Sendable (String) -> Void) {
        (commands, inbox) = AsyncStream.makeStream()
        self.hearing = hearing
        self.logger = logger
        self.report = report
    }

    func run() async {
        for await command in commands {
            switch command {
            case .warm:
                for case let engine as WyomingTranscriber in hearing.engines {
                    do { try engine.warm() } catch { report("\(error)") }
                }
            case .hear(let utterance, let speculative, let wanted, let asked, let reply):
                if !wanted() { continue }
                // The same audio between the same sides: the pause's words stand, even if the
                // floor moved the utterance across `noisyBelowDB` since (near it, either engine
                // is the right one, and hearing it again costs the person the whole pass).
                if !speculative, let last = lastSpeculation, last.heard.recognition.engine != nil, last.utterance.samples == utterance.samples,
                    last.utterance.sides == utterance.sides, last.utterance.expected == utterance.expected, last.utterance.detect == utterance.detect
                {
                    reused += 1
                    logger.debug("the accurate pass: the end of the turn answered from the pause's pass")
                    var heard = last.heard
                    // The words stand; what the streaming lanes heard at the end is kept beside them.
                    if heard.recognition.engine != nil {
                        heard.recognition.streamingText = utterance.streaming.first { $0.language == heard.language }?.recognition.text
                    }
                    reply(heard)
                    continue
                }
                passes += 1
                let started = ContinuousClock.now
                // A pass the person went on from (or a newer pass replaced) is stopped, so that the
                // one that follows does not wait for words nobody will get.
                let watch = PassWatch(everyMs: Self.watchIntervalMs, wanted: wanted) { [hearing] in hearing.stop() }
                // The detector tells an opening for one utterance at a time: a pass that would not
                // ask for the one being told (none is told for it) waits for it first.
                if !utterance.detect { settleTelling() }
                let pending = telling
                let last = lastOpening
                let heard = AccuratePass.hear(utterance, with: hearing, known: { pending?.opening() ?? last }, report: report)
                watch.finish()
                settleTelling()
                if heard.stopped {
                    stopped += 1
                    logger.debug(
                        "the accurate pass: \(speculative ? "at a pause" : "at the end"), \(utterance.samples.count * 1000 / captureSampleRate) ms of audio, stopped after \((ContinuousClock.now - started).milliseconds) ms: not wanted any more")
                    continue
                }
                // A pass that told no opening (a Spanish one, decoded whole) leaves the one told
                // while the person spoke: only the same samples are ever answered from it.
                if let opening = heard.opening { lastOpening = opening }
                // Where a turn's time goes (no words: they stay in the history the user chose).
                logger.debug(
                    "the accurate pass: \(speculative ? "at a pause" : "at the end"), \(utterance.samples.count * 1000 / captureSampleRate) ms of audio heard in \((ContinuousClock.now - started).milliseconds) ms by \(heard.recognition.engine ?? "the streaming recognizer") (\(heard.language))\(heard.distrustedBy.map { ", after \($0) did not trust its words" } ?? ""), \(utterance.aboveFloorDB.map { String(format: "%.1f dB", $0) } ?? "?") over the floor, \((ContinuousClock.now - asked).milliseconds) ms after it was asked for")
                lastSpeculation = speculative ? (utterance, heard) : nil
                reply(heard)
            case .tell(let utterance, let wanted):
                if !wanted() { continue }
                settleTelling()
                guard let (detector, samples, request) = AccuratePass.openingToTell(utterance, with: hearing) else { continue }
                telling = Telling(samples: samples, candidates: request.candidates) { [hearing, logger] in
                    let started = ContinuousClock.now
                    let watch = PassWatch(everyMs: Self.watchIntervalMs, wanted: wanted) { hearing.stop() }
                    defer { watch.finish() }
                    do throws(RecognizerError) {
                        let transcript = try detector.transcribe(samples, request)
                        logger.debug(
                            "the accurate pass: \(transcript.language) told from the opening (\(samples.count * 1000 / captureSampleRate) ms) while the person speaks, in \((ContinuousClock.now - started).milliseconds) ms")
                        return transcript
                    } catch {
                        // The pass at the pause or the end asks again, and reports what goes wrong then.
                        logger.debug("the accurate pass: the opening's language not told while the person speaks: \(error)")
                        return nil
                    }
                }
            case .close:
                if passes > 0 {
                    logger.notice(
                        "the accurate pass heard \(passes) utterances (\(stopped) stopped when the person went on); \(reused) turn ends were answered from what it heard during the pause; \(openingsTold) openings' language told while the person spoke")
                }
                settleTelling()
                inbox.finish()
            }
        }
    }
}

/// A value made on a thread of its own, not the dispatch pool: its reader waits for it, and a
/// pool whose threads are all blocked (decoders, the sound card) would never make it.
final class Pending<Value: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let made = Mutex<Value?>(nil)

    init(name: String, _ make: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            let value = make()
            made.withLock { $0 = value }
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the value (at once once made; nil never: it is set before `done` is signalled).
    func value() -> Value? {
        done.wait()
        done.signal()
        return made.withLock { $0 }
    }
}

/// The language of an utterance's opening, being told on a thread of its own while the person
/// speaks (`AccurateWorker.Command.tell`).
final class Telling: Sendable {
    let samples: [Int16]
    let candidates: [String]
    private let transcript: Pending<Transcript?>

    init(samples: [Int16], candidates: [String], tell: @escaping @Sendable () -> Transcript?) {
        self.samples = samples
        self.candidates = candidates
        transcript = Pending(name: "parley-opening", tell)
    }

    /// Waits for the language told: the opening, or nil when the detector could not tell it.
    func opening() -> AccuratePass.Opening? {
        (transcript.value() ?? nil).map { AccuratePass.Opening(samples: samples, candidates: candidates, transcript: $0) }
    }
}

/// Watches a running pass on a thread of its own: once `wanted` says it is not wanted any more
/// (it never is again), `stop` is called at every look until the pass is over: an engine that
/// heard nothing at the first call (another engine was hearing) may hear at the next. Nothing
/// is called after `finish` returns (the next pass is not stopped by this one's watch).
final class PassWatch: Sendable {
    private let finished = Mutex(false)
    private let done = DispatchSemaphore(value: 0)

    init(everyMs interval: Int, wanted: @escaping @Sendable () -> Bool, stop: @escaping @Sendable () -> Void) {
        // A thread of its own, as `AccuratePass.Ahead`: the pool's threads may all be blocked.
        let thread = Thread { [self] in
            while done.wait(timeout: .now() + .milliseconds(max(1, interval))) == .timedOut {
                let over = finished.withLock { finished -> Bool in
                    guard !finished else { return true }
                    if !wanted() { stop() }
                    return false
                }
                if over { return }
            }
        }
        thread.name = "parley-pass-watch"
        thread.start()
    }

    /// The pass is over: the watch ends, and stops nothing from now on.
    func finish() {
        finished.withLock { $0 = true }
        done.signal()
    }
}
