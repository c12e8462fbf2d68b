/// The logic of a turn around the state machine, as pure as it: the endpointer fed period by
/// period, the lanes' judgements of a pause, the end cue and the speculation candidate they
/// give, and the utterance's languages, end and audio; the running speculation
/// (`Speculation.swift`) and the turn being recorded with its timings (`TurnDraft.swift`).
///
/// Like the machine it owns no thread, device, engine or clock: the runtime (`Interpreter`)
/// holds it under its lock, feeds it captured periods, the lanes' judgements and the workers'
/// results with the instants it read them at, and performs what it returns (the machine's
/// actions, the audio to feed the lanes, what to do with a speculation, the log lines). So
/// every judgement and decision can be tested sample by sample.

import Foundation
// The machine's vocabulary and the parts the turn is decided with; users import them themselves.
public import ParleyCore
public import ParleyEndpoint
public import ParleyRecognition

/// A lane's view of a pause: how likely the words heard through sample `through` end the
/// sentence (nil: no words yet, or the recognizer cannot tell).
public struct Judgement: Sendable, Equatable {
    public var through: SampleTime
    public var end: SentenceEnd?
}

/// See the top of this file.
public struct TurnLogic: Sendable {
    /// The turn-taking; changed only through this type (`handle`, `reconfigure`, ...).
    public private(set) var machine: ConversationMachine
    /// Where speech starts and ends; changed only through this type.
    public private(set) var endpointer: Endpointer
    /// Whether auto mode can tell the speakers apart by what it hears: both sides hearable, on
    /// decoders of their own.
    public var dualDecoding = false
    /// Whether the utterance's audio is kept (for the accurate pass).
    public let keepsAudio: Bool
    /// The languages the utterance being heard is decoded in (fixed when it starts): the
    /// expected speaker's first, then, in auto mode, the other side's.
    public private(set) var utteranceLanguages: [String] = []
    /// The languages of the expected speaker and of the other side when the utterance started.
    public private(set) var utteranceSides: TurnLanguages?
    /// The lanes' recent views of the utterance's pause, by language, oldest first (the last
    /// `keptJudgements`): lanes run side by side, one may be a few periods ahead.
    public private(set) var judgements: [String: [Judgement]] = [:]
    /// The sample through which the lanes were asked to judge the pause (a recording waits for
    /// their answer, so it gives the same turns as a live microphone).
    public private(set) var awaitedJudgement: SampleTime?
    /// How the utterance heard last ended: what decided it and after how much silence.
    public private(set) var utteranceEnd: (reason: EndpointEvent.EndReason, pause: SampleTime)?
    /// How far that utterance's voice stood above the room's floor (dB): a noisy room is heard
    /// by the engine that holds up in noise.
    public private(set) var utteranceAboveFloorDB: Float?
    /// The audio of the utterance being heard (from its pre-roll), when `keepsAudio`.
    public private(set) var utteranceAudio: [Int16] = []
    /// Where in `utteranceAudio` the voice that started the utterance begins (after its pre-roll,
    /// with its soft first sounds: `Endpointer.voiceStart`).
    public private(set) var utteranceOnset = 0
    /// Where the utterance being heard started, on the capture timeline.
    private var utteranceStart: SampleTime = 0
    /// Where its voice began, on the capture timeline: after the pre-roll, or after another's
    /// voice the accurate pass leaves out (`leaveOutLeadIn`).
    private var voiceOnset: SampleTime = 0
    /// How long the voice of the utterance heard last lasted, from its first voice to its last
    /// (its pauses included): with its words, how slowly it was said (`SlowSpeech`).
    public private(set) var utteranceVoice: SampleTime = 0
    /// Where in `utteranceAudio` what the accurate pass hears begins: after another's voice that
    /// came before the people's (`Endpointer.leadIn`), else at its start.
    public private(set) var accurateFrom = 0
    /// Where the people's voice begins in what the accurate pass hears, after such a voice.
    private var leadVoiceFrom: Int?
    /// Where the voice begins in what the accurate pass hears (`accurateAudio`).
    public var accurateVoiceFrom: Int { leadVoiceFrom ?? utteranceOnset }
    /// The audio of the utterance whose end was decided, from its pre-roll to now, while that end
    /// can still be withdrawn (`ConversationMachine.isResumable`): if the person goes on, the
    /// utterance goes on with all of it, and the accurate pass hears it whole.
    public private(set) var heldAudio: [Int16] = []
    /// How much of `utteranceAudio` the lanes had been fed when its end was decided: if the
    /// person goes on, the lanes go on from there (`ConversationMachine.Action.resumeRecognition`)
    /// instead of hearing the whole utterance again, work that a slow processor (a Pi) could
    /// not catch up with before the next end.
    public private(set) var lanesHeard = 0
    /// How long `utteranceAudio` was at its last decided end (its end frame included): if what
    /// the person went on with turns out not to be words, the accurate pass hears it as it was.
    private var audioAtEnd = 0
    /// Whether the lanes' judgement of a pause may end this utterance: every language it may be
    /// in has a language model to judge it. The runtime decides it once, when it starts the
    /// utterance's recognition (`allowEndCue`), so no period asks for it again; true until then.
    public private(set) var endCueAllowed = true
    /// Counts the turns started (heard, typed) and the utterances that went on after their end
    /// was withdrawn: results of an earlier one (words, a translation) are not this one's.
    public private(set) var turnSerial = 0
    /// How the utterance had ended before it went on (nil: it has not gone on): if what follows
    /// is too short to be words, it ends so again, instead of being discarded with them.
    public private(set) var resumedEnd: (reason: EndpointEvent.EndReason, pause: SampleTime)?
    /// For a recording (not real time): how much of it after a decided end is heard before
    /// that utterance is answered, whatever the engines' speed. Speech that starts within it
    /// goes on with the utterance; speech after it waits for the answer. So the turns a
    /// recording gives do not depend on how fast or busy the machine is. 0 for a live
    /// microphone: there the answer goes as soon as it is ready and its wait is over
    /// (`answerWait`), and the person who goes on before it does goes on with the utterance
    /// (`recordingAnswerMs`).
    public private(set) var answerHold: SampleTime = 0
    /// Where on the capture timeline the end of the utterance heard last was decided, while
    /// that end may be withdrawn (nil otherwise).
    public private(set) var endDecidedAt: SampleTime?
    /// The end of the last period heard (`hear`).
    public private(set) var heardThrough: SampleTime = 0
    /// The translation of an utterance, held while that utterance may still go on: from a
    /// recording until `answerHold` of it after its end has been heard (or the recording ends),
    /// and, live or not, while the language model's end waits (`answerWait`).
    public private(set) var heldAnswer: ConversationMachine.Event?
    /// How long after its decided end (`endDecidedAt`) the answer to an utterance the language
    /// model ended waits: until the pause reaches its language's `EndpointSettings.answerAfterMs`
    /// (at most the silence limit), or, when its words end mid-sentence (`UnfinishedSentence`:
    /// a dangling word, a comma, an accurate engine's words without a stop) or were said slowly
    /// (`SlowSpeech`, under `EndpointSettings.slowSpeechBelow`), the silence limit.
    /// 0 when neither asks for a wait.
    public private(set) var answerWait: SampleTime = 0
    /// The input ended (`endInput`): nothing more will be heard.
    public private(set) var inputEnded = false
    /// Whether a client paused the conversation: the microphone is released.
    public private(set) var userPaused = false
    /// Whether the capture device failed and is being opened again.
    public private(set) var deviceLost = false
    /// Whether this utterance's opening was handed on to tell its language (`Period.tellOpening`).
    public private(set) var openingTold = false
    /// The running speculation (`Speculation.swift`): dropped when speech resumes, the
    /// utterance is cancelled, a new one starts, or the turn ends with other words.
    public internal(set) var speculation: Speculation?
    /// Speculations started so far (the last one's id).
    public internal(set) var speculationCount = 0
    /// The turn being recorded, with its timings (`TurnDraft.swift`).
    public internal(set) var draft: TurnDraft?

