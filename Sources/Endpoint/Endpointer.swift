/// Endpointing on the capture timeline: a trained voice-activity detector and the level say where
/// speech starts and pauses, the words say whether a pause ends the turn.
///
/// A period is voiced when it is `marginDB` above the background level (the noise floor) and,
/// when a voice-activity detector runs (`speech` in `process`), that detector says it is a voice:
/// the level keeps a background of voices (babble, a TV across the room) out of the turn, the
/// detector keeps clatter, water and fans out.
///
/// The floor, with a detector, is the quietest period of the last `floorRiseMs` plus
/// `floorBiasDB` (minimum statistics), tracked during speech too: a background that comes on is
/// learned in that time, and speech that turns out to be no louder than it is discarded when it
/// ends. With the level alone, nothing tells a voice from a steady sound, so the floor follows
/// the background only outside speech (quieter at once, louder slowly), and a background loud
/// from the start of an utterance is learned when `maxSpeechMs` cuts it.
///
/// The endpointer keeps a pre-roll so the first syllable is not clipped. A pause ends the
/// utterance early (`likelyEndMs`) when the recognizer's language model says the words so far
/// are likely a whole sentence (an `EndCue`); otherwise only `silenceMs` of silence does, so a
/// thinking pause after "and" or "to" does not cut the sentence in two. Everything is counted in
/// samples, so a recording gives the same endpoints as a live microphone.

public import ParleyCore

#if canImport(Glibc)
    import Glibc
#endif

/// Tunables for endpointing. Every one is configurable under `[endpoint]`.
public struct EndpointSettings: Sendable, Equatable, Codable {
    /// Silence after speech that ends the utterance whatever was said: the upper bound.
    public var silenceMs: Int = 1_500
    /// Silence that ends the utterance when the words so far are likely a whole sentence
    /// (0: only `silenceMs` ends it). 300 ms, not less: at 200 ms, 4 of 31 read English
    /// sentences were cut at a comma ("Anything is possible in football, and ...") and their
    /// rest lost under the reply, for no quicker reply (docs/benchmarks.md, "Mouth-to-ear over
    /// every recording").
    public var likelyEndMs: Int = 300
    /// How likely (by the language model) the sentence must be to end after the last words for
    /// `likelyEndMs` to apply.
    public var endProbability: Double = 0.05
    /// Audio kept from before the onset.
    public var prerollMs: Int = 500
    /// Speech shorter than this (coughs, clicks) is discarded.
    public var minSpeechMs: Int = 250
    /// An utterance is cut here and processed.
    public var maxSpeechMs: Int = 20_000
    /// How long the level must stay above the threshold to count as an onset.
    public var onsetMs: Int = 100
    /// How far above the noise floor speech must be.
    public var marginDB: Float = 12
    /// How far below the voices of the people using Parley another voice may be and still be
    /// heard (0: any voice is). A voice further below, a TV or a radio across the room, neither
    /// starts an utterance nor holds its silence limit off (`Endpointer.voiceLevelDB`); the
    /// short pause still needs quiet, so a person's soft words under it end nothing.
    public var backgroundBelowDB: Float = 12
    /// Per language, how long a pause the answer to an end its language model decided
    /// (`likelyEndMs`) waits for at least, live as from a recording; the person who goes on
    /// within it goes on with the same utterance (`TurnLogic.answerWait`). A language not listed
    /// is answered as soon as its words and translation are ready. Spanish's streaming model
    /// ends read sentences at commas and thinking pauses: with Whisper hearing them in time
    /// (one thread, `TranscriberConfig.whisperThreads`), 2 of its 10 recordings were answered
    /// over the person and 2 more cut into two or three turns, which Whisper's slowness had
    /// hidden. Never longer than `silenceMs`, which would end the turn anyway. English's keeps
    /// them whole at 300 ms (docs/benchmarks.md, "Whisper on one thread of two cores").
    public var answerAfterMs: [String: Int] = ["es": 800]
    /// Syllables per second of voice below which the answer to an end the language model
    /// decided waits for `silenceMs`, as for words that end mid-sentence: a person speaking
    /// this slowly pauses between words (`SlowSpeech`, in ParleyConversation). 0: never.
    public var slowSpeechBelow: Double = 2.5
    /// The lowest the noise floor may go; keeps digital silence from making noise look like speech.
    public var floorMinDB: Float = -66
    /// How long a louder background must last to become the floor: with a voice-activity
    /// detector, the floor is the quietest period of this window (plus `Endpointer.floorBiasDB`);
    /// with the level alone, the time constant with which it rises outside speech.
    public var floorRiseMs: Int = 3_000
    /// Which voice-activity detector runs beside the level.
    public var voiceDetector: VoiceDetectorChoice = .silero
    /// The voice-activity detector's speech probability from which a period starts speech.
    public var speechThreshold: Float = 0.5
    /// The probability below which a period in speech counts as a pause (lower than
    /// `speechThreshold`: a soft syllable does not open a pause).
    public var speechEndThreshold: Float = 0.35

    public init() {}
}

/// `[endpoint] voice_detector`.
public enum VoiceDetectorChoice: String, Sendable, Equatable, Codable, CaseIterable {
    /// Silero VAD (it comes with Moonshine's library).
    case silero
    /// None: the level alone finds speech.
    case level
}

