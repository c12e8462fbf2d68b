/// A person speaking while Parley speaks. The capture hears both; the echo canceller takes
/// Parley's own voice out of it (`EchoCanceller`), not all of it. `DoubleTalk` tells, period by
/// period, whether what is left is a person's voice or the leftovers of Parley's, and
/// `HeardOverPlayback` keeps that person's audio so it is heard once Parley has finished: what a
/// person says over Parley is not lost.

// The shared vocabulary (`SampleTime`); users import it themselves.
public import ParleyCore

/// Whether the period just captured, while Parley's voice may be in it, holds a person's voice.
///
/// It learns how much of Parley's voice the canceller takes out (the echo reduction: the captured
/// level over what is left, while only Parley is heard) and calls a period a person's when what is
/// left is a voice (the detector says so) well above what would be left of Parley's, and does not
/// sound like what Parley played (a canceller that lost the room for a moment lets its voice
/// through). Until the canceller has learnt the room (`convergedDB`), nobody is heard over
/// Parley: its own voice, not cancelled yet, must never become a turn.
public struct DoubleTalk: Sendable {
    public struct Settings: Sendable, Equatable {
        /// The echo reduction from which the leftovers of Parley's voice can be told from a person.
        public var convergedDB: Float = 12
        /// How far above the leftovers of Parley's voice a person must be.
        public var marginDB: Float = 10
        /// The voice detector's probability from which what is left is a voice.
        public var voice: Float = 0.5
        /// How much what is left may sound like what was played near its delay and still be a
        /// person (`EchoDelay.likeness`): above it, it is Parley's own voice that the canceller
        /// let through (it lost the room for a moment: a device's delay that moved), however loud.
        public var echoLikeness: Float = 0.5
        /// Played audio under this level is silence (no echo can come of it).
        public var silentReferenceDB: Float = -70
        /// How many periods back what was played can still be heard (the canceller's tail).
        public var tailPeriods: Int
        /// A person is speaking once `onsetPeriods` of the last `window` periods held their voice.
        public var onsetPeriods: Int
        public var window: Int

        /// For 20 ms periods.
        public init() { self.init(periodMs: 20) }

        /// For periods of `periodMs` and a canceller's tail of `tailMs`: the same durations (100
        /// ms of voice in 160 ms).
        public init(periodMs: Double, tailMs: Double = 400) {
            let periods = { (ms: Double) in max(1, Int((ms / max(periodMs, 1)).rounded(.up))) }
            tailPeriods = periods(tailMs)
            onsetPeriods = periods(100)
            window = max(onsetPeriods, periods(160))
        }
    }

    public let settings: Settings
    /// How far under the captured level the canceller brings Parley's voice, as learnt (a running
    /// median of the periods where Parley played and no person was found).
    public private(set) var echoReductionDB: Float = 0
    /// The played levels of the last `tailPeriods` periods, newest last.
    private var playedDB: [Float] = []
    /// Whether each of the last `window` periods held a person's voice, newest last.
    private var recent: [Bool] = []
    /// How many periods since the last `restart` were a voice well above the leftovers of
    /// Parley's, but sounded like what was played (for the daemon's log).
    public private(set) var likePlayed = 0

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Whether the canceller has learnt the room well enough to tell a person from Parley.
    public var converged: Bool { echoReductionDB >= settings.convergedDB }

    /// One period: its captured level, the level of what is left after cancelling, the level of
    /// what was played over it, the detector's probability for what is left (nil: no detector;
    /// the level alone cannot tell a voice, so nothing is a person then), and how much what is
    /// left sounds like what was played near it (`EchoDelay.likeness`; asked only of a period
    /// that would otherwise be a person's, as it takes a search; nil: nothing was played near
    /// it). True once a person is speaking (`onsetPeriods` of the last `window`).
    public mutating func judge(
        capturedDB: Float, residualDB: Float, playedDB played: Float, voice: Float?, likeness: () -> Float? = { nil }
    ) -> Bool {
        playedDB.append(played)
        if playedDB.count > settings.tailPeriods { playedDB.removeFirst() }
        let echoPossible = playedDB.contains { $0 > settings.silentReferenceDB }
        let voiced = (voice ?? 0) >= settings.voice
        let person: Bool
        if !echoPossible {
            // Nothing played for a tail, as placed; but where the canceller has not learnt the
            // room, the placing itself may be off (two clocks: a sound server's loopback, whose
            // delay drifts), and Parley's voice may still be coming: voiced leftovers of it were
            // taken for a person there. Nobody is heard over Parley until the room is learnt.
            person = converged && voiced && !soundsPlayed(likeness)
        } else {
            person = converged && voiced && residualDB >= capturedDB - echoReductionDB + settings.marginDB && !soundsPlayed(likeness)
            // Learnt where Parley is playing now and no person is heard: a step toward the
            // reduction measured, so a few periods of double talk move it little.
            if !person, played > settings.silentReferenceDB {
                echoReductionDB += capturedDB - residualDB > echoReductionDB ? 0.5 : -0.5
            }
        }
        recent.append(person)
        if recent.count > settings.window { recent.removeFirst() }
        return recent.count(where: { $0 }) >= settings.onsetPeriods
    }

