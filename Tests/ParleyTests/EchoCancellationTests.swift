import Foundation
import ParleyAudio
import ParleyCore
import ParleyEndpoint
import Synchronization
import Testing

@testable import ParleyRuntime

/// Hearing a person over Parley's own voice: Speex's canceller on real speech, what Parley played
/// placed on the capture timeline, and the pure judgement of who is speaking over it.
@Suite("Echo cancelling and double talk")
struct EchoCancellationTests {
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../data/en")

    /// A whole 16 kHz recording.
    static func recording(_ name: String) throws -> [Int16] {
        let file = try FileCapture(path: data.appendingPathComponent(name).path)
        var all: [Int16] = []
        while case let period = try file.read(), !period.isEmpty { all += period }
        return all
    }

    static func decibels(_ samples: ArraySlice<Int16>) -> Float { Levels(measuring: samples).rmsDB }

    /// Parley's voice (one real speaker) reaches the microphone 120 ms late at 0.8 of its level,
    /// twice; a person (another real speaker) speaks over the second time, 6 dB under it. Once the
    /// canceller has learnt the room, Parley's voice alone is brought down by more than 15 dB, and
    /// the person over it comes through at their own level.
    @Test func speexTakesParleysVoiceOutAndLeavesThePersonOverIt() throws {
        let parley = Array(try Self.recording("cathy-a0122.wav").prefix(16_000 * 3))
        let person = Array(try Self.recording("vctk-p301_102.wav").prefix(16_000 * 2))
        let period = 320
        let delay = 1_920
        let firstPlay = 8_000
        let secondPlay = firstPlay + parley.count + 16_000
        let length = (secondPlay + parley.count + 16_000) / period * period
        var played = [Int16](repeating: 0, count: length)
        var captured = [Float](repeating: 0, count: length)
        for start in [firstPlay, secondPlay] {
            for (index, sample) in parley.enumerated() {
                played[start + index] = sample
                if start + delay + index < length { captured[start + delay + index] += Float(sample) * 0.8 }
            }
        }
        let personStart = secondPlay + parley.count / 3
        for (index, sample) in person.enumerated() where personStart + index < length {
            captured[personStart + index] += Float(sample) * 0.4
        }
        let microphone = captured.map { Int16(max(-32_768, min(32_767, $0.rounded()))) }
        let canceller = try #require(SpeexEchoCanceller(frameSize: period, tailMs: 400))
        var residual: [Int16] = []
        for start in stride(from: 0, to: length, by: period) {
            residual += canceller.cancel(Array(microphone[start..<start + period]), reference: Array(played[start..<start + period]))
        }
        // The second time, before the person speaks: Parley's voice alone.
        let alone = (secondPlay + delay)..<personStart
        let reduction = Self.decibels(microphone[alone]) - Self.decibels(residual[alone])
        #expect(reduction > 15, "Parley's own voice brought down by \(reduction) dB")
        // The person over it keeps their level.
        let over = personStart..<min(personStart + person.count, secondPlay + delay + parley.count)
        let personAlone = person.prefix(over.count).map { Int16(Float($0) * 0.4) }
        let kept = Self.decibels(residual[over]) - Self.decibels(personAlone[...])
        #expect(abs(kept) < 3, "the person over Parley comes through \(kept) dB off their own level")
    }

    @Test func aPeriodOfAnotherLengthPassesThroughUnchanged() throws {
        let canceller = try #require(SpeexEchoCanceller(frameSize: 320, tailMs: 100))
        let frame = (0..<160).map { Int16($0 * 10) }
        #expect(canceller.cancel(frame, reference: [Int16](repeating: 0, count: 160)) == frame)
    }

    // MARK: What Parley played, on the capture timeline

    @Test func whatIsPlayedIsPlacedWhereTheCaptureIsThenBackToBack() {
        let reference = EchoReference(tailMs: 100, seconds: { 0 })
        #expect(reference.reference(from: 0, count: 320) == nil, "nothing played: nothing to cancel")
        reference.captured(through: 3_200)
        reference.played([Int16](repeating: 100, count: 640), rate: captureSampleRate)
        reference.played([Int16](repeating: 200, count: 320), rate: captureSampleRate)
        // The first sample where the capture was (nothing before it), the next chunk right after the first.
        #expect(reference.reference(from: 2_880, count: 320) == nil)
        #expect(reference.reference(from: 3_200, count: 320) == [Int16](repeating: 100, count: 320))
        let span = reference.reference(from: 3_680, count: 320)
        #expect(span.map { Array($0[0..<160]) } == [Int16](repeating: 100, count: 160))
        #expect(span.map { Array($0[160..<320]) } == [Int16](repeating: 200, count: 160))
        // After the sound, for a tail (1,600 samples), silence to cancel; then nothing.
        #expect(reference.reference(from: 4_160, count: 320) == [Int16](repeating: 0, count: 320))
        reference.captured(through: 6_000)
        #expect(reference.reference(from: 5_760, count: 320) == nil)
    }