    /// How many recent judgements each language keeps.
    public static let keptJudgements = 16

    /// A pause this close to `silence_ms` is speculated on whatever the language model said:
    /// the silence limit will most likely end it, and its translation and audio are then ready
    /// (Apertium and espeak-ng take well under this). Thinking pauses of up to a second cost
    /// nothing with the default 1.5 s limit.
    public static let lateSpeculationMs = 400

    /// `answerHold` for a recording: about when a live Parley answers a sentence the language
    /// model ends (`likely_end_ms` plus the words and the translation, on this project's build
    /// machine; a Pi takes longer). Fixed, so a recording's turns are the same on any machine.
    public static let recordingAnswerMs = 500

    public init(machine: ConversationMachine, endpointer: Endpointer, keepsAudio: Bool) {
        self.machine = machine
        self.endpointer = endpointer
        self.keepsAudio = keepsAudio
    }

    // MARK: - The machine

    /// Feeds the machine and applies what belongs to the turn's state right here. An answer
    /// held for a recording goes as soon as the utterance can no longer go on.
    public mutating func handle(_ event: ConversationMachine.Event) -> [ConversationMachine.Action] {
        absorb(machine.handle(event)) + releaseHeldAnswer()
    }

    /// The translation of the utterance: spoken now, or held (`heldAnswer`) while the person
    /// may go on: from a recording, until `answerHold` of it after the end has been heard; live
    /// or not, when the language model ended it, until the pause reaches its language's
    /// `answerAfterMs`, or the silence limit when its words end mid-sentence or came slowly
    /// (`answerWait`).
    mutating func answer(_ event: ConversationMachine.Event) -> [ConversationMachine.Action] {
        // Judged afresh for each answer: an earlier answer's words do not make this one wait.
        answerWait = 0
        // A heard turn's (`recognitionFinishing` names its end), not a typed one's.
        if let draft, draft.endedBy != nil, let end = utteranceEnd, end.reason == .languageModel || end.reason == .accurateWords {
            // Never longer than the silence limit, which would have ended it anyway.
            var waitMs = min(endpointer.settings.answerAfterMs[draft.sourceLang] ?? 0, endpointer.settings.silenceMs)
            // Words that end mid-sentence, however they do, or said slowly: the silence limit.
            if let words = draft.recognition,
                UnfinishedSentence.ending(of: words.text, language: draft.sourceLang, punctuated: words.engine != nil) != nil
                    || SlowSpeech.isSlow(words.text, voiceMs: Int(utteranceVoice * 1000 / SampleTime(endpointer.sampleRate)), below: endpointer.settings.slowSpeechBelow)
            {
                waitMs = endpointer.settings.silenceMs
            }
            answerWait = max(0, SampleTime(waitMs) * SampleTime(endpointer.sampleRate) / 1000 - end.pause)
        }
        guard holdsAnswer else { return handle(event) }
        heldAnswer = event
        return []
    }