/// What the endpointer decided about one period of audio.
public enum EndpointEvent: Sendable, Equatable {
    /// Speech began. `audio` is the pre-roll and the onset, starting at sample `start`; it
    /// includes the period just processed.
    case started(start: SampleTime, audio: [Int16])
    /// Speech ended at `end` (the end of the period that decided it), after `pause` samples of
    /// silence, or of a voice not the people's after their last words and a pause
    /// (`Endpointer.lastBackgroundTail`).
    case ended(end: SampleTime, reason: EndReason, pause: SampleTime)
    /// What looked like speech was not an utterance of the people's, for `reason`.
    case discarded(end: SampleTime, reason: DiscardReason)

    /// Why what looked like speech was discarded.
    public enum DiscardReason: Sendable, Equatable {
        /// Less voiced audio than `minSpeechMs` (a cough, a click).
        case tooShort
        /// Judged again against the floor as it is now, no louder than it.
        case noLouderThanTheFloor
        /// A voice `belowDB` under the people's (more than `backgroundBelowDB`): a TV or radio
        /// across the room, or a person much quieter than the others; `speechMs` of it voiced.
        case underThePeople(belowDB: Float, speechMs: Int)
        /// A voice under the people's heard after a quiet room (`Endpointer.hearsQuietVoice`) that
        /// talked on to `maxSpeechMs` without a pause of `silenceMs`, or said less than
        /// `Endpointer.quietVoiceMinMs`: a TV that came on, or a clatter; `speechMs` of it voiced.
        case quietVoiceNotAPerson(speechMs: Int)
    }

    public enum EndReason: String, Sendable, Equatable {
        /// The language model judged the words a whole sentence, after a short pause.
        case languageModel = "language_model"
        /// The silence limit (`silenceMs`).
        case silence
        /// The accurate engine's words, heard at the pause, end a sentence, after a short pause
        /// the language model saw no end in (a last word the streaming recognizer misheard).
        case accurateWords = "accurate_words"
        case maxLength = "max_length", forced

        /// Whether a pause ended the utterance: the person may still go on.
        public var isPause: Bool { self == .languageModel || self == .silence || self == .accurateWords }
    }
}

/// The recognizer's view of a pause: how likely the words heard up to sample `through` end the
/// sentence.
public struct EndCue: Sendable, Equatable {
    public var through: SampleTime
    public var probability: Double

    public init(through: SampleTime, probability: Double) {
        self.through = through
        self.probability = probability
    }
}

public struct Endpointer: Sendable {
    public enum Phase: Sendable, Equatable { case silence, onset, speech }

    /// May change at any time (`parley set silence_ms`); it applies from the next period.
    public var settings: EndpointSettings
    public let sampleRate: Int
    public private(set) var phase: Phase = .silence
    /// The current estimate of the background level, in dBFS.
    public private(set) var noiseFloorDB: Float?

    private var history: [Int16] = []  // pre-roll plus any pending onset
    private var historyEnd: SampleTime = 0
    /// The end of the last period processed in speech.
    private var processedEnd: SampleTime = 0
    private var onsetVoiced: SampleTime = 0
    /// Where the voice begins in the last `started` audio (its first samples are the pre-roll):
    /// before the onset that started speech, where the voice's first, softer sounds are
    /// (`voiceStart`).
    public private(set) var lastVoiceStart = 0
    private var speechStart: SampleTime = 0
    private var lastVoicedEnd: SampleTime = 0
    /// The end of the last period voiced and not under `backgroundGateDB`.
    private var lastNearEnd: SampleTime = 0
    /// Where the voice stopped for the first pause of `backgroundGapMs` since the people's last
    /// voice (nil: no such pause yet). A voice after it that never reaches the gate, and is well
    /// under the utterance's own, is another's (`backgroundGapMs`).
    private var voiceEndBeforeGap: SampleTime?
    /// The utterance's own level: its loudest few syllables (`smoothingPeriods`) among the
    /// people's voice, in dBFS.
    private var ownLevelDB: Float = -.infinity
    /// The end of the last period voiced within `backgroundBelowDB` of `ownLevelDB`, or the
    /// people's: the utterance's own voice.
    private var lastOwnEnd: SampleTime = 0
    private var voicedSamples: SampleTime = 0
    /// The end of the last period the voice-activity detector heard a voice in.
    private var lastVoiceHeardEnd: SampleTime = 0
    /// The end of the last period voiced over `marginDB` (not by `sureSpeech` alone).
    private var lastLoudEnd: SampleTime = 0
    /// The levels of the current utterance's periods and their lengths, to judge it again against
    /// the floor when it ends.
    private var utteranceLevels: [(rmsDB: Float, samples: Int32, sure: Bool)] = []
    /// The floor's window: the levels of the periods of the last `floorRiseMs` (from
    /// `recentStart` on) and how many samples they hold.
    private var recent: [(rmsDB: Float, samples: Int32)] = []
    /// With the level alone: the quietest period of the utterance so far.
    private var quietestInSpeechDB: Float = 0
    /// The power of the last periods (`smoothingPeriods`), oldest first: the level a voice is
    /// judged by against `voiceLevelDB`, a few syllables', not a 20 ms period's.
    private var recentPower: [Double] = []
    /// Samples since an utterance last set `voiceLevelDB`.
    private var sinceVoiceLevel: SampleTime = 0
    private var recentStart = 0
    private var recentSamples = 0

    public init(settings: EndpointSettings = EndpointSettings(), sampleRate: Int) {
        self.settings = settings
        self.sampleRate = sampleRate
    }

    /// The level speech must exceed right now.
    public var thresholdDB: Float {
        (noiseFloorDB ?? settings.floorMinDB) + settings.marginDB
    }

