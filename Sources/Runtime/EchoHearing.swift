import ParleyAudio
import ParleyCore
import ParleyEndpoint

/// The capture loop's part in hearing a person over Parley's own voice, on a live microphone:
/// while Parley speaks (and its echo may still come), every period is heard without what Parley
/// played over it (`EchoCanceller`, against `EchoReference`), and what a person says is kept
/// (`HeardOverPlayback`) to be heard once Parley has finished, from where their voice began.
///
/// A period is cancelled once it is `waitMs` old. What Parley plays is placed `leadMs` before the
/// capture's position (`EchoReference.lead`), so the canceller has it before its echo; and at the
/// start of each utterance Parley speaks, how late its voice comes back is measured on its first
/// `windowMs` (`EchoDelay`): the canceller is fed what was played at the same delay every time
/// (`targetLagMs`), so what it learnt of the room holds from one utterance to the next.
/// Outside Parley's speech nothing is cancelled or delayed: the echo guard covers its tail, as
/// without a canceller.
///
/// Owned by the capture loop's thread.
struct EchoHearing {
    /// How long after it was played Parley's voice may still be in the capture: the two devices'
    /// latency and a room's reverberation.
    static let tailMs = 400
    /// How far before the capture's position what Parley plays is placed (`EchoReference.lead`).
    static let leadMs = 60
    /// How old a period is when it is cancelled: time to measure the delay of Parley's voice.
    static let waitMs = 300
    /// How much of an utterance's start the delay is measured on, and the longest delay looked for.
    static let windowMs = 150
    static let longestLagMs = 150
    /// The delay at which the canceller is fed what was played, once it is measured.
    static let targetLagMs = 10
    /// How well the played audio must match the captured to trust the delay measured: a delay
    /// near the last one (within `steadyLagMs`, as a device's is from one reply to the next) at
    /// 0.3, another only at 0.6 (a person speaking over the reply's start can make a weak match
    /// elsewhere).
    static let trustedCorrelation: Float = 0.3
    static let trustedElsewhere: Float = 0.6
    static let steadyLagMs = 20
    /// Kept before a person's voice begins over Parley's (the endpointer's pre-roll takes from it).
    static let prerollMs = 600
    /// The most kept of what a person says over Parley (longer than any reply Parley speaks).
    static let limitMs = 30_000

    /// How much of what is left, up to a period, is searched for Parley's voice
    /// (`DoubleTalk.Settings.echoLikeness`: the last `likenessMs`), and where in what was played:
    /// from `likenessLateMs` before what the canceller was fed for it (an echo comes `targetLagMs`
    /// after that, later still if the room's delay grew since it was measured, or a whole delay
    /// later before any was measured) to `likenessEarlyMs` after (a delay that shrank).
    static let likenessMs = 60
    static let likenessLateMs = 200
    static let likenessEarlyMs = 50

    /// A period heard without Parley's voice, with the level it was captured at and the level of
    /// what was played over it.
    struct Cancelled {
        var heard: [Int16]
        var start: SampleTime
        var capturedDB: Float
        var playedDB: Float
        /// Where what the canceller was fed for it starts (nil: it was not cancelled).
        var fedFrom: SampleTime? = nil
    }

    let reference: EchoReference
    /// The capture's period, in samples (what every count of periods here is made for).
    let periodSamples: Int
    private let waitPeriods: Int
    private let makeCanceller: (_ frameSize: Int) -> (any EchoCanceller)?
    private var canceller: (any EchoCanceller)?
    private var kept: HeardOverPlayback
    /// How many times in a row Parley spoke a while and the canceller had not learnt the room.
    private var unlearnt = 0
    /// After how many such times it is told (once).
    static let unlearntTold = 3
    /// What is left of the last periods kept, up to `likenessMs`, oldest first.
    private var recentlyLeft: [Int16] = []
    /// Periods captured while Parley speaks, not yet `waitMs` old.
    private var waiting: [(frame: [Int16], start: SampleTime, capturedDB: Float)] = []
    /// How late Parley's voice comes back after where it was placed, as last measured (samples).
    private(set) var lag: Int?
    /// Where the utterance Parley is speaking began to sound, until its delay is measured.
    private var onset: SampleTime?
    /// The end of the last period over which Parley's voice sounded.
    private var soundedThrough: SampleTime?

    /// How long before the capture's position what Parley played must be kept for this to
    /// cancel it (`EchoReference.keep`): a period is cancelled `waitMs` after it is read, fed what
    /// was played up to `longestLagMs` before it, and the canceller's tail before that.
    static let keepMs = tailMs + waitMs + longestLagMs + 100

    init(
        reference: EchoReference, periodSamples: Int,
        makeCanceller: @escaping (_ frameSize: Int) -> (any EchoCanceller)? = { SpeexEchoCanceller(frameSize: $0, tailMs: tailMs) }
    ) {
        self.reference = reference
        let period = max(1, periodSamples)
        self.periodSamples = period
        self.makeCanceller = makeCanceller
        let periods = { (ms: Int) in max(1, (Int(samples(ms: ms)) + period - 1) / period) }
        waitPeriods = periods(Self.waitMs)
        let periodMs = Double(period) * 1000 / Double(captureSampleRate)
        kept = HeardOverPlayback(
            doubleTalk: DoubleTalk(settings: DoubleTalk.Settings(periodMs: periodMs, tailMs: Double(Self.tailMs))), prerollPeriods: periods(Self.prerollMs),
            limitPeriods: periods(Self.limitMs))
    }