    /// Whether an answer given now waits: the utterance may still go on, and it is a
    /// recording's or its wait (`answerWait`) is not over.
    private var holdsAnswer: Bool {
        guard mayGoOn else { return false }
        return answerHold > 0 || (endDecidedAt.map { heardThrough < $0 + answerWait } ?? false)
    }

    /// The held answer, once it no longer waits (`holdsAnswer`): its hold was heard, the
    /// recording ended, a pause was asked for.
    private mutating func releaseHeldAnswer() -> [ConversationMachine.Action] {
        guard let held = heldAnswer, !holdsAnswer else { return [] }
        heldAnswer = nil
        return absorb(machine.handle(held))
    }

    /// Applies the machine's actions that concern the turn's state (endpointer resets, the
    /// utterance's languages, the speculation a new or cancelled utterance drops) and returns
    /// the rest.
    public mutating func absorb(_ actions: [ConversationMachine.Action]) -> [ConversationMachine.Action] {
        for action in actions {
            switch action {
            case .resetEndpointer: endpointer.reset()
            case .cancelRecognition: dropSpeculation()
            case .startRecognition(_, let languages):
                dropSpeculation()
                turnSerial += 1
                endCueAllowed = true
                openingTold = false
                heldAudio = []
                resumedEnd = nil
                lanesHeard = 0
                audioAtEnd = 0
                endDecidedAt = nil
                heldAnswer = nil
                answerWait = 0
                judgements = [:]
                awaitedJudgement = nil
                utteranceEnd = nil
                utteranceVoice = 0
                utteranceSides = languages
                utteranceLanguages = dualDecoding ? [languages.source, languages.target] : [languages.source]
            case .resumeRecognition:
                // The same languages and sides as when it started; what was made of the
                // withdrawn end (its record, its speculation, the lanes' judgements) is dropped.
                dropSpeculation()
                turnSerial += 1
                draft = nil
                judgements = [:]
                awaitedJudgement = nil
                resumedEnd = utteranceEnd
                utteranceEnd = nil
                utteranceAudio = heldAudio
                heldAudio = []
                endDecidedAt = nil
                heldAnswer = nil
                answerWait = 0
            case .speak, .askToRepeat, .tellUntranslated, .reportNoSpeech:
                heldAudio = []
            default: break
            }
        }
        return actions.filter { $0 != .resetEndpointer }
    }

    /// What happens to the microphone: a client pauses or resumes, the device is lost or back.
    public enum Microphone: Sendable, Equatable {
        case paused, resumed, lost, restored
    }

    /// The machine is paused while a client's pause or a lost device holds, and resumes when
    /// neither does. Returns the machine's actions, and whether the device was newly lost or
    /// restored (false for a loss already known, or a device that was not lost).
    public mutating func microphone(_ event: Microphone) -> (actions: [ConversationMachine.Action], deviceChanged: Bool) {
        switch event {
        case .paused:
            userPaused = true
            return (deviceLost ? [] : handle(.pause), false)
        case .resumed:
            userPaused = false
            return (deviceLost ? [] : handle(.resume), false)
        case .lost:
            guard !deviceLost else { return ([], false) }
            deviceLost = true
            return (userPaused ? [] : handle(.pause), true)
        case .restored:
            guard deviceLost else { return ([], false) }
            deviceLost = false
            return (userPaused ? [] : handle(.resume), true)
        }
    }

    /// New settings (`set`, `swap`, reload): the machine's, the silence limit, and whether auto
    /// mode decodes both languages. A turn in flight finishes as it began. Returns the machine's
    /// actions.
    public mutating func reconfigure(
        _ settings: ConversationMachine.Settings, silenceMs: Int, dualDecoding: Bool
    ) -> [ConversationMachine.Action] {
        endpointer.settings.silenceMs = silenceMs
        self.dualDecoding = dualDecoding
        return absorb(machine.reconfigure(settings))
    }

    /// The capture was opened: whether it hears what Parley plays (`AudioCapture.hearsPlayback`),
    /// and whether it is a live microphone or a recording (`AudioCapture.isRealTime`: a
    /// recording's answers are held, `answerHold`).
    public mutating func captureOpened(hearsPlayback: Bool, realTime: Bool = true) {
        machine.settings.hearsPlayback = hearsPlayback
        answerHold = realTime ? 0 : SampleTime(Self.recordingAnswerMs * endpointer.sampleRate / 1000)
    }

    /// What clients see as the state.
    public var stateName: String {
        deviceLost ? "device_lost" : machine.state.name
    }

    // MARK: - A captured period

    /// What one captured period calls for, to be performed in this order: the log lines, what
    /// becomes of the speculation, the machine's actions, then the audio for the lanes.
    public struct Period: Sendable {
        public enum Speculation: Sendable, Equatable {
            /// Nothing to do.
            case keep
            /// Speech resumed after a pause: what was made from the words before it is dropped
            /// (`speculation` is nil from here).
            case drop
            /// A pause runs: start a speculation on `speculationCandidate`, unless one serves it.
            case consider
        }

        /// Audio of the utterance for the lanes of every language it is decoded in.
        public struct Feed: Sendable {
            public var audio: [Int16]
            public var speaker: Speaker
            /// A pause is on: the lanes judge the words before it, through `through`, the last
            /// `pause` samples of which are silence.
            public var judge: (through: SampleTime, pause: Int)?
        }