    public var isInSpeech: Bool { phase == .speech }

    /// Once speech has started, a period the voice-activity detector is this sure is a voice
    /// needs only `sureMarginDB` over the floor, not `marginDB`, up to `sureHoldMs` after the
    /// people's last period over `marginDB`, and not under the background gate: in a room as loud as a running tap 10 dB under the voice, a
    /// person's whole sentence ("Will we ever forget it?", the detector at 0.98-1.0 for 1.2 s)
    /// stood 8-15 dB over the floor and only 200 ms of it 12 dB: it was discarded as too short to
    /// be words (docs/benchmarks.md, "A voice the detector is sure of, in a loud room"). Speech
    /// still starts only `marginDB` over the floor, and babble, voices to the detector too,
    /// holds a turn open no longer than `sureHoldMs` after the person's last loud syllable
    /// (without that limit, babble 10 dB under the sentences ran turns on for 20 s).
    public static let sureSpeech: Float = 0.9
    public static let sureMarginDB: Float = 6
    public static let sureHoldMs = 700
    /// A room is loud when the utterance's own level is less than this over `sureThresholdDB`
    /// (with the shipped margins, a voice within 24 dB of the floor): in a quiet one the margin
    /// is no obstacle, and a voice's fading last sounds, which the detector still hears for a
    /// few tens of milliseconds, would only delay the end (the quiet scenes waited 0.67 s for
    /// it, not 0.30 s).
    public static let sureRoomDB: Float = 18

    /// The level a period the detector is sure of must exceed in speech (`sureSpeech`).
    public var sureThresholdDB: Float {
        (noiseFloorDB ?? settings.floorMinDB) + min(settings.marginDB, Self.sureMarginDB)
    }

    /// The level of the people using Parley, in dBFS: how loud the utterances that ended were
    /// (the 90th percentile of their voiced periods: the loudest voice in it, when a TV talked
    /// in the same utterance), the loudest at once, a quieter one a
    /// quarter of the way; nil before the first. `backgroundBelowDB` under it, a voice is the
    /// background's. After `voiceLevelHoldMs` without an utterance it falls
    /// `voiceLevelFallDBPerSecond`, so a room that changed (people further away, the only
    /// voice a quieter one) is heard again.
    public private(set) var voiceLevelDB: Float?

    /// How long `voiceLevelDB` holds without an utterance before it falls.
    public static let voiceLevelHoldMs = 30_000
    /// How fast it falls after that.
    public static let voiceLevelFallDBPerSecond: Float = 0.5
    /// How many times `silenceMs` a voice under the gate holds a turn open after the people's
    /// last voice: a person whose voice dropped 12 dB (the second of two FLEURS readers joined
    /// with a pause, trailing off) spoke 1.5 s under the gate and lost it at 1 x. After a pause
    /// (`backgroundGapMs`), a voice also well under the utterance's own holds it 1 x.
    public static let backgroundHoldFactor = 2

    /// A pause after the people's last voice from which a voice under the gate that follows is
    /// left out of the utterance (`Endpointer.lastBackgroundTail`), up to the last few syllables
    /// (`smoothingPeriods`) within `backgroundBelowDB` of the utterance's own voice: a TV's next
    /// words, after a person finished, came within `backgroundHoldFactor` silence limits and ran
    /// into their turn. A person trailing off under the gate goes on without such a pause, or
    /// within their own level, and is kept (a FLEURS reader 8 dB quieter than the one before
    /// her, at her thinking pause).
    public static let backgroundGapMs = 100

    /// How much of the utterance that ended last was left out as a voice under the gate after the
    /// people's last voice and a pause (`backgroundGapMs`): the end's `pause` counts it.
    public private(set) var lastBackgroundTail: SampleTime = 0

    /// Where, in the utterance being heard, the voice of the people began after another's, before
    /// their level is known (no gate yet: the first utterance, or one after the level fell): a
    /// voice `backgroundBelowDB` louder than any before it in the utterance, for `leadInLouderMs`,
    /// after a pause of `backgroundGapMs` and `leadInVoiceMs` of voice. What came before it (a TV talking when nobody had spoken yet, that held
    /// the silence off until a person spoke) is another's: the accurate pass hears from `cut`, a
    /// moment of that pause (`leadInRoomMs`) before `voice`. Nil: none (the whole utterance is the
    /// people's). Set once per utterance, while it is heard; forgotten when the next one starts.
    public private(set) var leadIn: (cut: SampleTime, voice: SampleTime)?

    /// How much of the room the endpointer must have heard without a voice (not the time Parley
    /// spoke, nor the people's own voice, under which a TV is not heard) since the last voice
    /// under the gate taken for the background's, for a voice under the gate to be taken for a
    /// person's: one much quieter than the people heard so far (further away, a soft voice). A
    /// TV across the room talks on, with short pauses; a person quieter than the others spoke
    /// after a quiet room, and lost every word to the gate (speechocean762 learners 12-20 dB
    /// under the reader before them, docs/benchmarks.md).
    public static let quietRoomMs = 3_000
    /// The least voice such a quieter person's utterance holds to be kept: less is discarded as
    /// under the people's (a clatter the detector took for a voice).
    public static let quietVoiceMinMs = 500