    @Test func aChunkWrittenAfterThePlayedOnesEndedStartsWhereTheCaptureIs() {
        let reference = EchoReference(tailMs: 100, seconds: { 0 })
        reference.played([Int16](repeating: 100, count: 320), rate: captureSampleRate)
        reference.captured(through: 960)
        reference.played([Int16](repeating: 200, count: 320), rate: captureSampleRate)
        #expect(reference.reference(from: 320, count: 320) == [Int16](repeating: 0, count: 320))
        #expect(reference.reference(from: 960, count: 320) == [Int16](repeating: 200, count: 320))
    }

    @Test func aStopDropsWhatWasNotPlayedAndSilenceLeavesNothingToCancel() {
        let reference = EchoReference(tailMs: 100, seconds: { 0 })
        reference.played([Int16](repeating: 100, count: 3_200), rate: captureSampleRate)
        reference.captured(through: 640)
        reference.discard()
        #expect(reference.reference(from: 320, count: 320) == [Int16](repeating: 100, count: 320))
        #expect(reference.reference(from: 640, count: 320) == [Int16](repeating: 0, count: 320))
        #expect(reference.reference(from: 2_560, count: 320) == nil, "a tail after the last sound played")
        let silent = EchoReference(tailMs: 100, seconds: { 0 })
        silent.played([Int16](repeating: 0, count: 3_200), rate: captureSampleRate)
        #expect(silent.reference(from: 0, count: 320) == nil)
    }

    @Test func aVoiceAtAnotherRateIsPlacedAtTheCaptureRate() {
        let reference = EchoReference(tailMs: 100, seconds: { 0 })
        let second = (0..<22_050).map { Int16(8_000 * sin(Double($0) * 2 * .pi * 440 / 22_050)) }
        reference.played(second, rate: 22_050)
        // A second of 22,050 Hz audio is about a second at 16 kHz (the resampler holds back a few samples).
        let last = reference.reference(from: 15_360, count: 320)
        #expect(last.map { Self.decibels($0[0..<200]) } ?? -96 > -30)
        #expect(reference.reference(from: 16_000, count: 320).map { Self.decibels($0[100...]) } == -96)
    }

    /// A device hands over periods in bursts, and a read may come late: where the capture is
    /// comes from the freshest read (the most audio for the time) and the clock since.
    @Test func whereTheCaptureIsComesFromItsFreshestReadAndTheClock() {
        let time = Mutex(0.0)
        let reference = EchoReference(tailMs: 100, leadMs: 5, seconds: { time.withLock { $0 } })
        for (at, through) in [(1.0, 16_000), (1.020, 16_320), (1.060, 16_640)] {
            time.withLock { $0 = at }
            reference.captured(through: SampleTime(through))
        }
        // The last read came 20 ms late: the capture is where the first two say, 17,120 at 1.070 s.
        time.withLock { $0 = 1.070 }
        reference.played([Int16](repeating: 100, count: 320), rate: captureSampleRate)
        // Placed 5 ms (80 samples) before it.
        #expect(reference.reference(from: 16_960, count: 320) == [Int16](repeating: 0, count: 80) + [Int16](repeating: 100, count: 240))
    }

    /// After a pause (or a device reopened), where the capture was says nothing of where it is:
    /// what is played while it is stopped is heard by nobody, and once it reads again, what is
    /// played is placed where that read ended.
    @Test func aCaptureThatStartsAgainIsPlacedFromItsNextReads() {
        let time = Mutex(1.0)
        let reference = EchoReference(tailMs: 100, seconds: { time.withLock { $0 } })
        reference.captured(through: 16_000)
        time.withLock { $0 = 61.0 }  // a minute paused: the capture did not move
        reference.captureStopped()
        // Played while the capture is stopped: nobody hears it.
        reference.played([Int16](repeating: 200, count: 16_000), rate: captureSampleRate)
        #expect(reference.reference(from: 16_000, count: 320) == nil)
        reference.captured(through: 16_320)
        reference.played([Int16](repeating: 100, count: 320), rate: captureSampleRate)
        #expect(reference.reference(from: 16_320, count: 320) == [Int16](repeating: 100, count: 320))
    }