        /// Debug lines: how the turn went.
        public var log: [String] = []
        /// Lines a user should see (the log's notice level): audio not heard that may have been
        /// a person's words.
        public var notices: [String] = []
        public var speculation = Speculation.keep
        /// The utterance's voice has lasted `openingMs`: its first `tellOpening` samples (the
        /// pre-roll and the opening) may be given to the detector now, to tell its language while
        /// the person goes on speaking (once an utterance; auto mode with both languages decoded).
        public var tellOpening: Int?
        public var actions: [ConversationMachine.Action] = []
        public var feed: Feed?
        /// The level above which the next period needs the voice detector's judgement: in
        /// silence, a period the level alone calls quiet cannot start speech (the detector may
        /// skip it); in speech every period is judged; while Parley speaks, none.
        public var judgeAbove: Float = .infinity
    }

    /// One captured period: the machine's clock moves to `now`, the endpointer judges the audio
    /// (its level, and `speech`, the voice-activity detector's probability when one runs), and
    /// audio of an utterance goes to the lanes. The lanes' judgement may end the utterance when
    /// `endCueAllowed` (decided once, as it started).
    public mutating func hear(_ frame: [Int16], at start: SampleTime, rmsDB: Float, speech: Float?, now: SampleTime) -> Period {
        var period = Period()
        period.actions = handle(.clock(now: now))
        if mayGoOn {
            hearAfterTheEnd(frame, at: start, rmsDB: rmsDB, speech: speech, into: &period)
            heardThrough = now
            period.actions += releaseHeldAnswer()
            return period
        }
        heardThrough = now
        guard machine.acceptsAudio else { return period }
        let wasInSpeech = endpointer.isInSpeech
        var audio: [Int16]?
        let cue = endCueAllowed ? endCue : nil
        endpointer.mayHearQuietVoice = true
        switch endpointer.process(frame, at: start, rmsDB: rmsDB, speech: speech, cue: cue, sentenceHeard: endCueAllowed && accurateWordsEnd) {
        case .started(let at, let preroll)?:
            period.log.append("speech started at \(Self.seconds(at))")
            period.actions += handle(.speechStarted(at: at))
            audio = preroll
            utteranceStart = at
            voiceOnset = at + SampleTime(endpointer.lastVoiceStart)
            accurateFrom = 0
            leadVoiceFrom = nil
            if keepsAudio {
                utteranceAudio = preroll
                utteranceOnset = endpointer.lastVoiceStart
            }
        case .ended(let end, let reason, let pause)?:
            utteranceAboveFloorDB = endpointer.lastSpeechAboveFloorDB
            utteranceVoice = max(0, end - pause - voiceOnset)
            period.log.append(
                "speech ended at \(Self.seconds(end)) (\(reason.rawValue), after \(Self.seconds(pause)) of pause; \(Int(utteranceAboveFloorDB ?? 0)) dB above the floor; \(Self.seconds(utteranceVoice)) of voice)"
            )
            if endpointer.lastEndedQuiet {
                period.log.append(
                    "a voice under the people's after a quiet room (\(Endpointer.quietRoomMs / 1000) s or more of the room without a voice), heard as a quieter person's: it ended on silence_ms alone"
                )
            }
            // Only the accurate pass leaves it out: the lanes, whose words a turn gets without it,
            // heard it.
            if keepsAudio { Self.tellBackgroundTail(endpointer.lastBackgroundTail, at: end - pause, into: &period) }
            lanesHeard = utteranceAudio.count
            if keepsAudio { utteranceAudio += frame }
            utteranceEnd = (reason, pause)
            period.actions += handle(.speechEnded(at: end))
            holdWhileTheEndMayBeWithdrawn()
        case .discarded(let end, let reason)? where resumedEnd != nil:
            // What went on after a withdrawn end was not words (a noise, a voice in the
            // background): the utterance ends as it was, with every word it had.
            Self.tell(reason, at: end, afterAPause: true, into: &period)
            lanesHeard = utteranceAudio.count
            if keepsAudio { utteranceAudio += frame }
            // The accurate pass hears it as it was at that end: what came since is pause.
            utteranceEnd = resumedEnd.map { ($0.reason, $0.pause + SampleTime(max(0, utteranceAudio.count - audioAtEnd))) }
            utteranceVoice = max(0, end - (utteranceEnd?.pause ?? 0) - voiceOnset)
            period.actions += handle(.speechEnded(at: end))
            holdWhileTheEndMayBeWithdrawn()
        case .discarded(let end, let reason)?:
            Self.tell(reason, at: end, afterAPause: false, into: &period)
            period.actions += handle(.speechDiscarded)
        case nil:
            if wasInSpeech {
                audio = frame
                // Before a speculation looks at it: the pause it measures ends here.
                if keepsAudio { utteranceAudio += frame }
                leaveOutLeadIn(into: &period)
                period.tellOpening = openingToTell()
            }
            if endpointer.isInSpeech, endpointer.pause == nil {
                period.speculation = .drop
                dropSpeculation()
            } else if endpointer.pause != nil {
                // A pause nearing the silence limit is speculated on (`lateSpeculationMs`).
                period.speculation = .consider
            }
        }
        // During a pause the lanes judge whether the words so far end the sentence.
        awaitedJudgement = nil
        if let audio, let speaker = machine.state.speaker {
            var judge: (through: SampleTime, pause: Int)?
            if endpointer.wantsCue, let pause = endpointer.pause {
                judge = (now, Int(pause))
            }
            awaitedJudgement = judge?.through
            period.feed = Period.Feed(audio: audio, speaker: speaker, judge: judge)
        }
        if machine.acceptsAudio || mayGoOn { period.judgeAbove = judgeAbove }
        return period
    }