    /// Whether the voice being heard is under the gate and came after `quietRoomMs` of the room
    /// heard without a voice since the last one taken for the background's: the gate is lifted
    /// for it, as before any level was known, until a voice reaches the gate (the people's: the utterance then goes on as theirs, and
    /// what the quiet voice said before a pause is a lead-in). Such an utterance ends on
    /// `silenceMs` alone, not on the language model's cue (a TV's pauses are short): it is kept
    /// when it holds `quietVoiceMinMs` of voice and did not run to `maxSpeechMs` (a TV that came
    /// on in a quiet room, talking on).
    public private(set) var hearsQuietVoice = false
    /// Whether the gate may be lifted for a quiet voice now: not while the end of an utterance
    /// may still be withdrawn (`TurnLogic.mayGoOn`), where a voice starting under the gate would
    /// be taken for the person going on (a TV that came on just then ran into their turn).
    public var mayHearQuietVoice = true
    /// Whether the utterance being heard started as such a quiet voice.
    private var startedQuiet = false
    /// Whether the last utterance that ended was still such a quiet voice at its end (kept or
    /// discarded): a quieter person's, heard with the gate lifted.
    public private(set) var lastEndedQuiet = false
    /// Samples heard without a voice since the last voice taken for the background's; back to 0
    /// at: in silence, one under the gate (its 300 ms level and its own) not heard as a quiet
    /// voice; in speech, one well under the utterance's own voice, in its pauses or under it; one left
    /// out of an utterance's end (`lastBackgroundTail`); an utterance held to `maxSpeechMs`; a
    /// lead-in; and an utterance that was or began as a quiet voice (one quiet utterance at a
    /// time).
    private var quietRoomSamples: SampleTime = 0

    /// How much of the pause before the people's voice the accurate pass hears after a lead-in.
    public static let leadInRoomMs = 300
    /// Where the people's voice begins after a lead-in that ran into it without a pause: the first
    /// period this much louder than any voice before it (the other voice's loudest few syllables),
    /// less `leadInOnsetMs` for its softer first sounds.
    static let leadInOnsetDB: Float = 6
    static let leadInOnsetMs = 100
    /// How much voice a lead-in holds at least (a person's own soft first word, "No, …", is not
    /// one), and how long the louder voice after it must have lasted (a cough or a laugh late in a
    /// person's first utterance is not the people's voice beginning).
    static let leadInVoiceMs = 1_000
    static let leadInLouderMs = 500

    /// Where the voiced periods stopped last (nil: voiced now), and the last pause of
    /// `backgroundGapMs` in the utterance with the loudest voice before it.
    private var unvoicedSince: SampleTime?
    private var lastGap: (start: SampleTime, end: SampleTime, loudestBeforeDB: Float, voicedBefore: SampleTime)?
    /// The first period since that pause louder than any voice before it by `leadInOnsetDB`, and
    /// how long the voice since has been `backgroundBelowDB` louder.
    private var firstLouderSinceGap: SampleTime?
    private var louderSinceGap: SampleTime = 0

    /// How many 20 ms periods a level is judged over against `voiceLevelDB`: 300 ms, a few
    /// syllables. A TV 15 dB under the sentences reaches the gate in 2.0 % of its 300 ms
    /// stretches and leaves 84 % of 1.5 s windows free of it, against 4.4 % and 47 % judged
    /// over 100 ms; a person's own voiced periods fall under it 3.8 % of the time, against
    /// 9.9 % (docs/benchmarks.md, "A voice in the background").
    public static let smoothingPeriods = 15

    /// The level a period's voice must reach to be one of the people's (nil: any).
    public var backgroundGateDB: Float? {
        guard settings.backgroundBelowDB > 0, let voice = voiceLevelDB else { return nil }
        return voice - settings.backgroundBelowDB
    }

    /// How long a pause must have lasted before the recognizer's view of it counts: long enough
    /// for the decoder to have closed the last word.
    public static let cueDelayMs = 100

    /// How long after `likelyEndMs` a judgement may still end the pause early. Later, words the
    /// recognizer "hears" in the silence (noise, a breath) could make any pause look like an
    /// end: the words as they stood when the pause began count, not what the silence became.
    public static let cueWindowMs = 200

    /// How long the voice-activity detector must have heard no voice for a short pause to end the
    /// sentence (it lags the level by a few tens of milliseconds when a voice stops).
    public static let voiceQuietMs = 100

    /// How far the voiced periods of the utterance in progress stand above the floor, in dB (their
    /// mean power over the floor): about the room's signal-to-noise ratio. nil before speech.
    public var speechAboveFloorDB: Float? {
        let threshold = thresholdDB
        var power = 0.0
        var samples = 0.0
        for level in utteranceLevels where level.rmsDB > threshold {
            power += pow(10, Double(level.rmsDB) / 10) * Double(level.samples)
            samples += Double(level.samples)
        }
        guard samples > 0, let floor = noiseFloorDB else { return nil }
        return Decibels.of(power: power / samples) - floor
    }

    /// `speechAboveFloorDB` of the utterance that ended last, as it was when it ended.
    public private(set) var lastSpeechAboveFloorDB: Float?

    /// The silence so far in the utterance (nil outside speech, or while voiced).
    public var pause: SampleTime? {
        guard phase == .speech, processedEnd > lastVoicedEnd else { return nil }
        return processedEnd - lastVoicedEnd
    }

    /// Whether the recognizer should judge the words so far: a pause is on that an `EndCue`
    /// could end.
    public var wantsCue: Bool {
        guard settings.likelyEndMs > 0, !hearsQuietVoice, let pause else { return false }
        return pause >= count(ms: Self.cueDelayMs) && pause < count(ms: settings.likelyEndMs + Self.cueWindowMs)
    }