    // MARK: How late Parley's voice comes back

    @Test func theDelayOfParleysVoiceIsFoundOnTheAudio() throws {
        let voice = Array(try Self.recording("cathy-a0122.wav").dropFirst(8_000).prefix(2_400))
        var captured = [Int16](repeating: 0, count: 700) + voice.map { Int16(Float($0) * 0.5) } + [Int16](repeating: 0, count: 2_400)
        var noise = SystemRandomNumberGenerator()
        captured = captured.map { $0 &+ Int16.random(in: -200...200, using: &noise) }
        let found = try #require(EchoDelay.estimate(reference: voice, captured: captured, lags: 0...2_400))
        #expect(found.lag == 700)
        #expect(found.correlation > 0.9)
        #expect(EchoDelay.estimate(reference: [Int16](repeating: 0, count: 2_400), captured: captured, lags: 0...2_400) == nil)
        #expect(EchoDelay.estimate(reference: voice, captured: Array(captured.prefix(3_000)), lags: 0...2_400) == nil, "too short to look that far")
    }

    /// Parley's voice played into a room that returns it 37 ms (or 137 ms) after it was placed: the delay is
    /// measured on the utterance's start, and the canceller is fed what was played at the target
    /// delay from then on (here a canceller that subtracts what it was given the target delay
    /// before, so what is left is nothing once the delay is right).
    @Test(arguments: [592, 2_200])
    func theCancellerIsFedParleysVoiceAtTheSameDelayEveryTime(lag: Int) throws {
        final class Subtracting: EchoCanceller {
            var given = [Int16](repeating: 0, count: Int(samples(ms: EchoHearing.targetLagMs)))
            func cancel(_ captured: [Int16], reference: [Int16]) -> [Int16] {
                given += reference
                defer { given.removeFirst(reference.count) }
                return zip(captured, given).map { $0 &- $1 }
            }
        }
        let voice = Array(try Self.recording("cathy-a0122.wav").prefix(16_000 * 2))
        let reference = EchoReference(tailMs: EchoHearing.tailMs, leadMs: EchoHearing.leadMs, keepMs: EchoHearing.keepMs, seconds: { 0 })
        var hearing = EchoHearing(reference: reference, periodSamples: 320) { _ in Subtracting() }
        let period = 320
        reference.captured(through: SampleTime(period * 50))
        reference.played(voice, rate: captureSampleRate)
        let placed = period * 50 - Int(samples(ms: EchoHearing.leadMs))
        var left: [EchoHearing.Cancelled] = []
        for index in 50..<200 {
            let start = index * period
            let frame = (start..<start + period).map { position -> Int16 in
                let played = position - lag - placed
                return played >= 0 && played < voice.count ? voice[played] : 0
            }
            reference.captured(through: SampleTime(start + period))
            left += hearing.overPlayback(frame, at: SampleTime(start), capturedDB: -30)
        }
        #expect(hearing.lag == lag)
        // Once measured (the first `waitMs` of periods are cancelled with it too), nothing is left.
        let late = left.filter { $0.start > SampleTime(placed + 16_000) }
        #expect(!late.isEmpty)
        #expect(late.allSatisfy { $0.heard.allSatisfy { $0 == 0 } }, "fed at the delay Parley's voice came back at")
    }

