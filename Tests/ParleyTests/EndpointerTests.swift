import Testing
@testable import ParleyAudio
@testable import ParleyEndpoint

/// Runs a signal through an endpointer in 20 ms periods and collects what it decides.
private func endpoints(_ signal: [Int16], settings: EndpointSettings = EndpointSettings()) -> [EndpointEvent] {
    var endpointer = Endpointer(settings: settings, sampleRate: Signals.rate)
    var position: Int64 = 0
    var events: [EndpointEvent] = []
    for period in Signals.periods(signal) {
        let level = Levels(measuring: period)
        if let event = endpointer.process(period, at: position, rmsDB: level.rmsDB) {
            events.append(event)
        }
        position += Int64(period.count)
    }
    return events
}

private func ms(_ value: Int) -> Int64 { Int64(value * 16) }

@Suite("Endpointing on synthetic signals")
struct EndpointerTests {
    let background = Signals.noise(ms: 1000, amplitude: 0.002)  // about -57 dBFS, like a quiet room

    @Test func speechBetweenSilencesStartsWithPrerollAndEndsAfterTheHangover() throws {
        let signal = background + Signals.tone(ms: 1000, amplitude: 0.3) + Signals.noise(ms: 1500, amplitude: 0.002, seed: 7)
        let events = endpoints(signal)
        try #require(events.count == 2)
        guard case .started(let start, let audio) = events[0], case .ended(let end, let reason) = events[1] else {
            Issue.record("expected start then end, got \(events)")
            return
        }
        // Onset at 1000 ms, confirmed after onset_ms; the pre-roll reaches 500 ms before the onset.
        #expect(start == ms(500))
        #expect(audio.count == Int(ms(500 + 100)))
        // The tone stops at 2000 ms; 700 ms of silence end it.
        #expect(end == ms(2700))
        #expect(reason == .silence)
    }

    @Test func preRollHoldsTheAudioFromBeforeTheOnset() throws {
        let marker = Signals.noise(ms: 500, amplitude: 0.004, seed: 3)  // still below the threshold
        let signal = background + marker + Signals.tone(ms: 600, amplitude: 0.3) + Signals.silence(ms: 1000)
        guard case .started(_, let audio)? = endpoints(signal).first else {
            Issue.record("no onset")
            return
        }
        #expect(Array(audio.prefix(marker.count)) == marker)
    }

    @Test func aClickIsNotSpeech() {
        let signal = background + Signals.tone(ms: 60, amplitude: 0.5) + Signals.silence(ms: 1000)
        #expect(endpoints(signal).isEmpty)
    }

    @Test func aShortSoundIsDiscardedNotEnded() {
        // Above the onset time but under min_speech_ms.
        let signal = background + Signals.tone(ms: 160, amplitude: 0.3) + Signals.silence(ms: 1200)
        let events = endpoints(signal)
        #expect(events.count == 2)
        if case .discarded? = events.last {} else { Issue.record("expected discarded, got \(events)") }
    }

    @Test func aPauseShorterThanTheHangoverKeepsOneUtterance() {
        let signal = background + Signals.tone(ms: 500, amplitude: 0.3) + Signals.silence(ms: 400)
            + Signals.tone(ms: 500, amplitude: 0.3) + Signals.silence(ms: 1000)
        let events = endpoints(signal)
        #expect(events.count == 2)
    }

    @Test func silenceSettingChangesWhereTheUtteranceEnds() {
        var settings = EndpointSettings()
        settings.silenceMs = 300
        let signal = background + Signals.tone(ms: 500, amplitude: 0.3) + Signals.silence(ms: 400)
            + Signals.tone(ms: 500, amplitude: 0.3) + Signals.silence(ms: 1000)
        let events = endpoints(signal, settings: settings)
        #expect(events.count == 4)
    }

    @Test func longSpeechIsCutAtTheMaximum() throws {
        var settings = EndpointSettings()
        settings.maxSpeechMs = 2000
        let signal = background + Signals.tone(ms: 5000, amplitude: 0.3)
        let events = endpoints(signal, settings: settings)
        guard case .started(let start, _)? = events.first, case .ended(let end, let reason)? = events.dropFirst().first else {
            Issue.record("expected a cut utterance, got \(events)")
            return
        }
        #expect(reason == .maxLength)
        #expect(end - start >= ms(2000) && end - start < ms(2020))
    }

    @Test func aSteadyLoudBackgroundIsNotSpeech() {
        // A fan at -30 dBFS from the first period: the floor starts there, so nothing is heard.
        let signal = Signals.noise(ms: 5000, amplitude: 0.05)
        #expect(endpoints(signal).isEmpty)
    }

    @Test func theFloorFollowsTheBackground() {
        var endpointer = Endpointer(sampleRate: Signals.rate)
        var position: Int64 = 0
        for period in Signals.periods(Signals.noise(ms: 3000, amplitude: 0.01)) {
            _ = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB)
            position += Int64(period.count)
        }
        // Uniform noise of amplitude 0.01 has RMS 0.01/√3: about -44.8 dBFS.
        let floor = endpointer.noiseFloorDB ?? 0
        #expect(abs(floor - -44.8) < 1.5)
    }

    @Test func digitalSilenceDoesNotDragTheFloorBelowItsMinimum() {
        var endpointer = Endpointer(sampleRate: Signals.rate)
        var position: Int64 = 0
        for period in Signals.periods(Signals.silence(ms: 2000)) {
            _ = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB)
            position += Int64(period.count)
        }
        #expect(endpointer.noiseFloorDB == EndpointSettings().floorMinDB)
    }

    @Test func forceEndEndsSpeechInProgress() {
        var endpointer = Endpointer(sampleRate: Signals.rate)
        var position: Int64 = 0
        for period in Signals.periods(background + Signals.tone(ms: 300, amplitude: 0.3)) {
            _ = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB)
            position += Int64(period.count)
        }
        #expect(endpointer.isInSpeech)
        #expect(endpointer.forceEnd(at: position) == .ended(end: position, reason: .forced))
        #expect(!endpointer.isInSpeech)
    }
}

@Suite("Endpointing when the background changes")
struct EndpointerBackgroundTests {
    @Test func aBackgroundThatGetsLouderIsLearnedAfterOneCut() {
        var settings = EndpointSettings()
        settings.maxSpeechMs = 2000
        // A quiet room, then a fan switched on for 10 s, then a real utterance over the fan.
        let signal = Signals.noise(ms: 1000, amplitude: 0.002) + Signals.noise(ms: 10_000, amplitude: 0.05, seed: 9)
        var endpointer = Endpointer(settings: settings, sampleRate: Signals.rate)
        var position: Int64 = 0
        var cuts = 0
        for period in Signals.periods(signal) {
            if case .ended(_, .maxLength)? = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB) {
                cuts += 1
            }
            position += Int64(period.count)
        }
        #expect(cuts == 1)
        #expect(!endpointer.isInSpeech)
    }
}
