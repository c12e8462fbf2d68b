/// Endpointing on the capture timeline: a trained voice-activity detector and the level say where
/// speech starts and pauses, the words say whether a pause ends the turn.
///
/// The endpointer tracks the background level (the noise floor: the quietest 100 ms of the last
/// `floorRiseMs`, so a background that gets louder is learned in that time, even during speech),
/// decides where speech starts and ends, and keeps a pre-roll so the first syllable is not
/// clipped. A period is voiced when it is `marginDB` above the floor and, when a voice-activity
/// detector runs (`speech` in `process`), that detector says it is speech: the level keeps a
/// background of voices (babble, a TV across the room) out of the turn, the detector keeps
/// clatter, water and fans out. Speech that turns out to be no louder than the background it
/// came to be (noise that began after a quiet moment) is discarded when it ends. A pause ends the
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
    /// (0: only `silenceMs` ends it).
    public var likelyEndMs: Int = 200
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
    /// The lowest the noise floor may go; keeps digital silence from making noise look like speech.
    public var floorMinDB: Float = -66
    /// How long a louder background must last to become the floor: the floor is the quietest
    /// 100 ms block of this window.
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
    /// silence.
    case ended(end: SampleTime, reason: EndReason, pause: SampleTime)
    /// What looked like speech was too short to be an utterance.
    case discarded(end: SampleTime)

    public enum EndReason: String, Sendable, Equatable {
        /// The language model judged the words a whole sentence, after a short pause.
        case languageModel = "language_model"
        /// The silence limit (`silenceMs`).
        case silence
        case maxLength = "max_length", forced
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
    private var speechStart: SampleTime = 0
    private var lastVoicedEnd: SampleTime = 0
    private var voicedSamples: SampleTime = 0
    /// The end of the last period the voice-activity detector heard a voice in.
    private var lastVoiceHeardEnd: SampleTime = 0
    /// The levels of the current utterance's periods and their lengths, to judge it again against
    /// the floor when it ends.
    private var utteranceLevels: [(rmsDB: Float, samples: Int32)] = []
    /// The floor's window: the levels of the last 100 ms blocks, and the block being measured.
    private var blocks: [Float] = []
    private var blockPower: Double = 0
    private var blockSamples = 0

    public init(settings: EndpointSettings = EndpointSettings(), sampleRate: Int) {
        self.settings = settings
        self.sampleRate = sampleRate
    }

    /// The level speech must exceed right now.
    public var thresholdDB: Float {
        (noiseFloorDB ?? settings.floorMinDB) + settings.marginDB
    }

    public var isInSpeech: Bool { phase == .speech }

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

    /// The silence so far in the utterance (nil outside speech, or while voiced).
    public var pause: SampleTime? {
        guard phase == .speech, processedEnd > lastVoicedEnd else { return nil }
        return processedEnd - lastVoicedEnd
    }

    /// Whether the recognizer should judge the words so far: a pause is on that an `EndCue`
    /// could end.
    public var wantsCue: Bool {
        guard settings.likelyEndMs > 0, let pause else { return false }
        return pause >= count(ms: Self.cueDelayMs) && pause < count(ms: settings.likelyEndMs + Self.cueWindowMs)
    }

    /// The position from which an `EndCue` speaks for the current pause.
    public var cueFrom: SampleTime { lastVoicedEnd + count(ms: Self.cueDelayMs) }

    private func count(ms: Int) -> SampleTime { SampleTime(ms) * SampleTime(sampleRate) / 1000 }

    /// Processes one period that starts at `start` on the capture timeline and has RMS level
    /// `rmsDB`. `speech` is the voice-activity detector's probability that the period is speech
    /// (nil: no detector runs, the level alone decides). `cue` is the recognizer's latest
    /// judgement of the words so far; it counts when it saw at least `cueDelayMs` of the current
    /// pause.
    public mutating func process(
        _ frame: [Int16], at start: SampleTime, rmsDB: Float, speech: Float? = nil, cue: EndCue? = nil
    ) -> EndpointEvent? {
        let end = start + SampleTime(frame.count)
        guard noiseFloorDB != nil else {
            // The first period is taken as the background: a floor must exist before speech can.
            remember(frame, end: end)
            noiseFloorDB = max(rmsDB, settings.floorMinDB)
            return nil
        }
        var voiced = rmsDB > thresholdDB
        if let speech {
            voiced = voiced && speech >= (phase == .speech ? settings.speechEndThreshold : settings.speechThreshold)
        }
        if let speech, speech >= settings.speechEndThreshold { lastVoiceHeardEnd = end }
        trackFloor(rmsDB, samples: frame.count)
        if phase != .silence { utteranceLevels.append((rmsDB, Int32(frame.count))) }
        switch phase {
        case .silence, .onset:
            remember(frame, end: end)
            guard voiced else {
                phase = .silence
                onsetVoiced = 0
                utteranceLevels.removeAll(keepingCapacity: true)
                return nil
            }
            if phase == .silence { utteranceLevels.append((rmsDB, Int32(frame.count))) }
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
            processedEnd = end
            voicedSamples = onsetVoiced
            let audio = history
            history.removeAll(keepingCapacity: true)
            return .started(start: speechStart, audio: audio)
        case .speech:
            processedEnd = end
            if voiced {
                lastVoicedEnd = end
                voicedSamples += SampleTime(frame.count)
            }
            if end - speechStart >= count(ms: settings.maxSpeechMs) {
                return finish(at: end, reason: .maxLength)
            }
            guard !voiced else { return nil }
            let pause = end - lastVoicedEnd
            if pause >= count(ms: settings.silenceMs) {
                return finish(at: end, reason: .silence)
            }
            // The short pause needs the detector's word too, when one runs: a dip in the level
            // that it still hears as a voice, or stopped hearing only just now, is a breath
            // inside the sentence, not its end.
            if settings.likelyEndMs > 0, pause >= count(ms: settings.likelyEndMs), pause < count(ms: settings.likelyEndMs + Self.cueWindowMs),
                let cue, cue.through >= cueFrom, cue.probability >= settings.endProbability,
                speech == nil || end - lastVoiceHeardEnd >= count(ms: Self.voiceQuietMs)
            {
                return finish(at: end, reason: .languageModel)
            }
            return nil
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
    }

    private mutating func finish(at end: SampleTime, reason: EndpointEvent.EndReason) -> EndpointEvent {
        let voiced = voicedSamples
        let pause = max(0, end - lastVoicedEnd)
        // Judged again against the floor as it is now: noise that began after a quiet moment
        // looked like speech until the floor learned it, and is no louder than the floor now.
        let threshold = thresholdDB
        let aboveFloor = utteranceLevels.reduce(SampleTime(0)) { $0 + ($1.rmsDB > threshold ? SampleTime($1.samples) : 0) }
        reset()
        if (voiced < count(ms: settings.minSpeechMs) || aboveFloor < count(ms: settings.minSpeechMs)) && reason != .forced {
            return .discarded(end: end)
        }
        return .ended(end: end, reason: reason, pause: pause)
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

    /// The length of the blocks whose quietest sets the floor.
    static let floorBlockMs = 100

    /// Minimum statistics: a quieter background is believed after one block, a louder one once
    /// it has lasted the whole window (`floorRiseMs`); pauses in speech keep the floor at the
    /// background, whatever is said.
    private mutating func trackFloor(_ rmsDB: Float, samples: Int) {
        blockPower += Double(samples) * pow(10, Double(rmsDB) / 10)
        blockSamples += samples
        guard blockSamples >= Int(count(ms: Self.floorBlockMs)) else { return }
        let level = Float(10 * log10(max(blockPower / Double(blockSamples), 1e-12)))
        blockPower = 0
        blockSamples = 0
        blocks.append(level)
        let window = max(1, settings.floorRiseMs / Self.floorBlockMs)
        if blocks.count > window { blocks.removeFirst(blocks.count - window) }
        noiseFloorDB = max(settings.floorMinDB, blocks.min() ?? level)
    }
}