    /// What is left of Parley's voice matches what was played near its delay; a person's voice
    /// does not. Parley's voice (one real speaker) comes back 30 ms late at half its level with a
    /// little noise: each 60 ms of it is found in what was played around it. Another real
    /// speaker's 60 ms, against the same played voice, almost never are.
    @Test func whatIsLeftOfParleysVoiceIsToldFromAPersonsByItsLikenessToWhatWasPlayed() throws {
        let played = Array(try Self.recording("cathy-a0122.wav").prefix(16_000 * 3))
        let person = Array(try Self.recording("vctk-p301_102.wav").prefix(16_000 * 3))
        var noise = ConfigFuzzTests.Seeded(state: 53)
        let stretch = Int(samples(ms: EchoHearing.likenessMs))
        let window = Int(samples(ms: EchoHearing.likenessLateMs + EchoHearing.likenessEarlyMs))
        var echoes: [Float] = []
        var people: [Float] = []
        for start in stride(from: 0, to: played.count - window - stretch, by: 640) {
            let around = Array(played[start..<start + window + stretch])
            // The echo of what was played at `start + 480`, inside the window.
            let echo = played[(start + 480)..<(start + 480 + stretch)].map { Int16(Float($0) * 0.5) &+ Int16.random(in: -100...100, using: &noise) }
            if Self.decibels(echo[...]) > -40, let likeness = EchoDelay.likeness(of: echo, within: around) { echoes.append(likeness) }
            let voice = Array(person[start..<start + stretch])
            if Self.decibels(voice[...]) > -40, let likeness = EchoDelay.likeness(of: voice, within: around) { people.append(likeness) }
        }
        #expect(echoes.count > 30 && people.count > 30)
        let threshold = DoubleTalk.Settings().echoLikeness
        #expect(echoes.allSatisfy { $0 > threshold }, "Parley's voice: \(echoes.sorted().prefix(5))")
        #expect(echoes.sorted()[echoes.count / 2] > 0.9)
        let likeParley = people.filter { $0 > threshold }.count
        #expect(likeParley * 30 <= people.count, "\(likeParley) of \(people.count) stretches of a person taken for Parley's voice: \(people.sorted().suffix(5))")
        #expect(EchoDelay.likeness(of: [Int16](repeating: 0, count: stretch), within: played) == nil, "silence is like nothing")
        #expect(EchoDelay.likeness(of: Array(person.prefix(stretch)), within: Array(played.prefix(100))) == nil, "too short to look in")
    }

    /// The room's delay grows while Parley speaks, after the canceller has learnt it: what is left
    /// is Parley's voice, as loud as what was captured and as voice-like. It is not a person (the
    /// real-time bilingual test heard Parley's own voice as a turn that way), whether the
    /// canceller still takes out its voice at the old delay (30 ms, 150 ms) or stops taking out
    /// anything (the new delay alone is then in what is left: 150 ms later than measured). A
    /// person over Parley in a steady room is still heard.
    @Test(arguments: [(moveMs: 30, forgets: false), (moveMs: 150, forgets: false), (moveMs: 150, forgets: true), (moveMs: 0, forgets: false)])
    func parleysOwnVoiceLetThroughByACancellerThatLostTheRoomIsNotAPerson(moveMs: Int, forgets: Bool) throws {
        /// Subtracts what it was given the target delay before; once `forgetting`, nothing.
        final class Subtracting: EchoCanceller {
            var given = [Int16](repeating: 0, count: Int(samples(ms: EchoHearing.targetLagMs)))
            var forgetting = false
            func cancel(_ captured: [Int16], reference: [Int16]) -> [Int16] {
                given += reference
                defer { given.removeFirst(reference.count) }
                return forgetting ? captured : zip(captured, given).map { $0 &- $1 }
            }
        }
        let personSpeaks = moveMs == 0
        let voice = Array(try Self.recording("cathy-a0122.wav").prefix(16_000 * 3))
        let person = Array(try Self.recording("vctk-p301_102.wav").prefix(16_000 * 2))
        let reference = EchoReference(tailMs: EchoHearing.tailMs, leadMs: EchoHearing.leadMs, keepMs: EchoHearing.keepMs, seconds: { 0 })
        let canceller = Subtracting()
        var hearing = EchoHearing(reference: reference, periodSamples: 320) { _ in canceller }
        let period = 320
        reference.captured(through: SampleTime(period * 50))
        reference.played(voice, rate: captureSampleRate)
        let placed = period * 50 - Int(samples(ms: EchoHearing.leadMs))
        let lag = 592
        let moved = placed + 16_000 * 3 / 2
        for index in 50..<220 {
            let start = index * period
            let frame = (start..<start + period).map { position -> Int16 in
                // Half way through, the room's delay grows, or a person starts speaking.
                let delay = position >= moved ? lag + Int(samples(ms: moveMs)) : lag
                let played = position - delay - placed
                let echo = played >= 0 && played < voice.count ? voice[played] : 0
                let said = position - moved
                return personSpeaks && said >= 0 && said < person.count ? echo &+ person[said] : echo
            }
            reference.captured(through: SampleTime(start + period))
            canceller.forgetting = forgets && start >= moved
            for cancelled in hearing.overPlayback(frame, at: SampleTime(start), capturedDB: Levels(measuring: frame).rmsDB) {
                // The worst detector: everything is a voice.
                hearing.keep(cancelled, heardDB: Levels(measuring: cancelled.heard).rmsDB, speech: 0.9)
            }
        }
        for cancelled in hearing.finish() { hearing.keep(cancelled, heardDB: Levels(measuring: cancelled.heard).rmsDB, speech: 0.9) }
        let (kept, summary, _) = hearing.takeKept()
        if personSpeaks {
            let first = try #require(kept.first?.start, "the person over Parley is heard")
            #expect(first < SampleTime(moved), "from before their voice began")
        } else {
            #expect(kept.count == 0, "Parley's own voice taken for a person: \(summary ?? "")")
            #expect(summary?.contains(" 0 a person's") == true, "\(summary ?? "")")
        }
    }