    /// The position from which an `EndCue` speaks for the current pause.
    public var cueFrom: SampleTime { lastVoicedEnd + count(ms: Self.cueDelayMs) }

    private func count(ms: Int) -> SampleTime { SampleTime(ms) * SampleTime(sampleRate) / 1000 }

    /// How far above the floor a voice's first sounds may be, under `marginDB`: a soft first word
    /// ("the", "what") before the louder one that started speech.
    static let softMarginDB: Float = 6
    /// The longest dip under `softMarginDB` within those first sounds (between two soft words).
    static let softGapMs = 60

    /// Where the voice begins in `audio`, whose onset (the periods that started speech) is at
    /// `onset`: back from it, 10 ms at a time, while the level stays `softMarginDB` over the
    /// floor (dips of up to `softGapMs` included). The accurate engines hear from a little before
    /// it, not the whole pre-roll (`UtteranceTranscriber.roomBeforeVoiceMs`).
    func voiceStart(in audio: [Int16], onset: Int) -> Int {
        let step = Int(count(ms: 10))
        let floor = noiseFloorDB ?? settings.floorMinDB
        var start = max(0, min(onset, audio.count))
        var index = start
        var gap = 0
        while index >= step, gap < Int(count(ms: Self.softGapMs)) {
            index -= step
            if Decibels.level(of: audio[index..<index + step]) >= floor + Self.softMarginDB {
                start = index
                gap = 0
            } else {
                gap += step
            }
        }
        return start
    }