    /// Whether the utterance whose end was decided may still go on: nothing said yet
    /// (`ConversationMachine.isResumable`), its end was a pause (not its length, not a `stop`),
    /// and it is shorter than `max_speech_ms` (a voice that never stops long, a television, does
    /// not keep one utterance open for ever).
    /// From a recording, only until `answerHold` of it after the end has been heard (or, when
    /// its answer waits longer, `answerWait`).
    public var mayGoOn: Bool {
        guard keepsAudio, machine.isResumable, !heldAudio.isEmpty, let end = utteranceEnd?.reason, end.isPause else {
            return false
        }
        let hold = max(answerHold, answerWait)
        if answerHold > 0, inputEnded || (endDecidedAt.map { heardThrough >= $0 + hold } ?? false) { return false }
        return heldAudio.count < endpointer.settings.maxSpeechMs * endpointer.sampleRate / 1000
    }

    /// A period after the end of the utterance was decided, while that end can be withdrawn:
    /// kept, and if the endpointer hears speech start again (the person goes on after a pause,
    /// and Parley has said nothing yet), the end is withdrawn and the utterance goes on with
    /// every sample since its start (the accurate pass hears it whole); the lanes go on from
    /// where they were at the end (`lanesHeard`), their words before it carried on.
    private mutating func hearAfterTheEnd(_ frame: [Int16], at start: SampleTime, rmsDB: Float, speech: Float?, into period: inout Period) {
        heldAudio += frame
        // A voice under the gate now would be taken for the person going on.
        endpointer.mayHearQuietVoice = false
        if case .started(let at, _)? = endpointer.process(frame, at: start, rmsDB: rmsDB, speech: speech, cue: nil) {
            period.log.append("speech resumed at \(Self.seconds(at)): the end decided before is withdrawn, and the utterance goes on")
            period.actions += handle(.speechResumed)
            if let speaker = machine.state.speaker, case .hearing = machine.state {
                // The lanes go on from where they were at the end: every sample since.
                period.feed = Period.Feed(audio: Array(utteranceAudio[min(lanesHeard, utteranceAudio.count)...]), speaker: speaker, judge: nil)
            }
        }
        period.judgeAbove = judgeAbove
    }

    /// The level above which the next period needs the voice detector (`Period.judgeAbove`):
    /// in silence, the endpointer's threshold; in speech, every level.
    private var judgeAbove: Float { endpointer.phase == .silence ? endpointer.thresholdDB : -.infinity }

    /// At a decided end, the utterance's audio is held from the next period on while the end
    /// may be withdrawn (`mayGoOn`): every period after it goes to the endpointer, and to the
    /// utterance if the person goes on.
    private mutating func holdWhileTheEndMayBeWithdrawn() {
        let byPause = utteranceEnd?.reason.isPause ?? false
        heldAudio = keepsAudio && byPause && machine.isResumable ? utteranceAudio : []
        audioAtEnd = utteranceAudio.count
        endDecidedAt = heldAudio.isEmpty ? nil : machine.now
    }

    /// Whether the lanes' judgement may end the utterance just started (`endCueAllowed`).
    public mutating func allowEndCue(_ allowed: Bool) { endCueAllowed = allowed }

    /// The end of the input: an utterance in progress is processed (the recording ended at
    /// `position`) or, on `stopped`, abandoned.
    public mutating func endInput(at position: SampleTime, stopped: Bool) -> [ConversationMachine.Action] {
        inputEnded = true
        let held = releaseHeldAnswer()
        guard case .hearing = machine.state else { return held }
        if stopped {
            endpointer.reset()
            return handle(.speechDiscarded)
        }
        if case .ended(_, let reason, let pause)? = endpointer.forceEnd(at: position) {
            utteranceEnd = (reason, pause)
            utteranceVoice = max(0, position - pause - voiceOnset)
        }
        return handle(.speechEnded(at: position))
    }

    /// The utterance's audio as the accurate pass hears it, from its pre-roll, without the pause
    /// that ended it (but for `keptPauseMs` of it); the audio kept is forgotten. The voice
    /// begins at `accurateVoiceFrom` in it.
    public mutating func takeUtteranceAudio() -> [Int16] {
        // What the end may still need is held since it was decided (`heldAudio`).
        defer { utteranceAudio = [] }
        return accurateAudio(through: Self.accurateLength(of: utteranceAudio.count, pause: Int(utteranceEnd?.pause ?? 0), sampleRate: endpointer.sampleRate))
    }

    /// The utterance's audio up to `length` samples (`accurateLength`). The same speech heard at a
    /// pause (a speculation) and at the end of the turn gives the same samples, once both pauses
    /// are longer than `keptPauseMs`: the accurate worker then answers the end from what it heard
    /// at the pause.
    public func accurateAudio(through length: Int) -> [Int16] {
        Array(utteranceAudio.prefix(length).dropFirst(accurateFrom))
    }