    // MARK: Who speaks over Parley

    /// While the canceller has not learnt the room, even a voice well above Parley's is not
    /// taken for a person (it may be Parley's own voice, not cancelled yet).
    @Test func nobodyIsHeardOverParleyUntilTheCancellerHasLearntTheRoom() {
        var doubleTalk = DoubleTalk()
        for _ in 0..<8 {
            let person = doubleTalk.judge(capturedDB: -30, residualDB: -31, playedDB: -25, voice: 0.9)
            #expect(!person)
        }
        #expect(!doubleTalk.converged)
    }

    @Test func aPersonIsAVoiceWellAboveWhatIsLeftOfParleys() {
        var doubleTalk = DoubleTalk()
        // Parley alone: the canceller takes 25 dB out.
        for _ in 0..<100 { _ = doubleTalk.judge(capturedDB: -30, residualDB: -55, playedDB: -25, voice: 0.6) }
        #expect(doubleTalk.converged)
        #expect(abs(doubleTalk.echoReductionDB - 25) <= 1)
        // Leftovers of Parley's voice, however voice-like, are not a person.
        for _ in 0..<8 {
            let person = doubleTalk.judge(capturedDB: -30, residualDB: -53, playedDB: -25, voice: 0.9)
            #expect(!person)
        }
        let learnt = doubleTalk
        // A person 10 dB under Parley's voice: what is left is them.
        var onset: Int?
        for index in 0..<8 where doubleTalk.judge(capturedDB: -29.6, residualDB: -40, playedDB: -25, voice: 0.8) {
            onset = onset ?? index
        }
        #expect(onset == DoubleTalk.Settings().onsetPeriods - 1, "a person is speaking after \(DoubleTalk.Settings().onsetPeriods) periods")
        // Above the leftovers but not a voice (a door, a cough under the detector's threshold).
        var other = learnt
        var anyone = false
        for _ in 0..<8 { anyone = anyone || other.judge(capturedDB: -29.6, residualDB: -40, playedDB: -25, voice: 0.2) }
        #expect(!anyone)
    }

    /// A DoubleTalk that has learnt a room where the canceller takes 25 dB out, its recent
    /// periods forgotten.
    static func learnt() -> DoubleTalk {
        var doubleTalk = DoubleTalk()
        for _ in 0..<100 { _ = doubleTalk.judge(capturedDB: -30, residualDB: -55, playedDB: -25, voice: 0.6) }
        doubleTalk.restart()
        return doubleTalk
    }