    /// Processes one period that starts at `start` on the capture timeline and has RMS level
    /// `rmsDB`. `speech` is the voice-activity detector's probability that the period is speech
    /// (nil: no detector runs, the level alone decides). `cue` is the recognizer's latest
    /// judgement of the words so far; it counts when it saw at least `cueDelayMs` of the current
    /// pause. `sentenceHeard`: the accurate engine heard the utterance through this pause and its
    /// words end a sentence (`TurnLogic.accurateWordsEnd`): the pause ends it at `likelyEndMs`,
    /// as a likely end does.
    public mutating func process(
        _ frame: [Int16], at start: SampleTime, rmsDB: Float, speech: Float? = nil, cue: EndCue? = nil, sentenceHeard: Bool = false
    ) -> EndpointEvent? {
        let end = start + SampleTime(frame.count)
        let nearDB = smoothed(rmsDB, samples: frame.count)
        guard noiseFloorDB != nil else {
            // The first period is taken as the background: a floor must exist before speech can.
            remember(frame, end: end)
            noiseFloorDB = max(rmsDB, settings.floorMinDB)
            if speech != nil { trackFloor(rmsDB, samples: frame.count) }
            return nil
        }
        var voiced = rmsDB > thresholdDB
        var sure = false
        // Under the gate for voices in the background (a TV across the room): the people's level.
        let underGate = backgroundGateDB.map { nearDB < $0 } ?? false
        // Over it, or a quieter person's voice the gate is lifted for.
        var overGate = !underGate || hearsQuietVoice
        if let speech {
            voiced = voiced && speech >= (phase == .speech ? settings.speechEndThreshold : settings.speechThreshold)
            // Once speech has started in a loud room, a voice the detector is sure of needs less
            // level, for a while after the people's last period over the margin, and not under
            // the gate (a TV's soft syllables do not fill its pauses).
            if phase == .speech, !voiced, speech >= Self.sureSpeech, rmsDB > sureThresholdDB, ownLevelDB - sureThresholdDB < Self.sureRoomDB,
                end - lastLoudEnd <= count(ms: Self.sureHoldMs), overGate
            {
                voiced = true
                sure = true
            }
        }
        if let speech {
            if speech >= settings.speechEndThreshold { lastVoiceHeardEnd = end }
            trackFloor(rmsDB, samples: frame.count)
        }
        // The room heard without a voice: the people's own voice is no evidence (a TV under it is
        // not heard).
        if !voiced { quietRoomSamples += SampleTime(frame.count) }
        if phase != .speech {
            // A voice under the gate, this period too (the 300 ms level lags behind the people's
            // onset), after a quiet room is a quieter person's; any other is the background's, and
            // the room was not quiet.
            let quietVoice = voiced && underGate && backgroundGateDB.map { rmsDB < $0 } ?? false
            hearsQuietVoice = quietVoice && mayHearQuietVoice && quietRoomSamples >= count(ms: Self.quietRoomMs)
            if quietVoice, !hearsQuietVoice { quietRoomSamples = 0 }
            overGate = !underGate || hearsQuietVoice
        } else if voiced, !underGate {
            // The people's voice: the gate holds again.
            hearsQuietVoice = false
        }
        // A voice well under the people's (a TV across the room) is not theirs: it does not
        // start speech, and does not hold the silence limit off.
        let near = voiced && overGate
        if phase != .silence { utteranceLevels.append((rmsDB, Int32(frame.count), sure)) }
        switch phase {
        case .silence, .onset:
            remember(frame, end: end)
            guard near else {
                phase = .silence
                onsetVoiced = 0
                utteranceLevels.removeAll(keepingCapacity: true)
                if speech == nil { adaptFloor(to: rmsDB, frameSamples: frame.count) }
                return nil
            }
            if phase == .silence { utteranceLevels.append((rmsDB, Int32(frame.count), sure)) }
            if phase == .silence {
                phase = .onset
                onsetVoiced = 0
            }
            onsetVoiced += SampleTime(frame.count)
            guard onsetVoiced >= count(ms: settings.onsetMs) else { return nil }
            phase = .speech
            let wanted = Int(count(ms: settings.prerollMs) + onsetVoiced)
            if history.count > wanted { history.removeFirst(history.count - wanted) }
            speechStart = historyEnd - SampleTime(history.count)
            lastVoicedEnd = end
            lastLoudEnd = end
            lastNearEnd = end
            lastOwnEnd = end
            ownLevelDB = nearDB
            voiceEndBeforeGap = nil
            leadIn = nil
            startedQuiet = hearsQuietVoice
            unvoicedSince = nil
            lastGap = nil
            firstLouderSinceGap = nil
            louderSinceGap = 0
            processedEnd = end
            voicedSamples = onsetVoiced
            quietestInSpeechDB = rmsDB
            let audio = history
            lastVoiceStart = voiceStart(in: audio, onset: audio.count - Int(onsetVoiced))
            history.removeAll(keepingCapacity: true)
            return .started(start: speechStart, audio: audio)
        case .speech:
            quietestInSpeechDB = min(quietestInSpeechDB, rmsDB)
            processedEnd = end
            if voiced {
                lastVoicedEnd = end
                if !sure, near { lastLoudEnd = end }
                voicedSamples += SampleTime(frame.count)
            }
            // Before this period counts in the utterance's own level.
            noteLeadIn(voiced: voiced, rmsDB: rmsDB, nearDB: nearDB, start: start, samples: frame.count)
            if near {
                lastNearEnd = end
                ownLevelDB = max(ownLevelDB, nearDB)
                voiceEndBeforeGap = nil
            } else if !voiced, voiceEndBeforeGap == nil, end - lastVoicedEnd >= count(ms: Self.backgroundGapMs) {
                voiceEndBeforeGap = lastVoicedEnd
            }
            if near || (voiced && nearDB >= ownLevelDB - settings.backgroundBelowDB) { lastOwnEnd = end }
            // A voice well under the utterance's own (a TV heard in the people's pauses, under the
            // gate, or before any level was known): the room is not quiet.
            if voiced, nearDB < ownLevelDB - settings.backgroundBelowDB { quietRoomSamples = 0 }
            if end - speechStart >= count(ms: settings.maxSpeechMs) {
                // With the level alone: speech has pauses, a background that got louder does
                // not. If even the quietest period was above the floor, that is the background.
                if speech == nil { noiseFloorDB = max(noiseFloorDB ?? settings.floorMinDB, quietestInSpeechDB) }
                return finish(at: end, reason: .maxLength, judgedAgain: speech != nil)
            }
            // A voice under the gate (a TV talking on) keeps the turn open at most twice the
            // silence limit after the people's last voice: not for ever, and not at once, as a
            // person whose voice dropped (turned away, trailing off) is still speaking. (The short
            // pause below needs quiet: their soft words must not end a sentence after 300 ms.)
            if end - lastNearEnd >= count(ms: Self.backgroundHoldFactor * settings.silenceMs) {
                return finish(at: end, reason: .silence, judgedAgain: speech != nil)
            }
            // After a pause, a voice under the gate and well under the utterance's own (a TV
            // talking on) holds it no longer than silence would: the person trailing off is
            // within their own level.
            // Counted from the pause at the earliest: a person trailing off under their own level
            // without a break has the whole silence limit after it.
            if let gap = voiceEndBeforeGap, end - max(lastOwnEnd, gap) >= count(ms: settings.silenceMs) {
                return finish(at: end, reason: .silence, judgedAgain: speech != nil)
            }
            guard !voiced else { return nil }
            let pause = end - lastVoicedEnd
            if pause >= count(ms: settings.silenceMs) {
                return finish(at: end, reason: .silence, judgedAgain: speech != nil)
            }
            // The short pause needs the detector's word too, when one runs: a dip in the level
            // that it still hears as a voice, or stopped hearing only just now, is a breath
            // inside the sentence, not its end.
            if settings.likelyEndMs > 0, !hearsQuietVoice, pause >= count(ms: settings.likelyEndMs), pause < count(ms: settings.likelyEndMs + Self.cueWindowMs),
                let cue, cue.through >= cueFrom, cue.probability >= settings.endProbability,
                speech == nil || end - lastVoiceHeardEnd >= count(ms: Self.voiceQuietMs)
            {
                return finish(at: end, reason: .languageModel, judgedAgain: speech != nil)
            }
            // The accurate words end a sentence: no window (their audio stops at the pause, so
            // what the silence becomes cannot change them), but the same short pause, and the
            // detector's word.
            if sentenceHeard, settings.likelyEndMs > 0, !hearsQuietVoice, pause >= count(ms: settings.likelyEndMs),
                speech == nil || end - lastVoiceHeardEnd >= count(ms: Self.voiceQuietMs)
            {
                return finish(at: end, reason: .accurateWords, judgedAgain: speech != nil)
            }
            return nil
        }
    }

