/// Hearing a person through Parley's own voice: a microphone in the room hears the loudspeaker,
/// so while Parley speaks what it captures is its own speech, with whatever the person says
/// under it. An echo canceller takes out what Parley played (it knows the samples and, through
/// `EchoReference`, where on the capture timeline they went out); what is left is the room.

import CSpeexDSP
// The shared vocabulary (`SampleTime`); users import it themselves.
public import ParleyCore
import Synchronization

/// Takes out of the captured audio what the loudspeaker put in it.
///
/// Owned by the one thread that captures; it keeps what it has learnt of the room between calls.
public protocol EchoCanceller: AnyObject {
    /// `captured` without what `reference` (the audio played over the same span of the capture
    /// timeline, as many samples) put in it, through the room, up to the canceller's tail later.
    func cancel(_ captured: [Int16], reference: [Int16]) -> [Int16]
}

/// Speex's echo canceller (a frequency-domain adaptive filter, as PulseAudio's and many phones'
/// use): it learns the path from the loudspeaker to the microphone while Parley speaks and keeps
/// it between utterances, so the first seconds Parley ever speaks in a room are not cancelled
/// well and the rest are (16-27 dB in the live room of bench/over-playback.py; `DoubleTalk` hears
/// nobody over Parley until it takes 12 dB out).
public final class SpeexEchoCanceller: EchoCanceller {
    private let state: OpaquePointer
    /// The samples it takes at a time: the capture period.
    public let frameSize: Int

    /// A canceller for `frameSize`-sample periods at `sampleRate` whose filter covers echoes up to
    /// `tailMs` after the sound was played (the device's latency and the room's reverberation).
    public init?(frameSize: Int, tailMs: Int, sampleRate: Int = captureSampleRate) {
        guard frameSize > 0, tailMs > 0, let state = speex_echo_state_init(Int32(frameSize), Int32(sampleRate * tailMs / 1000)) else {
            return nil
        }
        self.state = state
        self.frameSize = frameSize
        var rate = Int32(sampleRate)
        _ = speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
    }

    deinit { speex_echo_state_destroy(state) }

    /// A period of another length than the canceller's (a device that changed its period) is
    /// passed through as it is, and learns nothing.
    public func cancel(_ captured: [Int16], reference: [Int16]) -> [Int16] {
        guard captured.count == frameSize, reference.count == frameSize else { return captured }
        var out = [Int16](repeating: 0, count: frameSize)
        captured.withUnsafeBufferPointer { captured in
            reference.withUnsafeBufferPointer { reference in
                out.withUnsafeMutableBufferPointer { out in
                    speex_echo_cancellation(state, captured.baseAddress, reference.baseAddress, out.baseAddress)
                }
            }
        }
        return out
    }
}

/// What Parley played, placed on the capture timeline: the playback side writes it as it goes to
/// the device (`played`), the capture side reads the span of each period it captured
/// (`reference(from:count:)`) to cancel it there.
///
/// A sample is placed where the capture is when it is written, less a `lead`, or right after the
/// one written before it if that one is still to play (a device plays what it is given back to
/// back). Where the capture is comes from the clock: the position of the period read the
/// freshest (a read that waited for its period) plus the time since, as a device delivers
/// periods in bursts and the last position read may be tens of milliseconds old. The same
/// placement for every utterance keeps the echo's delay the same, so the canceller does not learn
/// the room again each time Parley speaks. The echo then comes within the canceller's tail after
/// it: the two devices' latency is tens of milliseconds or more, but a sound server may hand over
/// audio before the moment it is played (PulseAudio's null sink does, by up to 18 ms), hence the
/// lead; the capture cancels a period only once it is `lead` old (`EchoHearing`).
public final class EchoReference: Sendable {
    private struct Timeline: ~Copyable {
        /// The first sample kept, on the capture timeline.
        var start: SampleTime = 0
        var samples: [Int16] = []
        /// Where the capture is: the end of the last period read.
        var heardThrough: SampleTime = 0
        /// The capture's position at the clock's zero as each of the last reads says (samples),
        /// oldest first: the freshest of them (the greatest) puts the capture at
        /// `offset + seconds × rate`.
        var offsets: [Double] = []
        /// False from `captureStopped` until the capture reads again.
        var capturing = true
        /// The end of the last sound played (silence leaves no echo to cancel).
        var soundThrough: SampleTime?
        var resampler: Resampler?
    }