    /// Whether what is left is what was played: the canceller let Parley's voice through.
    private mutating func soundsPlayed(_ likeness: () -> Float?) -> Bool {
        guard let likeness = likeness(), likeness > settings.echoLikeness else { return false }
        likePlayed += 1
        return true
    }

    /// Forgets the recent periods (not what was learnt of the room).
    public mutating func restart() {
        playedDB = []
        recent = []
        likePlayed = 0
    }
}

/// The audio captured while Parley speaks (or its echo may still be heard), kept when a person
/// speaks over it, to be heard once Parley has finished as if it came then: the person's turn
/// starts where their voice did, with its pre-roll.
public struct HeardOverPlayback: Sendable {
    /// One captured period, after the echo was cancelled.
    public struct Period: Sendable, Equatable {
        public var frame: [Int16]
        public var start: SampleTime
        public var rmsDB: Float
        /// The voice detector's probability for it.
        public var speech: Float?

        public init(frame: [Int16], start: SampleTime, rmsDB: Float, speech: Float?) {
            self.frame = frame
            self.start = start
            self.rmsDB = rmsDB
            self.speech = speech
        }
    }

    public var doubleTalk: DoubleTalk
    /// How many periods before a person's onset are kept (its pre-roll, and the onset's window).
    public let prerollPeriods: Int
    /// The most periods kept (a person who speaks longer than that over Parley keeps the last of it).
    public let limitPeriods: Int
    private var periods: [Period] = []
    /// Whether a person spoke over Parley in what is kept.
    public private(set) var personHeard = false
    /// Of the periods heard since the last `take`: how many, how many Parley's voice sounded
    /// over, how many the detector called a voice, and how many were a person's (for the
    /// daemon's log).
    public private(set) var counts = (periods: 0, played: 0, voiced: 0, person: 0)

    public init(doubleTalk: DoubleTalk = DoubleTalk(), prerollPeriods: Int, limitPeriods: Int) {
        self.doubleTalk = doubleTalk
        self.prerollPeriods = max(prerollPeriods, doubleTalk.settings.window)
        self.limitPeriods = max(limitPeriods, self.prerollPeriods)
    }

    /// A period captured while Parley speaks: kept as pre-roll, or as a person's speech once one
    /// was heard (`DoubleTalk`; `likeness` is asked only until then).
    public mutating func heard(_ period: Period, capturedDB: Float, playedDB: Float, likeness: () -> Float? = { nil }) {
        let person = doubleTalk.judge(
            capturedDB: capturedDB, residualDB: period.rmsDB, playedDB: playedDB, voice: period.speech, likeness: personHeard ? { nil } : likeness)
        personHeard = personHeard || person
        counts.periods += 1
        if playedDB > doubleTalk.settings.silentReferenceDB { counts.played += 1 }
        if (period.speech ?? 0) >= doubleTalk.settings.voice { counts.voiced += 1 }
        if person { counts.person += 1 }
        periods.append(period)
        let limit = personHeard ? limitPeriods : prerollPeriods
        if periods.count > limit { periods.removeFirst(periods.count - limit) }
    }

    /// The periods to hear now that Parley has finished (none when no person spoke over it), in
    /// order; what was kept is forgotten.
    public mutating func take() -> [Period] {
        defer {
            periods = []
            personHeard = false
            counts = (0, 0, 0, 0)
            doubleTalk.restart()
        }
        return personHeard ? periods : []
    }
}