    /// Follows the utterance's pauses, and finds where the people's voice began after another's
    /// (`leadIn`) while no gate tells the two apart. Without a gate every voice is near, so
    /// `ownLevelDB` is the loudest voice so far (this period not yet in it).
    private mutating func noteLeadIn(voiced: Bool, rmsDB: Float, nearDB: Float, start: SampleTime, samples: Int) {
        guard voiced else {
            if unvoicedSince == nil { unvoicedSince = start }
            return
        }
        if let since = unvoicedSince, start - since >= count(ms: Self.backgroundGapMs) {
            // The voice before it: all of the utterance's but this period's.
            lastGap = (since, start, ownLevelDB, voicedSamples - SampleTime(samples))
            firstLouderSinceGap = nil
            louderSinceGap = 0
        }
        unvoicedSince = nil
        guard leadIn == nil, backgroundGateDB == nil || startedQuiet, settings.backgroundBelowDB > 0, let gap = lastGap,
            gap.voicedBefore >= count(ms: Self.leadInVoiceMs)
        else { return }
        if firstLouderSinceGap == nil, rmsDB >= gap.loudestBeforeDB + Self.leadInOnsetDB { firstLouderSinceGap = start }
        if nearDB >= gap.loudestBeforeDB + settings.backgroundBelowDB { louderSinceGap += SampleTime(samples) }
        if louderSinceGap >= count(ms: Self.leadInLouderMs) {
            // From the pause, with a moment of it; or, when the other voice ran on into the
            // people's, from a moment before the first period louder than it.
            let onset = (firstLouderSinceGap ?? gap.end) - count(ms: Self.leadInOnsetMs)
            leadIn = onset > gap.end ? (onset, onset) : (max(gap.start, gap.end - count(ms: Self.leadInRoomMs)), gap.end)
            // What came before it was another's voice: the room was not quiet.
            quietRoomSamples = 0
        }
    }

    /// Ends the utterance now (a client said `stop`, or the conversation moved on).
    public mutating func forceEnd(at end: SampleTime) -> EndpointEvent? {
        guard phase == .speech else {
            reset()
            return nil
        }
        return finish(at: end, reason: .forced)
    }

    /// Forgets any speech in progress and the pre-roll; keeps the noise floor.
    public mutating func reset() {
        phase = .silence
        history.removeAll(keepingCapacity: true)
        onsetVoiced = 0
        voicedSamples = 0
        utteranceLevels.removeAll(keepingCapacity: true)
        hearsQuietVoice = false
        startedQuiet = false
    }

    /// Ends the utterance. `judgedAgain`: against the floor as it is now (with a detector, the
    /// floor learns during speech): noise that began after a quiet moment looked like speech
    /// until the floor learned it, and is no louder than the floor now.
    private mutating func finish(at end: SampleTime, reason: EndpointEvent.EndReason, judgedAgain: Bool = false) -> EndpointEvent {
        let voiced = voicedSamples
        let threshold = thresholdDB
        let loud = loudLevel(above: threshold)
        // Periods the detector was sure of count only beside one that still stands the margin:
        // a floor that rose to the whole utterance leaves none, and it is discarded as before.
        let sureThreshold = loud == nil ? threshold : sureThresholdDB
        let aboveFloor =
            judgedAgain
            ? utteranceLevels.reduce(SampleTime(0)) {
                $0 + ($1.rmsDB > threshold || ($1.sure && $1.rmsDB > sureThreshold) ? SampleTime($1.samples) : 0)
            } : voiced
        lastSpeechAboveFloorDB = speechAboveFloorDB
        // Ended by a pause: a voice under the gate after the people's last voice and a pause, up
        // to its end or to the last few syllables within `backgroundBelowDB` of this utterance's
        // own voice (a quieter person's soft words), is another's, and is counted as pause: the
        // accurate pass does not hear it.
        var voiceEnd = lastVoicedEnd
        if reason.isPause, settings.backgroundBelowDB > 0, let gap = voiceEndBeforeGap, gap < lastVoicedEnd, let loud {
            let kept = lastVoice(after: gap, end: end, atLeast: loud - settings.backgroundBelowDB, above: threshold) ?? gap
            // Nothing past the last voice, and nothing that held the turn open as the utterance's
            // own voice is left out.
            voiceEnd = min(lastVoicedEnd, max(kept, lastOwnEnd))
        }
        lastBackgroundTail = max(0, lastVoicedEnd - voiceEnd)
        // Another's voice after the people's, left out, or a voice that talked on to the length
        // limit: the room was not quiet.
        if lastBackgroundTail > 0 || reason == .maxLength { quietRoomSamples = 0 }
        let pause = max(0, end - voiceEnd)
        let quiet = hearsQuietVoice
        lastEndedQuiet = quiet
        // One quiet utterance at a time: the next needs a quiet room again (a TV that pauses for
        // `silenceMs` now and then makes one turn, not one for every phrase). So does one that
        // started quiet and went on as the people's (a TV before them, heard too short for a lead-in).
        if quiet || startedQuiet { quietRoomSamples = 0 }
        reset()
        if voiced < count(ms: settings.minSpeechMs) && reason != .forced {
            return .discarded(end: end, reason: .tooShort)
        }
        if aboveFloor < count(ms: settings.minSpeechMs) && reason != .forced {
            return .discarded(end: end, reason: .noLouderThanTheFloor)
        }
        // Started by a moment of a background voice that reached the people's, and no louder
        // than the background as a whole: not theirs, and it teaches nothing.
        let speechMs = Int(voiced) * 1000 / sampleRate
        if !quiet, let gate = backgroundGateDB, let voice = voiceLevelDB, let loud, loud < gate, reason != .forced {
            return .discarded(end: end, reason: .underThePeople(belowDB: voice - loud, speechMs: speechMs))
        }
        // A quiet voice (`hearsQuietVoice`) that talked on to the length limit, or said too little
        // to be words: the background's.
        if quiet, reason == .maxLength || voiced < count(ms: Self.quietVoiceMinMs), reason != .forced {
            return .discarded(end: end, reason: .quietVoiceNotAPerson(speechMs: speechMs))
        }
        if let loud { learnVoiceLevel(loud) }
        return .ended(end: end, reason: reason, pause: pause)
    }