    private let timeline = Mutex(Timeline())
    private let sampleRate: Int
    /// How long after it was played a sample can still be heard (the canceller's tail).
    public let tail: SampleTime
    /// How long before the capture's position what was played is kept: a tail, and as far back
    /// as the capture cancels (it may cancel a period some time after reading it).
    public let keep: SampleTime
    /// How far before the capture's position what is played is placed.
    public let lead: SampleTime

    /// Seconds on a monotonic clock (the capture's and the playback's threads read the same).
    private let seconds: @Sendable () -> Double

    /// How many reads say where the capture is (2 s of 20 ms periods): enough for a fresh one
    /// among them, few enough that a lost period (an overrun) or the two clocks' drift is
    /// forgotten within seconds.
    static let reads = 100

    public init(
        sampleRate: Int = captureSampleRate, tailMs: Int, leadMs: Int = 0, keepMs: Int? = nil,
        seconds: @escaping @Sendable () -> Double = EchoReference.monotonicSeconds
    ) {
        self.seconds = seconds
        self.sampleRate = sampleRate
        self.tail = samples(ms: tailMs, rate: sampleRate)
        self.keep = samples(ms: max(tailMs, keepMs ?? tailMs), rate: sampleRate)
        self.lead = samples(ms: leadMs, rate: sampleRate)
    }

    /// The capture has read through `position`; what was played more than `keep` before is forgotten.
    public func captured(through position: SampleTime) {
        timeline.withLock { timeline in
            timeline.capturing = true
            timeline.heardThrough = position
            timeline.offsets.append(Double(position) - seconds() * Double(sampleRate))
            if timeline.offsets.count > Self.reads { timeline.offsets.removeFirst(timeline.offsets.count - Self.reads) }
            let forget = Int(min(max(0, position - keep - timeline.start), SampleTime(timeline.samples.count)))
            guard forget > 0 else { return }
            timeline.samples.removeFirst(forget)
            timeline.start += SampleTime(forget)
        }
    }

    /// `samples` at `rate` go to the loudspeaker now, after whatever was written before them.
    public func played(_ samples: [Int16], rate: Int) {
        guard !samples.isEmpty else { return }
        timeline.withLock { timeline in
            // Nothing hears it while the capture is stopped.
            guard timeline.capturing else { return }
            let capture = timeline.offsets.max().map { SampleTime(($0 + seconds() * Double(sampleRate)).rounded()) } ?? timeline.heardThrough
            let now = max(0, max(capture, timeline.heardThrough) - lead)
            let gap = now - (timeline.start + SampleTime(timeline.samples.count))
            if timeline.samples.isEmpty {
                timeline.start = now
                timeline.resampler = nil
            } else if gap > 0 {
                // Everything written before has played: this starts where the capture is (what
                // played last is kept, its echo may still be coming). At most `keep`: older
                // samples are forgotten as the capture goes on.
                timeline.samples += [Int16](repeating: 0, count: Int(gap))
                timeline.resampler = nil
            }
            if rate != sampleRate, timeline.resampler?.inputRate != rate { timeline.resampler = Resampler(from: rate, to: sampleRate) }
            timeline.samples += timeline.resampler?.process(samples) ?? (rate == sampleRate ? samples : [])
            if samples.contains(where: { $0 != 0 }) { timeline.soundThrough = timeline.start + SampleTime(timeline.samples.count) }
        }
    }