    /// A period captured from `start` while Parley speaks: the period now `waitMs` old, if any,
    /// without what Parley played over it.
    mutating func overPlayback(_ frame: [Int16], at start: SampleTime, capturedDB: Float) -> [Cancelled] {
        waiting.append((frame, start, capturedDB))
        measureLag(after: frame, at: start)
        guard waiting.count > waitPeriods else { return [] }
        let ready = waiting.removeFirst()
        return [cancel(ready.frame, at: ready.start, capturedDB: ready.capturedDB)]
    }

    /// Finds the start of each utterance Parley speaks (sound after a tail of none) and, once
    /// enough of it is captured, how late its voice comes back.
    private mutating func measureLag(after frame: [Int16], at start: SampleTime) {
        let end = start + SampleTime(frame.count)
        if let played = reference.reference(from: start, count: frame.count), played.contains(where: { $0 != 0 }) {
            if onset == nil, soundedThrough.map({ start - $0 >= reference.tail }) ?? true { onset = start }
            soundedThrough = end
        }
        let window = Int(samples(ms: Self.windowMs))
        let longest = Int(samples(ms: Self.longestLagMs))
        guard let from = onset, end >= from + SampleTime(window + longest) else { return }
        onset = nil
        guard let first = waiting.first, first.start <= from, let played = reference.reference(from: from, count: window) else { return }
        let captured = Array(waiting.lazy.flatMap(\.frame).dropFirst(Int(from - first.start)).prefix(window + longest))
        guard let found = EchoDelay.estimate(reference: played, captured: captured, lags: 0...longest) else { return }
        let steady = lag.map { abs($0 - found.lag) <= Int(samples(ms: Self.steadyLagMs)) } ?? true
        if found.correlation >= (steady ? Self.trustedCorrelation : Self.trustedElsewhere) {
            lag = found.lag
        }
    }

    /// Parley has finished: the periods still waiting, without what it played over them.
    mutating func finish() -> [Cancelled] {
        defer { waiting = [] }
        return waiting.map { cancel($0.frame, at: $0.start, capturedDB: $0.capturedDB) }
    }

    private mutating func cancel(_ frame: [Int16], at start: SampleTime, capturedDB: Float) -> Cancelled {
        // Fed at the target delay once the delay is known (until then, as placed).
        let shift = lag.map { SampleTime($0) - samples(ms: Self.targetLagMs) } ?? 0
        guard let played = reference.reference(from: start - shift, count: frame.count) else {
            return Cancelled(heard: frame, start: start, capturedDB: capturedDB, playedDB: Decibels.silence)
        }
        if canceller == nil { canceller = makeCanceller(frame.count) }
        guard let canceller else { return Cancelled(heard: frame, start: start, capturedDB: capturedDB, playedDB: Decibels.silence) }
        return Cancelled(
            heard: canceller.cancel(frame, reference: played), start: start, capturedDB: capturedDB, playedDB: Levels(measuring: played).rmsDB,
            fedFrom: start - shift)
    }

    /// The capture stopped (a pause, a lost device): nothing captured before is heard after it
    /// (what was learnt of the room is kept). How much of a person's speech over Parley that
    /// drops, in milliseconds.
    mutating func forget() -> Int {
        waiting = []
        recentlyLeft = []
        onset = nil
        soundedThrough = nil
        reference.captureStopped()
        return milliseconds(SampleTime(kept.take().reduce(0) { $0 + $1.frame.count }))
    }

    /// A period heard while Parley spoke, with the voice detector's probability for it: kept if
    /// a person speaks over Parley.
    mutating func keep(_ period: Cancelled, heardDB: Float, speech: Float?) {
        recentlyLeft += period.heard
        recentlyLeft.removeFirst(max(0, recentlyLeft.count - max(period.heard.count, Int(samples(ms: Self.likenessMs)))))
        let left = recentlyLeft
        kept.heard(.init(frame: period.heard, start: period.start, rmsDB: heardDB, speech: speech), capturedDB: period.capturedDB, playedDB: period.playedDB) {
            [reference] in
            let late = samples(ms: Self.likenessLateMs)
            guard let fed = period.fedFrom,
                let played = reference.reference(
                    from: fed - SampleTime(left.count - period.heard.count) - late, count: left.count + Int(late + samples(ms: Self.likenessEarlyMs)))
            else { return nil }
            return EchoDelay.likeness(of: left, within: played)
        }
    }

    /// What a person said over Parley, to hear now that it has finished (empty if nobody did),
    /// a line for the debug log on what was heard while Parley spoke (no words in it), and, once,
    /// a notice when the canceller does not learn the room (nobody is heard over Parley then).
    mutating func takeKept() -> (periods: [HeardOverPlayback.Period], summary: String?, notice: String?) {
        let counts = kept.counts
        recentlyLeft = []
        var notice: String?
        // A second of Parley's voice is enough to learn a room on one clock (about 17 dB here).
        if counts.played >= 50 {
            unlearnt = kept.doubleTalk.converged ? 0 : unlearnt + 1
            if unlearnt == Self.unlearntTold {
                notice = """
                    the echo canceller takes only \(Int(kept.doubleTalk.echoReductionDB)) dB of Parley's voice out of what the microphone hears \
                    (\(Self.unlearntTold) replies in a row): what a person says while Parley speaks is not heard. A microphone and a \
                    loudspeaker on one sound card (one clock), not moved while Parley speaks, let it learn the room
                    """
            }
        }
        let summary =
            counts.periods == 0
            ? nil
            : """
            while Parley spoke: \(counts.periods) periods, \(counts.voiced) voiced after cancelling, \(counts.person) a person's, \
            \(kept.doubleTalk.likePlayed) Parley's own voice let through (like what it played); \
            the canceller takes \(Int(kept.doubleTalk.echoReductionDB)) dB out; \
            Parley's voice comes back \(lag.map { "\(milliseconds(SampleTime($0))) ms" } ?? "at a delay not measured") after it was placed
            """
        return (kept.take(), summary, notice)
    }
}