    /// The end of the utterance's last period, after `gap`, that is above `threshold` and ends a
    /// stretch of up to `smoothingPeriods` periods after `gap` (the gate's few syllables) whose
    /// mean level is at least `level` (nil: none). The utterance's periods end at `end`.
    private func lastVoice(after gap: SampleTime, end: SampleTime, atLeast level: Float, above threshold: Float) -> SampleTime? {
        let wanted = pow(10, Double(level) / 10)
        var periodEnd = end
        var index = utteranceLevels.endIndex
        while index > utteranceLevels.startIndex, periodEnd > gap {
            index -= 1
            let period = utteranceLevels[index]
            defer { periodEnd -= SampleTime(period.samples) }
            guard period.rmsDB > threshold else { continue }
            // The stretch ending here, from no earlier than the gap's end.
            var power = 0.0
            var samples = 0.0
            var start = periodEnd
            for earlier in utteranceLevels[..<(index + 1)].reversed().prefix(Self.smoothingPeriods) {
                guard start > gap else { break }
                power += pow(10, Double(earlier.rmsDB) / 10) * Double(earlier.samples)
                samples += Double(earlier.samples)
                start -= SampleTime(earlier.samples)
            }
            if samples > 0, power / samples >= wanted { return periodEnd }
        }
        return nil
    }

    /// The 90th percentile of the utterance's periods above `threshold` (nil: none).
    private func loudLevel(above threshold: Float) -> Float? {
        let levels = utteranceLevels.lazy.map(\.rmsDB).filter { $0 > threshold }.sorted()
        guard !levels.isEmpty else { return nil }
        return levels[min(levels.count - 1, levels.count * 9 / 10)]
    }

    /// An utterance ended at `level`: the loudest is believed at once, a quieter one a quarter
    /// of the way (one utterance of a quieter person does not lower it much, several do).
    private mutating func learnVoiceLevel(_ level: Float) {
        if let voice = voiceLevelDB, level < voice {
            voiceLevelDB = voice + (level - voice) / 4
        } else {
            voiceLevelDB = level
        }
        sinceVoiceLevel = 0
    }

    /// The level of the last `smoothingPeriods` periods (mean power), and the fall of
    /// `voiceLevelDB` once it has held long enough.
    private mutating func smoothed(_ rmsDB: Float, samples: Int) -> Float {
        if recentPower.count == Self.smoothingPeriods { recentPower.removeFirst() }
        recentPower.append(pow(10, Double(rmsDB) / 10))
        sinceVoiceLevel += SampleTime(samples)
        if let voice = voiceLevelDB, phase == .silence, sinceVoiceLevel > count(ms: Self.voiceLevelHoldMs) {
            let fallen = voice - Self.voiceLevelFallDBPerSecond * Float(samples) / Float(sampleRate)
            voiceLevelDB = fallen > settings.floorMinDB ? fallen : nil
        }
        return Decibels.of(power: recentPower.reduce(0, +) / Double(recentPower.count))
    }

    private mutating func remember(_ frame: [Int16], end: SampleTime) {
        history.append(contentsOf: frame)
        historyEnd = end
        // Keep the pre-roll plus whatever onset is pending; trim in blocks to stay cheap.
        let keep = Int(count(ms: settings.prerollMs)) + Int(onsetVoiced) + frame.count
        if history.count > keep * 2 {
            history.removeFirst(history.count - keep)
        }
    }

    /// With the level alone: a quieter background is believed at once (halfway each period), a
    /// louder one slowly (time constant `floorRiseMs`), and only outside speech.
    private mutating func adaptFloor(to level: Float, frameSamples: Int) {
        let level = max(level, settings.floorMinDB)
        guard let floor = noiseFloorDB else {
            noiseFloorDB = level
            return
        }
        if level < floor {
            noiseFloorDB = floor + (level - floor) * 0.5
        } else {
            let alpha = Float(frameSamples) / Float(max(1, count(ms: settings.floorRiseMs)))
            noiseFloorDB = floor + (level - floor) * min(1, alpha)
        }
    }

    /// How far above the quietest period of the window the floor sits: a background's periods
    /// spread around its level (babble by several dB), and the quietest is below it.
    public static let floorBiasDB: Float = 3

    /// With a detector, minimum statistics over 20 ms periods: a quieter background is believed at once, a louder
    /// one once it has lasted the whole window (`floorRiseMs`). The gaps between words, however
    /// short, keep the floor at the background whatever is said; 100 ms blocks did not (a
    /// reader with no 100 ms gap for 3 s raised the floor 10 dB into the speech).
    private mutating func trackFloor(_ rmsDB: Float, samples: Int) {
        recent.append((rmsDB, Int32(samples)))
        recentSamples += samples
        let window = Int(count(ms: settings.floorRiseMs))
        while recentSamples - Int(recent[recentStart].samples) >= window {
            recentSamples -= Int(recent[recentStart].samples)
            recentStart += 1
        }
        if recentStart > 256 {
            recent.removeFirst(recentStart)
            recentStart = 0
        }
        let quietest = recent[recentStart...].lazy.map(\.rmsDB).min() ?? rmsDB
        noiseFloorDB = max(settings.floorMinDB, quietest + Self.floorBiasDB)
    }
}