    /// Once the endpointer finds the people's voice began after another's (`Endpointer.leadIn`),
    /// the accurate pass hears from there: said, and at notice level when long enough to have
    /// been a person's words. Not in an utterance that went on after a withdrawn end (what came
    /// before that end was the people's).
    private mutating func leaveOutLeadIn(into period: inout Period) {
        guard keepsAudio, resumedEnd == nil, leadVoiceFrom == nil, let lead = endpointer.leadIn, lead.cut > utteranceStart else { return }
        accurateFrom = min(utteranceAudio.count, Int(lead.cut - utteranceStart))
        leadVoiceFrom = Int(lead.voice - lead.cut)
        // The pace is the accurate words' (the streaming lanes', which heard that voice too,
        // look a little faster for its words).
        voiceOnset = lead.voice
        // From where the voice began, not the pre-roll.
        let ms = max(0, Int(lead.cut - utteranceStart) - utteranceOnset) * 1000 / captureSampleRate
        let line = "a voice under the one at \(Self.seconds(lead.voice)), before it and a pause (\(Self.tenths(ms)) s of it), "
            + "taken for one across the room and left out of the accurate pass; if it was a person, raise [endpoint] background_below_db (0: every voice is heard)"
        Self.tellVoice(line, ms: ms, into: &period)
    }

    /// How many samples of `count` whose last `pause` are silence the accurate pass hears the
    /// end of: all but the pause, and `keptPauseMs` of it.
    public static func accurateLength(of count: Int, pause: Int, sampleRate: Int) -> Int {
        max(0, count - max(0, pause - keptPauseMs * sampleRate / 1000))
    }

    /// How much of an utterance's voice the detector hears to tell its language when both
    /// languages are decoded by streaming lanes (which are seldom wrong): the language is in the
    /// first seconds, and the detector's work on the rest took a core from the engine whose words
    /// the person waits for (Moonshine).
    public static let openingMs = 2500

    /// The samples of the utterance (from its pre-roll) through the end of its opening, once
    /// they are all heard: the first time, in auto mode with both languages decoded (the lanes
    /// then say who likely spoke, and the detector tells it from the opening alone). Nil
    /// otherwise. Marks the opening told.
    private mutating func openingToTell() -> Int? {
        guard keepsAudio, dualDecoding, !openingTold, case .hearing = machine.state, utteranceLanguages.count > 1 else { return nil }
        let through = accurateFrom + accurateVoiceFrom + Self.openingMs * endpointer.sampleRate / 1000
        guard utteranceAudio.count >= through else { return nil }
        openingTold = true
        return through
    }

    /// How much of the pause that ended an utterance the accurate pass hears (under the
    /// shortest pause a speculation starts at, `likely_end_ms`).
    public static let keptPauseMs = 80

    /// A position on the capture timeline, for the log ("12.34 s").
    public static func seconds(_ samples: SampleTime) -> String {
        let hundredths = samples * 100 / SampleTime(captureSampleRate)
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
    }

    /// How much speech of a voice taken for the background the log tells at its notice level
    /// (less: at debug, with the other discarded sounds).
    public static let noticedUnderThePeopleMs = 1000

    /// Says why sound was discarded (`afterAPause`: it went on after an end that was withdrawn,
    /// and the utterance ends as decided before): in the debug lines, or where the user looks
    /// (`Period.notices`) for a sentence's worth of a voice taken for the background, which may
    /// have been a person's words: how long, how far under the people's, and what to set.
    static func tell(_ reason: EndpointEvent.DiscardReason, at end: SampleTime, afterAPause: Bool, into period: inout Period) {
        let what = afterAPause ? "sound after the pause discarded at \(seconds(end))" : "sound discarded at \(seconds(end))"
        let then = afterAPause ? "; the utterance ends as decided before" : ""
        switch reason {
        case .tooShort:
            period.log.append("\(what): too short to be words\(then)")
        case .noLouderThanTheFloor:
            period.log.append("\(what): no louder than the background noise\(then)")
        case .underThePeople(let below, let speechMs):
            let line = "\(what): a voice \(Int(below.rounded())) dB under the people's (\(tenths(speechMs)) s of speech), "
                + "taken for one across the room and not heard\(then); if it was a person, raise [endpoint] background_below_db "
                + "(0: every voice is heard)"
            tellVoice(line, ms: speechMs, into: &period)
        case .quietVoiceNotAPerson(let speechMs):
            let line = "\(what): a voice under the people's, heard after a quiet room, talked on to max_speech_ms without a pause, "
                + "or said too little to be words (\(tenths(speechMs)) s of speech): taken for one across the room\(then)"
            tellVoice(line, ms: speechMs, into: &period)
        }
    }

    /// A line about `ms` of a voice taken for the background: where the user looks
    /// (`Period.notices`) from `noticedUnderThePeopleMs` (a sentence's worth, which may have been
    /// a person's words), in the debug lines below it.
    private static func tellVoice(_ line: String, ms: Int, into period: inout Period) {
        if ms >= noticedUnderThePeopleMs { period.notices.append(line) } else { period.log.append(line) }
    }

    /// `ms` as seconds to a tenth ("1.2"), cut, not rounded.
    private static func tenths(_ ms: Int) -> String { "\(ms / 100 / 10).\(ms / 100 % 10)" }