    /// The capture stopped (a pause, a lost device): what is played until it reads again is
    /// heard by nobody, and where it was says nothing of where it will be.
    public func captureStopped() {
        timeline.withLock { timeline in
            timeline.capturing = false
            timeline.offsets = []
            timeline.samples = []
            timeline.soundThrough = nil
            timeline.resampler = nil
        }
    }

    /// What was written and not yet played was dropped (a stop): it never reaches the room.
    public func discard() {
        timeline.withLock { timeline in
            let keep = Int(min(max(0, timeline.heardThrough - timeline.start), SampleTime(timeline.samples.count)))
            timeline.samples.removeLast(timeline.samples.count - keep)
            timeline.soundThrough = timeline.soundThrough.map { min($0, timeline.start + SampleTime(keep)) }
        }
    }

    /// What was played over `count` samples from `start` (silence where nothing was), or nil when
    /// no sound played from a tail before it on can be in it: there is no echo to cancel.
    public func reference(from start: SampleTime, count: Int) -> [Int16]? {
        timeline.withLock { timeline -> [Int16]? in
            let end = timeline.start + SampleTime(timeline.samples.count)
            guard let sound = timeline.soundThrough, sound + tail > start, timeline.start < start + SampleTime(count) else { return nil }
            var span = [Int16](repeating: 0, count: count)
            let from = max(start, timeline.start)
            let through = min(start + SampleTime(count), end)
            if from < through {
                let source = Int(from - timeline.start)
                let target = Int(from - start)
                let length = Int(through - from)
                span.replaceSubrange(target..<target + length, with: timeline.samples[source..<source + length])
            }
            return span
        }
    }
}

extension EchoReference {
    /// Seconds since some fixed moment, on the system's monotonic clock.
    public static func monotonicSeconds() -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    private static let start = ContinuousClock.now
}

/// Speex's resampler, for what Parley plays at its voice's rate to be compared with the capture.
private final class Resampler {
    private let state: OpaquePointer
    let inputRate: Int
    private let outputRate: Int

    init?(from inputRate: Int, to outputRate: Int) {
        var error: Int32 = 0
        guard inputRate > 0, outputRate > 0, let state = speex_resampler_init(1, UInt32(inputRate), UInt32(outputRate), 4, &error) else {
            return nil
        }
        self.state = state
        self.inputRate = inputRate
        self.outputRate = outputRate
    }

    deinit { speex_resampler_destroy(state) }

    func process(_ input: [Int16]) -> [Int16] {
        var output = [Int16](repeating: 0, count: input.count * outputRate / inputRate + 64)
        var consumed = UInt32(input.count)
        var produced = UInt32(output.count)
        input.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in
                _ = speex_resampler_process_int(state, 0, input.baseAddress, &consumed, output.baseAddress, &produced)
            }
        }
        return Array(output.prefix(Int(produced)))
    }
}

/// A loudspeaker whose samples are also placed on the capture timeline (`EchoReference`), for
/// the capture to cancel them.
public final class EchoReferencedPlayback: AudioPlayback {
    private let device: any AudioPlayback
    private let reference: EchoReference

    public init(_ device: any AudioPlayback, reference: EchoReference) {
        self.device = device
        self.reference = reference
    }

    public var sampleRate: Int { device.sampleRate }

    public func write(_ samples: [Int16]) throws(AudioError) {
        reference.played(samples, rate: device.sampleRate)
        try device.write(samples)
    }

    public func drain() throws(AudioError) { try device.drain() }

    public func discard() {
        device.discard()
        reference.discard()
    }

    public func close() { device.close() }

    public func renew() { device.renew() }
}

/// How late Parley's voice comes back into the capture, measured on the audio itself: a sound
/// server or a device starts each utterance a few milliseconds earlier or later than the last,
/// and a canceller fed its reference at another delay has to learn the room again.
public enum EchoDelay {
    /// The lag (in samples, within `lags`) at which `captured` holds `reference` best, and how
    /// well (the normalized correlation, 0-1); nil for silence. `captured` starts where
    /// `reference` does and runs at least `lags.upperBound` further.
    public static func estimate(reference: [Int16], captured: [Int16], lags: ClosedRange<Int>) -> (lag: Int, correlation: Float)? {
        bestMatch(of: reference.map(Float.init), in: captured.map(Float.init), lags: lags)
    }