    /// Above Parley's leftovers, a voice, but sounding like what was played: Parley's own voice
    /// let through, not a person, and learnt from. The likeness is asked only of such a period.
    @Test func aVoiceThatSoundsLikeWhatWasPlayedIsParleysOwnHoweverLoud() {
        var doubleTalk = Self.learnt()
        var asked = 0
        var heard = false
        for _ in 0..<8 {
            heard = heard || doubleTalk.judge(capturedDB: -30, residualDB: -31, playedDB: -25, voice: 0.9) { asked += 1; return 0.8 }
        }
        #expect(!heard)
        #expect(asked == 8 && doubleTalk.likePlayed == 8)
        #expect(doubleTalk.echoReductionDB < 25, "learnt from: the canceller takes less out now")
        var person = Self.learnt()
        heard = false
        for _ in 0..<8 { heard = heard || person.judge(capturedDB: -30, residualDB: -31, playedDB: -25, voice: 0.9) { 0.3 } }
        #expect(heard, "unlike what was played: a person")
        var leftovers = Self.learnt()
        for _ in 0..<8 { _ = leftovers.judge(capturedDB: -30, residualDB: -55, playedDB: -25, voice: 0.9) { asked += 1; return 0.1 } }
        #expect(asked == 8, "not asked of Parley's leftovers")
        var kept = HeardOverPlayback(doubleTalk: Self.learnt(), prerollPeriods: 10, limitPeriods: 100)
        asked = 0
        for index in 0..<30 {
            kept.heard(Self.period(index, speech: 0.9), capturedDB: -35, playedDB: -25) {
                asked += 1
                return 0.1
            }
        }
        #expect(kept.personHeard)
        #expect(asked == DoubleTalk.Settings().onsetPeriods, "asked until a person is heard, not after")
    }

    @Test func onceNothingWasPlayedForATailAVoiceIsAPerson() {
        var doubleTalk = Self.learnt()
        var heard = false
        for _ in 0..<8 { heard = doubleTalk.judge(capturedDB: -35, residualDB: -35, playedDB: Decibels.silence, voice: 0.9) }
        #expect(heard)
        // Without a detector the level alone cannot tell a voice from Parley's leftovers.
        var levelOnly = Self.learnt()
        for _ in 0..<8 { heard = levelOnly.judge(capturedDB: -35, residualDB: -35, playedDB: Decibels.silence, voice: nil) }
        #expect(!heard)
    }

    /// Where the canceller has not learnt the room, what is played may not be where it was
    /// placed (two clocks: a sound server's loopback, whose delay drifts): Parley's voice may
    /// still come after the tail, and a voice then is not taken for a person either (the
    /// real-time bilingual test heard Parley's own voice as three turns that way).
    @Test func beforeTheRoomIsLearntNoVoiceIsAPersonEvenAfterATailOfNothingPlayed() {
        var doubleTalk = DoubleTalk()
        for _ in 0..<50 { _ = doubleTalk.judge(capturedDB: -30, residualDB: -37, playedDB: -25, voice: 0.9) }
        #expect(!doubleTalk.converged)
        var heard = false
        for _ in 0..<30 { heard = heard || doubleTalk.judge(capturedDB: -35, residualDB: -35, playedDB: Decibels.silence, voice: 0.9) }
        #expect(!heard)
    }

    // MARK: Keeping what a person says over Parley

    static func period(_ index: Int, speech: Float) -> HeardOverPlayback.Period {
        .init(frame: [Int16](repeating: Int16(index), count: 320), start: SampleTime(index * 320), rmsDB: -35, speech: speech)
    }

    @Test func whatAPersonSaysOverParleyIsKeptFromBeforeTheirVoiceBegan() {
        var kept = HeardOverPlayback(doubleTalk: Self.learnt(), prerollPeriods: 10, limitPeriods: 100)
        for index in 0..<30 { kept.heard(Self.period(index, speech: 0.1), capturedDB: -35, playedDB: Decibels.silence) }
        for index in 30..<50 { kept.heard(Self.period(index, speech: 0.9), capturedDB: -35, playedDB: Decibels.silence) }
        let periods = kept.take()
        // From ten periods before the onset was found (its fifth voiced period, 34) to the last.
        #expect(periods.map(\.start) == (24..<50).map { SampleTime($0 * 320) })
        #expect(kept.take().isEmpty, "taken once")
    }

    @Test func nothingIsKeptWhenNobodySpokeOverParleyAndALongSpeechKeepsItsLast() {
        var quiet = HeardOverPlayback(doubleTalk: Self.learnt(), prerollPeriods: 10, limitPeriods: 100)
        for index in 0..<200 { quiet.heard(Self.period(index, speech: 0.1), capturedDB: -35, playedDB: Decibels.silence) }
        #expect(quiet.take().isEmpty)
        var long = HeardOverPlayback(doubleTalk: Self.learnt(), prerollPeriods: 10, limitPeriods: 100)
        for index in 0..<300 { long.heard(Self.period(index, speech: 0.9), capturedDB: -35, playedDB: Decibels.silence) }
        let periods = long.take()
        #expect(periods.count == 100)
        #expect(periods.last?.start == SampleTime(299 * 320))
    }
}