    /// `tail` samples of a voice under the people's, after their last words and a pause, were
    /// left out of what the accurate pass hears of the utterance whose voice ended at `voiceEnd`
    /// (`Endpointer.backgroundGapMs`): said, and at notice level when long enough to have been a
    /// person's words.
    static func tellBackgroundTail(_ tail: SampleTime, at voiceEnd: SampleTime, into period: inout Period) {
        guard tail > 0 else { return }
        let ms = Int(tail * 1000 / SampleTime(captureSampleRate))
        let line = "a voice under the people's after their last words at \(seconds(voiceEnd)) and a pause (\(tenths(ms)) s of it) "
            + "taken for one across the room and left out of the accurate pass; if it was a person, raise [endpoint] background_below_db (0: every voice is heard)"
        tellVoice(line, ms: ms, into: &period)
    }

    // MARK: - The lanes' judgements

    /// A lane judged the pause through `through`: kept when the utterance is in `language` and
    /// the judgement is newer than the lane's last. Returns whether it was kept.
    @discardableResult
    public mutating func judged(_ language: String, through: SampleTime, _ end: SentenceEnd?) -> Bool {
        guard utteranceLanguages.contains(language) else { return false }
        var kept = judgements[language, default: []]
        if let known = kept.last, known.through >= through { return false }
        kept.append(Judgement(through: through, end: end))
        judgements[language] = Array(kept.suffix(Self.keptJudgements))
        return true
    }

    /// The latest audio every language of the utterance has judged, with each language's
    /// judgement of it. A lane that is ahead does not speak alone: in auto mode the other
    /// language's words, judged first, could otherwise end an English sentence after "and".
    public var commonJudgement: (through: SampleTime, byLanguage: [(language: String, judgement: Judgement)])? {
        guard let first = utteranceLanguages.first, let candidates = judgements[first] else { return nil }
        for candidate in candidates.reversed() {
            let all = utteranceLanguages.compactMap { language in
                judgements[language]?.last { $0.through == candidate.through }.map { (language: language, judgement: $0) }
            }
            if all.count == utteranceLanguages.count { return (candidate.through, all) }
        }
        return nil
    }

    /// The judgement of the language that explains the audio best, at the latest audio every
    /// language has judged (nil: none, or no words to judge).
    public var bestJudgement: (language: String, end: SentenceEnd, through: SampleTime)? {
        guard let common = commonJudgement else { return nil }
        return common.byLanguage.compactMap { entry in entry.judgement.end.map { (language: entry.language, end: $0, through: common.through) } }
            .max { ($0.end.score ?? -.infinity) < ($1.end.score ?? -.infinity) }
    }

    /// The recognizer's view of the pause for the endpointer.
    public var endCue: EndCue? {
        bestJudgement.map { EndCue(through: $0.through, probability: $0.end.probability) }
    }

    /// Whether the accurate pass a speculation started at this pause has yet to answer, once the
    /// pause is long enough for its words to end the turn (`accurateWordsEnd`). A recording waits
    /// for them there, as a live pause goes on while they are heard; before, it reads on, and a
    /// pass the person went on from is stopped, as live.
    public var isAwaitingAccurateWords: Bool {
        guard case .hearing = machine.state, let pause = endpointer.pause, let speculation,
            pause >= SampleTime(endpointer.settings.likelyEndMs) * SampleTime(endpointer.sampleRate) / 1000
        else { return false }
        return speculation.heardSamples != nil && !speculation.answered
    }

    /// Whether a lane has yet to judge the audio through `awaitedJudgement`.
    public var isAwaitingJudgement: Bool {
        guard let awaited = awaitedJudgement else { return false }
        return utteranceLanguages.contains { (judgements[$0]?.last?.through ?? -1) < awaited }
    }