    /// How much `heard` sounds like some stretch of `played` as long as it, anywhere in it: the
    /// best normalized correlation (0-1) of the two pre-emphasized (each sample less 0.9 of the
    /// one before, as speech coders do); nil when `heard` is silent or `played` is shorter. What is
    /// left of Parley's voice after a canceller that lost the room matches what was played near its
    /// delay; a person's voice does not. The emphasis
    /// weighs a voice's upper harmonics over its low, periodic hum, on which two people's voices
    /// match by chance. Measured on ../shared/speech (`bench/echo-likeness.py`: 674 pairs of
    /// recordings; 60 ms heard in 310 ms played; room noise 50 dB under full scale on what is
    /// heard): a person's voice 0.17 at the median, 0.51 at the 99th percentile (0.28 and 0.74
    /// without the emphasis); Parley's voice at half its level 0.96 at the median, 0.61 at the 5th
    /// percentile.
    public static func likeness(of heard: [Int16], within played: [Int16]) -> Float? {
        guard heard.count > 1, played.count >= heard.count else { return nil }
        return bestMatch(of: emphasized(heard), in: emphasized(played), lags: 0...(played.count - heard.count))?.correlation
    }

    private static func emphasized(_ samples: [Int16]) -> [Float] {
        zip(samples.dropFirst(), samples).map { Float($0) - 0.9 * Float($1) }
    }

    /// The sum of `a[i] * b[from + i]` for `i` below `count`, sixteen at a time (six times as fast
    /// as one at a time, which the compiler may not reorder into vectors).
    private static func dot(_ a: UnsafeBufferPointer<Float>, _ b: UnsafeBufferPointer<Float>, from: Int, count: Int) -> Float {
        guard let x = a.baseAddress, let y = b.baseAddress.map({ $0 + from }), count <= a.count, from + count <= b.count else { return 0 }
        var sums = SIMD16<Float>()
        var index = 0
        while index + 16 <= count {
            sums += UnsafeRawPointer(x + index).loadUnaligned(as: SIMD16<Float>.self) * UnsafeRawPointer(y + index).loadUnaligned(as: SIMD16<Float>.self)
            index += 16
        }
        var product = sums.sum()
        while index < count {
            product += x[index] * y[index]
            index += 1
        }
        return product
    }

    /// The lag at which `signal` holds `pattern` best, and the normalized correlation there.
    private static func bestMatch(of pattern: [Float], in signal: [Float], lags: ClosedRange<Int>) -> (lag: Int, correlation: Float)? {
        let length = pattern.count
        guard length > 0, lags.lowerBound >= 0, signal.count >= length + lags.upperBound else { return nil }
        let patternEnergy = pattern.reduce(0) { $0 + Double($1) * Double($1) }
        guard patternEnergy > 0 else { return nil }
        // The energy of each window of `signal`, kept as it slides (in doubles: a loud stretch
        // taken out of a float sum leaves an error as large as a quiet window's energy).
        var windowEnergy = signal[lags.lowerBound..<lags.lowerBound + length].reduce(0) { $0 + Double($1) * Double($1) }
        var best: (lag: Int, correlation: Float)?
        pattern.withUnsafeBufferPointer { pattern in
            signal.withUnsafeBufferPointer { signal in
                for lag in lags {
                    if lag > lags.lowerBound {
                        let entering = Double(signal[lag + length - 1])
                        let leaving = Double(signal[lag - 1])
                        windowEnergy += entering * entering - leaving * leaving
                    }
                    let product = dot(pattern, signal, from: lag, count: length)
                    let correlation = Float(min(1, Double(abs(product)) / (patternEnergy * max(windowEnergy, 1)).squareRoot()))
                    if correlation > best?.correlation ?? -1 { best = (lag, correlation) }
                }
            }
        }
        return best
    }
}