    /// What a speculation would translate now: the hypothesis of the language that explains the
    /// audio best, at the latest audio every language of the utterance has judged (nil when
    /// nothing was heard). Only while the utterance's end is undecided or being recognized, and
    /// a pause is on, and only where the language model takes the words for a likely end
    /// (`end_probability`), or the pause has run to within `lateSpeculationMs` of the silence
    /// limit (a last word misheard, whose end the language model cannot see): a thinking pause
    /// after "and" costs no translation or synthesis for its first second, and the person who
    /// goes on speaking competes with none for the processor.
    public var speculationCandidate: SpeculationCandidate? {
        var late = false
        switch machine.state {
        case .hearing(_, _):
            guard let pause = endpointer.pause else { return nil }
            let limit = SampleTime(endpointer.settings.silenceMs - Self.lateSpeculationMs) * SampleTime(endpointer.sampleRate) / 1000
            late = pause >= limit
        case .recognizing(_): break
        default: return nil
        }
        guard let sides = utteranceSides else { return nil }
        let judged = bestJudgement.map { (language: $0.language, end: $0.end, through: $0.through, text: $0.end.text.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard let judged, !judged.text.isEmpty else {
            // No words from the lanes: the language has none (Whisper alone hears it), or they
            // heard nothing yet. Near the silence limit the accurate pass hears the audio alone,
            // in the expected speaker's language (`speculationStart`: only where it gives the
            // words), so the end's pass, translation and audio are ready when the limit ends it.
            return late ? SpeculationCandidate(text: "", language: sides.source, target: sides.target) : nil
        }
        guard judged.end.probability >= endpointer.settings.endProbability || late else { return nil }
        // A late judgement of an earlier pause (a lane that lags) speaks for old words.
        if case .hearing = machine.state, judged.through < endpointer.cueFrom { return nil }
        return SpeculationCandidate(text: judged.text, language: judged.language, target: judged.language == sides.source ? sides.target : sides.source)
    }

    /// At a pause of `likelyEndMs` that the language model saw no end in, the words the lanes
    /// heard, for the accurate pass to hear the utterance so far all the same: its punctuated
    /// words can say the sentence ended where the streaming recognizer misheard the last word
    /// (`accurateWordsEnd`). Nil before that pause, outside one, and without lanes' words.
    public var lookCandidate: SpeculationCandidate? {
        guard case .hearing = machine.state, let pause = endpointer.pause, let sides = utteranceSides,
            pause >= SampleTime(endpointer.settings.likelyEndMs) * SampleTime(endpointer.sampleRate) / 1000,
            let judged = bestJudgement, judged.through >= endpointer.cueFrom, endsOnAccurateWords(judged.language)
        else { return nil }
        let text = judged.end.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        return SpeculationCandidate(text: text, language: judged.language, target: judged.language == sides.source ? sides.target : sides.source)
    }

    /// Whether the accurate words heard at this pause end a sentence: a speculation's pass heard
    /// the utterance through it (the person has not gone on: that drops it), its words end one
    /// beyond doubt (`UnfinishedSentence.endsWithoutDoubt`: a stop after a word that seldom ends
    /// one is not enough, as an engine writes one at a thinking pause too), and the
    /// lanes' words do not end on a word no sentence ends on (the accurate engine may leave a
    /// last "a" out: "Had he married?", docs/benchmarks.md, "The accurate words as an end cue").
    public var accurateWordsEnd: Bool {
        guard case .hearing = machine.state, endpointer.pause != nil, let speculation, speculation.heardSamples != nil,
            let words = speculation.words, endsOnAccurateWords(words.language),
            UnfinishedSentence.endsWithoutDoubt(words.text, language: words.language)
        else { return false }
        guard let judged = bestJudgement else { return true }
        return UnfinishedSentence.ending(of: judged.end.text, language: judged.language) != .danglingWord
    }

    /// Whether a pause in `language` may end on the accurate words: not where its answers wait
    /// `answerAfterMs` (Spanish), whose readers pause to think for a second or more after words
    /// Whisper writes a stop after ("…de la que forma parte." in fleurs-es-009): there the early
    /// end only answered them sooner, over the rest of the sentence.
    func endsOnAccurateWords(_ language: String) -> Bool {
        (endpointer.settings.answerAfterMs[language] ?? 0) == 0
    }

    /// The speculation to start now, if any, on `speculationCandidate`: the accurate pass on the
    /// audio so far where it gives the words (`accurately`), else the candidate's translation
    /// where its target can be spoken. Nothing when the running speculation already hears the
    /// same samples (`heardSamples`) or serves the same words (`serves`). Where the accurate pass
    /// gives the words, a pause the language model saw no end in is heard too (`lookCandidate`).
    public func speculationStart(
        accurately: (TurnLanguages) -> Bool, canSpeak: (String) -> Bool, heardSamples: Int?,
        serves: (SpeculationCandidate) -> Bool
    ) -> SpeculationStart? {
        let hearsAccurately = utteranceSides.map(accurately) ?? false
        guard let candidate = speculationCandidate ?? (hearsAccurately ? lookCandidate : nil) else { return nil }
        if let sides = utteranceSides, machine.state.speaker != nil, accurately(sides) {
            // Not before the pause is as long as the audio the pass keeps of it: the same speech
            // then gives the same samples at every later look, and at the end of the turn.
            let pause = Int(endpointer.pause ?? 0)
            // Once the end is decided, the end's own pass follows at once.
            guard case .hearing = machine.state, pause >= Self.keptPauseMs * endpointer.sampleRate / 1000 else { return nil }
            let length = Self.accurateLength(of: utteranceAudio.count, pause: pause, sampleRate: endpointer.sampleRate)
            if heardSamples == length { return nil }
            return .accuratePass(candidate, samples: length, pause: pause)
        }
        guard !candidate.text.isEmpty, canSpeak(candidate.target), !serves(candidate) else { return nil }
        return .translate(candidate)
    }
}

// MARK: - Who spoke

extension TurnLogic {
    /// Frames (10 ms) an utterance needs before its language is trusted to say who spoke.
    public static let minimumDecisionFrames = 50
    /// How much better (per frame) the winning language must score.
    public static let decisionMargin = 0.0

    /// Who spoke, from the streaming lanes' results of an utterance decoded in both `sides`'
    /// languages (auto mode): the language whose words explain the audio best
    /// (`LanguageDecision`), else, when that cannot be told (too short, too close), the
    /// expected speaker's (`turn_order`); with the scores and the losing hypothesis. Nil with
    /// one language's result: nothing to decide.
    public static func decideLanguage(
        _ results: [(language: String, recognition: Recognition)], sides: TurnLanguages
    ) -> (language: String, detection: SpeakerDetection)? {
        guard results.count > 1 else { return nil }
        let decided = LanguageDecision.decide(results, minimumFrames: minimumDecisionFrames, margin: decisionMargin)
        let language = decided == sides.target ? sides.target : sides.source
        let rival = language == sides.source ? sides.target : sides.source
        let detection = SpeakerDetection(
            decidedBy: decided == nil ? .turnOrder : .audio,
            scores: Dictionary(results.compactMap { result in result.recognition.score.map { (result.language, $0) } }) { first, _ in first },
            rivalLanguage: rival, rivalText: results.first { $0.language == rival }?.recognition.text)
        return (language, detection)
    }
}
