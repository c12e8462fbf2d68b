import Testing
@testable import ParleyAudio
@testable import ParleyEndpoint

/// Runs a signal through an endpointer in 20 ms periods and collects what it decides.
/// `judge` plays the recognizer: given the position the audio reached, it returns its view of
/// the words so far, asked only while the endpointer wants one.
private func endpoints(
    _ signal: [Int16], settings: EndpointSettings = EndpointSettings(), speech: Float? = nil, judge: ((Int64) -> EndCue?)? = nil
) -> [EndpointEvent] {
    var endpointer = Endpointer(settings: settings, sampleRate: Signals.rate)
    var position: Int64 = 0
    var events: [EndpointEvent] = []
    var cue: EndCue?
    for period in Signals.periods(signal) {
        let level = Levels(measuring: period)
        let event = endpointer.process(period, at: position, rmsDB: level.rmsDB, speech: speech, cue: cue)
        // The recognizer judges the period just processed; the endpointer sees it next period,
        // as in the runtime.
        // A judgement stays until the next one, however old, as in the runtime.
        if endpointer.wantsCue, let judged = judge?(position + Int64(period.count)) { cue = judged }
        if let event {
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
        guard case .started(let start, let audio) = events[0], case .ended(let end, let reason, _) = events[1] else {
            Issue.record("expected start then end, got \(events)")
            return
        }
        // Onset at 1000 ms, confirmed after onset_ms; the pre-roll reaches 500 ms before the onset.
        #expect(start == ms(500))
        #expect(audio.count == Int(ms(500 + 100)))
        // The tone stops at 2000 ms; with no word to judge, only silence_ms (1500 ms) ends it.
        #expect(end == ms(3500))
        #expect(reason == .silence)
    }

    /// Runs `signal` until speech starts: the audio that started it, and where the voice begins in it.
    private func voiceStart(_ signal: [Int16]) -> (audio: [Int16], voice: Int)? {
        var endpointer = Endpointer(sampleRate: Signals.rate)
        var position: Int64 = 0
        for period in Signals.periods(signal) {
            if case .started(_, let audio)? = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB) {
                return (audio, endpointer.lastVoiceStart)
            }
            position += Int64(period.count)
        }
        return nil
    }

    /// A soft first word, under the level that starts speech but well over the room, is where the
    /// voice begins (the accurate engines hear from a little before it); the room before it is not.
    @Test func theVoiceBeginsAtItsSoftFirstSoundsNotAtTheOnset() throws {
        let soft = Signals.tone(ms: 200, amplitude: 0.005)
        let softOverRoom = Levels(measuring: soft).rmsDB - Levels(measuring: background).rmsDB
        try #require(softOverRoom > Endpointer.softMarginDB + 1 && softOverRoom < EndpointSettings().marginDB - 1, "soft: \(softOverRoom) dB")
        let started = try #require(voiceStart(background + soft + Signals.tone(ms: 600, amplitude: 0.3)))
        // The onset (100 ms of the loud tone) ends the audio; the soft 200 ms come before it.
        let softStart = started.audio.count - Int(ms(100 + 200))
        #expect(abs(started.voice - softStart) <= Int(ms(10)), "voice at \(started.voice), soft sounds at \(softStart)")
        // Without the soft sounds, the voice begins at the onset: the room before it is not the voice.
        let loudOnly = try #require(voiceStart(background + Signals.tone(ms: 600, amplitude: 0.3)))
        #expect(abs(loudOnly.voice - (loudOnly.audio.count - Int(ms(100)))) <= Int(ms(10)), "voice at \(loudOnly.voice) of \(loudOnly.audio.count)")
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
        let signal = background + Signals.tone(ms: 160, amplitude: 0.3) + Signals.silence(ms: 1600)
        let events = endpoints(signal)
        #expect(events.count == 2)
        if case .discarded(_, .tooShort)? = events.last {} else { Issue.record("expected discarded as too short, got \(events)") }
    }

    @Test func aPauseShorterThanTheHangoverKeepsOneUtterance() {
        let signal = background + Signals.tone(ms: 500, amplitude: 0.3) + Signals.silence(ms: 400)
            + Signals.tone(ms: 500, amplitude: 0.3) + Signals.silence(ms: 1500)
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
        guard case .started(let start, _)? = events.first, case .ended(let end, let reason, _)? = events.dropFirst().first else {
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
        #expect(endpointer.forceEnd(at: position) == .ended(end: position, reason: .forced, pause: 0))
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
            if case .ended(_, .maxLength, _)? = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB) {
                cuts += 1
            }
            position += Int64(period.count)
        }
        #expect(cuts == 1)
        #expect(!endpointer.isInSpeech)
    }
}

@Suite("Endpointing when the background changes, with a voice-activity detector")
struct EndpointerLearnedBackgroundTests {
    @Test func aBackgroundThatComesOnIsLearnedAndMakesNoUtterance() {
        // A quiet room, then a room of voices for 10 s (the detector hears voices all along): it
        // looks like speech until the floor has learned it (`floorRiseMs`), and is then
        // discarded, not made a turn.
        let signal = Signals.noise(ms: 1000, amplitude: 0.002) + Signals.noise(ms: 10_000, amplitude: 0.05, seed: 9)
        var endpointer = Endpointer(sampleRate: Signals.rate)
        var position: Int64 = 0
        var events: [EndpointEvent] = []
        for period in Signals.periods(signal) {
            if let event = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB, speech: 0.9) { events.append(event) }
            position += Int64(period.count)
        }
        #expect(!events.contains { if case .ended = $0 { true } else { false } })
        #expect(events.contains { if case .discarded(_, .noLouderThanTheFloor) = $0 { true } else { false } }, "\(events)")
        #expect(!endpointer.isInSpeech)
        // Uniform noise of amplitude 0.05: about -30.8 dBFS (and the bias above its quietest).
        #expect(abs((endpointer.noiseFloorDB ?? 0) - (-30.8 + Endpointer.floorBiasDB)) < 1.5)
    }

    @Test func speechOverABackgroundThatCameOnIsHeardOnceTheFloorKnowsIt() throws {
        // Voices come on, then after 5 s someone speaks over them, 20 dB louder, and stops.
        let fan = Signals.noise(ms: 5000, amplitude: 0.02, seed: 9)
        let signal = Signals.noise(ms: 1000, amplitude: 0.002) + fan + mix(Signals.tone(ms: 1500, amplitude: 0.3), Signals.noise(ms: 1500, amplitude: 0.02, seed: 3))
            + Signals.noise(ms: 2500, amplitude: 0.02, seed: 4)
        let events = endpoints(signal, speech: 0.9)
        let ended = events.compactMap { if case .ended(let end, let reason, _) = $0 { (end, reason) } else { nil } }
        #expect(ended.count == 1)
        let end = try #require(ended.first)
        #expect(end.1 == .silence)
        #expect(end.0 > ms(7500) && end.0 < ms(9100))
    }
}

@Suite("Endpointing with a voice-activity detector")
struct EndpointerVoiceActivityTests {
    /// Runs `signal` with `speech(periodStartMs)` as the detector's probability of each period.
    private func run(_ signal: [Int16], speech: (Int) -> Float) -> [EndpointEvent] {
        var endpointer = Endpointer(sampleRate: Signals.rate)
        var position: Int64 = 0
        var events: [EndpointEvent] = []
        for period in Signals.periods(signal) {
            let probability = speech(Int(position / 16))
            if let event = endpointer.process(period, at: position, rmsDB: Levels(measuring: period).rmsDB, speech: probability) {
                events.append(event)
            }
            position += Int64(period.count)
        }
        return events
    }

    let quiet = Signals.noise(ms: 1000, amplitude: 0.002)

    @Test func aLoudSoundTheDetectorCallsNoVoiceIsNotSpeech() {
        // A clatter 40 dB above the room, 800 ms long, that the detector hears as no voice.
        let events = run(quiet + Signals.noise(ms: 800, amplitude: 0.3, seed: 2) + quiet) { _ in 0.05 }
        #expect(events.isEmpty)
    }

    @Test func aVoiceTheDetectorHearsIsSpeech() throws {
        let events = run(quiet + Signals.tone(ms: 1000, amplitude: 0.3) + Signals.noise(ms: 2000, amplitude: 0.002, seed: 5)) { at in
            (1000..<2000).contains(at) ? 0.95 : 0.02
        }
        #expect(events.count == 2)
        guard case .started(let start, _)? = events.first, case .ended(let end, .silence, _)? = events.last else {
            Issue.record("expected one utterance, got \(events)")
            return
        }
        #expect(start >= ms(400) && start <= ms(1100))
        #expect(end >= ms(3500) && end <= ms(3540))
    }

    @Test func voicesAtTheLevelOfTheBackgroundAreNotSpeech() {
        // Babble: the detector hears voices all along, but they are the room, not a person
        // speaking to Parley.
        let events = run(Signals.noise(ms: 6000, amplitude: 0.02, seed: 8)) { _ in 0.9 }
        #expect(events.isEmpty)
    }

    @Test func aPauseOverBabbleIsAPause() throws {
        // A person 20 dB over babble stops speaking; the detector still hears the babble's
        // voices, and the level says the person has stopped.
        let babble = { (ms: Int, seed: UInt64) in Signals.noise(ms: ms, amplitude: 0.02, seed: seed) }
        let signal = babble(4000, 1) + mix(Signals.tone(ms: 1500, amplitude: 0.3), babble(1500, 2)) + babble(3000, 3)
        let events = run(signal) { _ in 0.9 }
        let ended = events.compactMap { if case .ended(let end, _, _) = $0 { end } else { nil } }
        #expect(ended.count == 1)
        let end = try #require(ended.first)
        #expect(end >= ms(7000) && end <= ms(7040))
    }

    @Test func aSoftSyllableBetweenTheThresholdsKeepsSpeechGoing() {
        // In speech, a probability between speech_end_threshold (0.35) and speech_threshold
        // (0.5) is still speech: no pause opens, so the silence limit counts from the end.
        let signal = quiet + Signals.tone(ms: 2000, amplitude: 0.3) + Signals.noise(ms: 2000, amplitude: 0.002, seed: 5)
        let events = run(signal) { at in
            switch at {
            case 1000..<1500: 0.9
            case 1500..<3000: 0.4
            default: 0.02
            }
        }
        let ends = events.compactMap { if case .ended(let end, _, _) = $0 { end } else { nil } }
        #expect(ends == [ms(4500)])
    }

    @Test func aVoiceTheDetectorIsSureOfNeedsLessLevelOnceSpeechHasStarted() throws {
        // A loud room (uniform noise, about -39 dBFS: its floor about -36). A voice 19 dB over
        // the floor for 120 ms, 9.5 dB over it for 600 ms, 19 dB for 100 ms, and 9.5 dB for 600 ms:
        // its soft parts under the margin speech starts at (12 dB), over the one a voice the
        // detector is sure of needs once started (6 dB). A running tap 10 dB under a sentence did
        // this, and the whole sentence was discarded as too short to be words.
        let room = { (ms: Int, seed: UInt64) in Signals.noise(ms: ms, amplitude: 0.02, seed: seed) }
        let loud = { (ms: Int, seed: UInt64) in mix(Signals.tone(ms: ms, amplitude: 0.2), room(ms, seed)) }
        let soft = { (ms: Int, seed: UInt64) in mix(Signals.tone(ms: ms, amplitude: 0.063), room(ms, seed)) }
        let voice = loud(120, 2) + soft(600, 3) + loud(100, 4) + soft(600, 5)  // 4000..<5420 ms
        let ends = { (events: [EndpointEvent]) in events.compactMap { if case .ended(let end, .silence, _) = $0 { end } else { nil } } }
        let sure = run(room(4000, 1) + voice + room(3000, 6)) { at in (4000..<5420).contains(at) ? 0.97 : 0.02 }
        let end = try #require(ends(sure).first, "expected one utterance, got \(sure)")
        #expect(ends(sure).count == 1)
        #expect(end >= ms(6920) && end <= ms(6960))
        // The detector only fairly sure (0.7): the soft parts are no voice, and what is left is
        // too short to be words, as before.
        let unsure = run(room(4000, 1) + voice + room(3000, 6)) { at in (4000..<5420).contains(at) ? 0.7 : 0.02 }
        #expect(unsure.contains { if case .discarded(_, .tooShort) = $0 { true } else { false } })
        #expect(ends(unsure).isEmpty)
        // Speech does not start at the lower margin: a soft voice alone is no utterance.
        let softOnly = run(room(4000, 1) + soft(1200, 3) + room(3000, 6)) { at in (4000..<5200).contains(at) ? 0.97 : 0.02 }
        #expect(softOnly.isEmpty)
        // Babble the detector is as sure of goes on after the voice at its soft level for 1.5 s: it
        // holds the turn open only 700 ms after the last loud syllable (4820 ms), then the silence
        // limit ends it.
        let babble = run(room(4000, 1) + voice + soft(1500, 7) + room(3000, 6)) { at in (4000..<6920).contains(at) ? 0.97 : 0.02 }
        let babbleEnd = try #require(ends(babble).first, "expected one utterance, got \(babble)")
        #expect(babbleEnd >= ms(7020) && babbleEnd <= ms(7060))
    }

    @Test func inAQuietRoomAVoiceTheDetectorIsSureOfStillNeedsTheMargin() throws {
        // A voice 42 dB over a quiet room for a second, then 300 ms of a sound 9 dB over it that
        // the detector is sure of (its last fading sounds): in a quiet room the margin is no
        // obstacle to a voice, and that tail does not delay the end.
        let quiet = { (ms: Int, seed: UInt64) in Signals.noise(ms: ms, amplitude: 0.002, seed: seed) }
        let tail = mix(Signals.tone(ms: 300, amplitude: 0.0063), quiet(300, 3))
        let events = run(quiet(1000, 1) + Signals.tone(ms: 1000, amplitude: 0.3) + tail + quiet(2000, 4)) { at in
            (1000..<2300).contains(at) ? 0.97 : 0.02
        }
        let ends = events.compactMap { if case .ended(let end, .silence, _) = $0 { end } else { nil } }
        #expect(ends.count == 1, "\(events.count) events")
        #expect(ends.allSatisfy { $0 >= ms(3500) && $0 <= ms(3540) }, "ended at \(ends.map { $0 / 16 }) ms")
    }
}

/// Two signals added sample by sample (the length of the shorter).
private func mix(_ a: [Int16], _ b: [Int16]) -> [Int16] {
    zip(a, b).map { Int16(clamping: Int($0) + Int($1)) }
}

@Suite("Endpointing with the recognizer's view of the words")
struct EndpointerCueTests {
    let background = Signals.noise(ms: 1000, amplitude: 0.002)
    /// One second of "speech", then a long silence.
    var sentence: [Int16] { background + Signals.tone(ms: 1000, amplitude: 0.3) + Signals.noise(ms: 2500, amplitude: 0.002, seed: 5) }

    private func end(_ events: [EndpointEvent]) -> (end: Int64, reason: EndpointEvent.EndReason, pause: Int64)? {
        for event in events { if case .ended(let end, let reason, let pause) = event { return (end, reason, pause) } }
        return nil
    }

    @Test func aLikelyEndCommitsAfterTheShortPause() throws {
        let ended = try #require(end(endpoints(sentence) { EndCue(through: $0, probability: 0.3) }))
        // The tone stops at 2000 ms; at the first 20 ms period that reaches likely_end_ms (300
        // ms) of silence, the words are judged a whole sentence.
        let likely = EndpointSettings().likelyEndMs
        #expect(ended.reason == .languageModel)
        #expect(ended.end == ms(2000 + likely))
        #expect(ended.pause == ms(likely))
    }

    @Test func anUnlikelyEndWaitsForTheSilenceLimit() throws {
        let ended = try #require(end(endpoints(sentence) { EndCue(through: $0, probability: 0.001) }))
        #expect(ended.reason == .silence)
        #expect(ended.end == ms(3500))
        #expect(ended.pause == ms(1500))
    }

    @Test func aThinkingPauseThenMoreWordsIsOneUtterance() {
        // "... and" (pause 800 ms) "... man": the first pause is judged unlikely, the second likely.
        let signal = background + Signals.tone(ms: 700, amplitude: 0.3) + Signals.noise(ms: 800, amplitude: 0.002, seed: 2)
            + Signals.tone(ms: 500, amplitude: 0.3) + Signals.noise(ms: 1500, amplitude: 0.002, seed: 3)
        let events = endpoints(signal) { position in
            EndCue(through: position, probability: position < ms(2500) ? 0.01 : 0.2)
        }
        #expect(events.count == 2)
        #expect(end(events)?.reason == .languageModel)
        #expect(end(events)?.end == ms(3000 + EndpointSettings().likelyEndMs))
    }

    @Test func aJudgementFromAnEarlierPauseDoesNotCount() throws {
        // The recognizer judged the first pause likely and then fell silent (it lags): its old
        // judgement must not end the second pause early. (The first pause is shorter than
        // likely_end_ms, so it does not end the utterance itself.)
        let signal = background + Signals.tone(ms: 700, amplitude: 0.3) + Signals.noise(ms: 180, amplitude: 0.002, seed: 2)
            + Signals.tone(ms: 500, amplitude: 0.3) + Signals.noise(ms: 1500, amplitude: 0.002, seed: 3)
        var judged = false
        let events = endpoints(signal) { position in
            guard !judged else { return nil }
            judged = true
            return EndCue(through: position, probability: 0.9)
        }
        let ended = try #require(end(events))
        #expect(ended.reason == .silence)
        #expect(ended.end == ms(2380 + 1500))
    }

    @Test func wordsThatAppearLateInThePauseDoNotEndIt() throws {
        // At 250 ms the words were "he might even have"; 560 ms into the pause the recognizer
        // turned the silence into "at hand", a likely end. The pause is a thinking pause.
        let ended = try #require(end(endpoints(sentence) { EndCue(through: $0, probability: $0 < ms(2560) ? 0.01 : 0.5) }))
        #expect(ended.reason == .silence)
    }

    @Test func withTheShortPauseOffOnlySilenceEnds() throws {
        var settings = EndpointSettings()
        settings.likelyEndMs = 0
        let ended = try #require(end(endpoints(sentence, settings: settings) { EndCue(through: $0, probability: 1) }))
        #expect(ended.reason == .silence)
    }

    @Test func theSilenceLimitStaysTheUpperBound() throws {
        var settings = EndpointSettings()
        settings.silenceMs = 200
        let ended = try #require(end(endpoints(sentence, settings: settings) { EndCue(through: $0, probability: 1) }))
        #expect(ended.reason == .silence)
        #expect(ended.end == ms(2200))
    }
}

@Suite("Endpointing with a voice in the background")
struct EndpointerBackgroundVoiceTests {
    let room = { (ms: Int, seed: UInt64) in Signals.noise(ms: ms, amplitude: 0.002, seed: seed) }

    /// A talker across the room, 20 dB under the person: 300 ms syllables and 200 ms gaps.
    func tv(ms: Int) -> [Int16] {
        var signal: [Int16] = []
        var seed: UInt64 = 100
        while signal.count < Signals.rate * ms / 1000 {
            signal += mix(Signals.tone(ms: 300, amplitude: 0.03, hz: 300), room(300, seed)) + room(200, seed + 1)
            seed += 2
        }
        return Array(signal.prefix(Signals.rate * ms / 1000))
    }

    /// The detector hears every voice, near or far: whatever is well above the room.
    private func run(_ signal: [Int16], settings: EndpointSettings) -> (events: [EndpointEvent], level: Float?) {
        var endpointer = Endpointer(settings: settings, sampleRate: Signals.rate)
        var events: [EndpointEvent] = []
        var position: Int64 = 0
        for period in Signals.periods(signal) {
            let level = Levels(measuring: period).rmsDB
            if let event = endpointer.process(period, at: position, rmsDB: level, speech: level > -45 ? 0.9 : 0.02) { events.append(event) }
            position += Int64(period.count)
        }
        return (events, endpointer.voiceLevelDB)
    }

    /// A person speaks; after 2 s the TV comes on; the person speaks again over it, and stops.
    /// (Under 3 s of a room without a voice before the TV, the first period setting the floor and
    /// not counted: it is not taken for a quieter person's, `aTVThatCameOnInAQuietRoomIsALeadInBeforeThePeoplesVoice`.)
    var room1: [Int16] {
        room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2) + tv(ms: 4000)
            + mix(Signals.tone(ms: 1000, amplitude: 0.3), tv(ms: 1000)) + tv(ms: 4000)
    }

    @Test func aVoiceWellUnderThePeoplesNeitherStartsNorKeepsAnUtterance() throws {
        let (events, level) = run(room1, settings: EndpointSettings())
        let ends = events.compactMap { if case .ended(let end, let reason, _) = $0 { (end, reason) } else { nil } }
        #expect(events.count == 4, "two utterances, the person's, and none of the TV's alone: \(events)")
        #expect(ends.map(\.1) == [.silence, .silence])
        // The second ends the silence limit after the person stops (at 9.5 s), the TV going on
        // after a pause of theirs, 20 dB under their own voice: it holds the turn no longer than
        // silence would. The level is judged over 300 ms, so the person's last 280 ms may linger.
        let second = try #require(ends.last).0
        #expect(second >= ms(11_000) && second <= ms(11_300), "ended at \(second / 16) ms")
        let learned = try #require(level)
        #expect(learned > -18 && learned < -12, "the tone at 0.3 of full scale is about -13.5 dBFS: \(learned)")
    }

    @Test func withTheGateOffTheTVIsSpeech() {
        var settings = EndpointSettings()
        settings.backgroundBelowDB = 0
        let (events, _) = run(room1, settings: settings)
        let started = events.filter { if case .started = $0 { true } else { false } }
        #expect(started.count >= 2)
        guard case .started(let start, _)? = started.dropFirst().first else { return }
        #expect(start < ms(9_000), "the TV alone started the second utterance, at \(start / 16) ms")
    }

    /// The lead-ins the endpointer found while hearing `signal` (`Endpointer.leadIn`, as each
    /// utterance ended or the signal did), and its events.
    private func leadIns(_ signal: [Int16]) -> (leadIns: [(cut: Int64, voice: Int64)?], events: [EndpointEvent]) {
        var endpointer = Endpointer(settings: EndpointSettings(), sampleRate: Signals.rate)
        var found: [(cut: Int64, voice: Int64)?] = []
        var events: [EndpointEvent] = []
        var position: Int64 = 0
        var current: (cut: Int64, voice: Int64)?
        for period in Signals.periods(signal) {
            let level = Levels(measuring: period).rmsDB
            let event = endpointer.process(period, at: position, rmsDB: level, speech: level > -45 ? 0.9 : 0.02)
            if let lead = endpointer.leadIn { current = lead }
            if let event {
                events.append(event)
                if case .ended = event {
                    found.append(current)
                    current = nil
                }
            }
            position += Int64(period.count)
        }
        return (found, events)
    }

    /// Before anyone has spoken (no level of the people's yet), a TV talks and holds the silence
    /// off until a person speaks 20 dB over it after one of its pauses: the utterance is the
    /// person's from where their voice began, and the accurate pass hears from a moment of the
    /// pause before it (or, where the TV ran on into the person, from just before them).
    @Test func aTVBeforeThePeoplesFirstWordsIsALeadInLeftOut() throws {
        let (found, events) = leadIns(room(1000, 1) + tv(ms: 3000) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2))
        #expect(found.count == 1, "one utterance: \(events)")
        let lead = try #require(found.first ?? nil, "the TV before the person is a lead-in")
        // The TV's last pause is 3.8-4.0 s; the person starts at 4.0 s.
        #expect(lead.voice == ms(4_000), "the person's voice from \(lead.voice / 16) ms")
        #expect(lead.cut == ms(3_800), "heard from \(lead.cut / 16) ms")
        // The TV's last word runs on into the person's first (its last pause 3.3-3.5 s, its word
        // to 3.8 s): heard from 100 ms before the person's first period louder than the TV.
        let (runOn, _) = leadIns(room(1000, 1) + tv(ms: 2800) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2))
        let intoThePerson = try #require(runOn.first ?? nil, "the TV before the person is a lead-in")
        #expect(intoThePerson.cut == ms(3_700) && intoThePerson.voice == ms(3_700), "heard from \(intoThePerson.cut / 16) ms")
    }

    /// A person's own soft first word (9.5 dB under the rest; or 20 dB under, but short: "No, …"),
    /// a pause, then the rest: all theirs. A cough 20 dB over a soft-spoken person's first
    /// sentence is not the people's voice beginning either. And once the people's level is known,
    /// a TV talking on starts no utterance that is kept, so nothing before a person is a lead-in.
    @Test func aSoftFirstWordACoughOrAKnownLevelMakesNoLeadIn() {
        let soft = room(1000, 1) + Signals.tone(ms: 300, amplitude: 0.1) + room(300, 3) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2)
        #expect(leadIns(soft).leadIns.allSatisfy { $0 == nil })
        let no = room(1000, 1) + Signals.tone(ms: 600, amplitude: 0.03) + room(300, 3) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2)
        #expect(leadIns(no).leadIns.allSatisfy { $0 == nil })
        let cough = room(1000, 1) + tv(ms: 2000) + Signals.tone(ms: 100, amplitude: 0.3) + tv(ms: 1500) + room(2000, 2)
        let (coughed, coughEvents) = leadIns(cough)
        #expect(coughed.count == 1 && coughed.allSatisfy { $0 == nil }, "\(coughEvents)")
        // (The TV came on in a quiet room and talked on: it was heard as a quieter person's until
        // the length limit, then as the background's.)
        let known = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(3000, 2) + tv(ms: 25_000) + Signals.tone(ms: 1500, amplitude: 0.3)
            + room(2000, 4)
        let (found, events) = leadIns(known)
        #expect(found.count == 2, "the person twice: \(events)")
        #expect(found.allSatisfy { $0 == nil })
    }

    /// A TV that comes on after a quiet room is heard as a quieter person's voice
    /// (`Endpointer.hearsQuietVoice`) until a person speaks over it after one of its pauses: the
    /// utterance is the person's from where their voice began, the TV's voice a lead-in.
    @Test func aTVThatCameOnInAQuietRoomIsALeadInBeforeThePeoplesVoice() throws {
        let signal = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(3000, 2) + tv(ms: 3000) + Signals.tone(ms: 1500, amplitude: 0.3)
            + room(2000, 4)
        let (found, events) = leadIns(signal)
        #expect(found.count == 2, "the person twice: \(events)")
        #expect(found.first.flatMap { $0 } == nil)
        let lead = try #require(found.last.flatMap { $0 })
        #expect(lead.voice >= ms(8_200) && lead.voice <= ms(8_500), "the person's voice from \(lead.voice / 16) ms")
    }

    @Test func aMomentOfTheBackgroundAsLoudAsThePeopleStartsNothingThatIsKept() throws {
        // The TV shouts for 100 ms (about -17 dBFS, within 12 dB of the person), then talks on
        // 20 dB under the person: the utterance it started is discarded, and the level stays.
        let signal = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2)
            + mix(Signals.tone(ms: 100, amplitude: 0.2, hz: 300), room(100, 3)) + tv(ms: 3000) + room(2000, 4)
        let (events, level) = run(signal, settings: EndpointSettings())
        #expect(events.count == 4, "\(events)")
        guard case .discarded(_, .underThePeople(let below, let speechMs))? = events.last else {
            Issue.record("the TV's utterance was kept, or discarded for another reason: \(events)")
            return
        }
        // Said as it is: the TV's level (about -40 dBFS in its loud periods) against the
        // person's (-10 dBFS), and the voiced length of its utterance (the shout and 3 s of talk).
        #expect(below > 20 && below < 40, "\(below) dB")
        #expect(speechMs > 1000 && speechMs <= 3100, "\(speechMs) ms")
        let learned = try #require(level)
        #expect(learned > -18, "learned from the person alone: \(learned)")
    }

    @Test func aRoomWithoutThePeopleForAWhileHearsQuieterVoicesAgain() {
        // The gate (12 dB under the person) falls 0.5 dB a second after 30 s: 40 s later it
        // has fallen 5 dB, and the TV (20 dB under the person, talking on) is still under it;
        // 90 s later it has fallen 30 dB, and the TV is heard. (The TV came on in a quiet room:
        // its first 20 s were heard as a quieter person's, up to the length limit, and discarded.)
        let person = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(3000, 2)
        let held = run(person + tv(ms: 40_000), settings: EndpointSettings()).events
        #expect(held.count == 4, "\(held)")
        if case .discarded(_, .quietVoiceNotAPerson)? = held.last {} else { Issue.record("the TV's first 20 s were kept: \(held)") }
        let fallen = run(person + tv(ms: 90_000), settings: EndpointSettings()).events
        #expect(fallen.count > 4, "\(fallen)")
    }

    /// Without a level learned, a TV that comes on right after the first person holds their
    /// utterance open to the length limit; after it, the TV is the background's, not a quieter
    /// person's (the room was not quiet).
    @Test func aTVThatHeldTheFirstUtteranceToTheLimitIsTheBackgroundAfter() {
        let person = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(300, 2)
        let events = run(person + tv(ms: 40_000), settings: EndpointSettings()).events
        #expect(events.count == 2, "\(events)")
    }

    /// A person, then, after `quiet` ms of a quiet room, a second one 20 dB quieter (under the
    /// gate) speaking `ms` with short gaps, then the room. The recognizer judges every pause a
    /// likely end. `mayHearQuietVoice`: as `TurnLogic` sets it (false while an end may be withdrawn).
    private func quieterPerson(after quiet: Int, ms: Int, mayHearQuietVoice: Bool = true) -> (events: [EndpointEvent], level: Float?) {
        quieter(room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(quiet, 2) + tv(ms: ms) + room(2500, 3), mayHearQuietVoice: mayHearQuietVoice)
    }

    private func quieter(_ signal: [Int16], mayHearQuietVoice: Bool = true) -> (events: [EndpointEvent], level: Float?) {
        var endpointer = Endpointer(settings: EndpointSettings(), sampleRate: Signals.rate)
        endpointer.mayHearQuietVoice = mayHearQuietVoice
        var events: [EndpointEvent] = []
        var position: Int64 = 0
        for period in Signals.periods(signal) {
            let level = Levels(measuring: period).rmsDB
            let cue = endpointer.wantsCue ? EndCue(through: position, probability: 1) : nil
            if let event = endpointer.process(period, at: position, rmsDB: level, speech: level > -45 ? 0.9 : 0.02, cue: cue) { events.append(event) }
            position += Int64(period.count)
        }
        return (events, endpointer.voiceLevelDB)
    }

    @Test func aQuieterPersonAfterAQuietRoomIsHeardAndEndsOnSilence() throws {
        // 4 s after the first person: 5 s of a room without a voice in all (3 s needed; the
        // person's voice is no evidence).
        let (events, level) = quieterPerson(after: 4000, ms: 2000)
        let ends = events.compactMap { if case .ended(let end, let reason, _) = $0 { (end, reason) } else { nil } }
        #expect(ends.count == 2, "both people: \(events)")
        // Not at the language model's cue (a TV's pauses are short), at the silence limit after
        // the quieter voice: it stops at 8.5 s (its last syllable ends 200 ms before).
        let second = try #require(ends.last)
        #expect(second.1 == .silence)
        #expect(second.0 >= ms(9_700) && second.0 <= ms(10_100), "ended at \(second.0 / 16) ms")
        // The people's level moved a quarter of the way to the quieter voice (-13.5 and -33.5
        // dBFS in their loud periods).
        let learned = try #require(level)
        #expect(learned > -21 && learned < -16, "\(learned)")
    }

    /// A TV that came on in a quiet room and talked on to the length limit (discarded), then
    /// stopped: a quiet voice after `quiet` ms is the background's until the room has been quiet
    /// for `Endpointer.quietRoomMs`.
    @Test(arguments: [(2000, false), (3500, true)])
    func aQuietVoiceSoonAfterTheBackgroundsIsStillUnderTheGate(quiet: Int, heard: Bool) {
        let signal = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(3000, 2) + tv(ms: 25_000) + room(quiet, 3) + tv(ms: 2000)
            + room(2500, 5)
        let events = run(signal, settings: EndpointSettings()).events
        #expect(events.count == (heard ? 6 : 4), "\(events)")
        if heard, case .ended(_, let reason, _)? = events.last { #expect(reason == .silence) } else if heard { Issue.record("\(events)") }
    }

    @Test func aQuietVoiceThatTalksOnToTheLengthLimitIsDiscardedAndTheGateHoldsAfter() throws {
        // A TV that came on in a quiet room, talking on for 30 s: held as a quieter person's
        // until max_speech_ms (20 s), then discarded; after it the TV is the background's.
        let (events, _) = quieterPerson(after: 4000, ms: 30_000)
        #expect(events.count == 4, "\(events)")
        guard case .discarded(let end, .quietVoiceNotAPerson(let speechMs))? = events.last else {
            Issue.record("the TV's utterance was kept, or discarded for another reason: \(events)")
            return
        }
        // max_speech_ms after it started (6.0 s, with the pre-roll)
        #expect(end >= ms(25_900) && end <= ms(26_200), "discarded at \(end / 16) ms")
        #expect(speechMs > 10_000, "\(speechMs) ms")
    }

    /// While the end of the person's utterance may still be withdrawn, a voice under the gate
    /// would be taken for them going on: the gate is not lifted for it.
    @Test func aQuietVoiceIsNotHeardWhileAnEndMayBeWithdrawn() {
        let (events, _) = quieterPerson(after: 4000, ms: 2000, mayHearQuietVoice: false)
        #expect(events.count == 2, "the first person only: \(events)")
    }

    /// A TV that came on in a quiet room and pauses for longer than `silence_ms` between phrases:
    /// its first phrase is heard as a quieter person's (a turn), and then the room was not
    /// quiet: its next phrases are the background's. (Without the quiet room starting again
    /// at its end, every phrase was a turn, and each moved the people's level towards the TV's.)
    @Test func aTVThatPausesMakesOneQuietTurnNotOneAPhrase() throws {
        var signal = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(3000, 2)
        for phrase in 0..<5 { signal += tv(ms: 1200) + room(1700, UInt64(10 + phrase)) }
        let (events, level) = quieter(signal + room(2500, 3))
        let ends = events.filter { if case .ended = $0 { true } else { false } }
        #expect(ends.count == 2, "the person and the TV's first phrase: \(events)")
        let learned = try #require(level)
        #expect(learned > -20, "\(learned)")
    }

    /// A quiet voice too short to be words (300 ms, a clatter) is discarded, and the room was not
    /// quiet: a quiet voice 2 s later is the background's.
    @Test func aShortQuietSoundIsDiscardedAndTheRoomIsNotQuietAfter() {
        let signal = room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(4000, 2) + Signals.tone(ms: 300, amplitude: 0.03, hz: 300)
            + room(2000, 4) + tv(ms: 2000) + room(2500, 3)
        let (events, _) = quieter(signal)
        #expect(events.count == 4, "\(events)")
        if case .discarded(_, .quietVoiceNotAPerson)? = events.last {} else { Issue.record("\(events)") }
    }

    /// The second utterance's end, and how much of a voice under the gate was left out of it.
    private func secondEnd(_ signal: [Int16]) -> (end: Int64, pause: Int64, tail: Int64)? {
        var endpointer = Endpointer(settings: EndpointSettings(), sampleRate: Signals.rate)
        var ends: [(Int64, Int64, Int64)] = []
        var position: Int64 = 0
        for period in Signals.periods(signal) {
            let level = Levels(measuring: period).rmsDB
            if case .ended(let end, _, let pause)? = endpointer.process(period, at: position, rmsDB: level, speech: level > -45 ? 0.9 : 0.02) {
                ends.append((end, pause, endpointer.lastBackgroundTail))
            }
            position += Int64(period.count)
        }
        return ends.count == 2 ? ends[1] : nil
    }

    /// The person's first sentence, which teaches the endpointer their level.
    var before: [Int16] { room(1000, 1) + Signals.tone(ms: 1500, amplitude: 0.3) + room(2000, 2) }

    @Test func aVoiceUnderTheGateAfterThePersonsLastWordsAndAPauseIsNotPartOfTheirUtterance() throws {
        // The person's second sentence ends at 6.0 s; 300 ms later the TV talks on, 20 dB under.
        let ended = try #require(secondEnd(before + Signals.tone(ms: 1500, amplitude: 0.3) + room(300, 3) + tv(ms: 4000) + room(2000, 4)))
        // The end comes the silence limit after the person (the TV, 20 dB under their own voice,
        // holds it no longer than silence would), and what the accurate pass hears stops where
        // the person's voice did: the TV's is pause.
        #expect(ended.end >= ms(7_500) && ended.end <= ms(7_800), "ended at \(ended.end / 16) ms")
        #expect(ended.end - ended.pause == ms(6_000), "the voice heard through \((ended.end - ended.pause) / 16) ms")
        #expect(ended.tail > ms(1_000), "\(ended.tail / 16) ms left out")
    }

    @Test func aPersonTrailingOffUnderTheGateWithoutAPauseIsKept() throws {
        // The second sentence's last second is 20 dB quieter, straight after its louder part.
        let ended = try #require(secondEnd(before + Signals.tone(ms: 1500, amplitude: 0.3) + Signals.tone(ms: 1000, amplitude: 0.03) + room(2000, 4)))
        #expect(ended.end - ended.pause == ms(7_000), "the voice heard through \((ended.end - ended.pause) / 16) ms")
        #expect(ended.tail == 0)
        // The whole silence limit after the quieter voice, not after the louder one.
        #expect(ended.end >= ms(8_500), "ended at \(ended.end / 16) ms")
    }

    @Test func aQuieterPersonsSoftWordAfterTheTVWithinTheSilenceLimitIsKept() throws {
        // The second person, 9.5 dB quieter than the first, stops; after 300 ms the TV talks on
        // without a break, 16.5 dB under them; 1.1 s after their voice they say one soft word, 8
        // dB under their own voice (under the gate): it holds the turn open, and is heard with the
        // TV's voice before it.
        let tv = mix(Signals.tone(ms: 800, amplitude: 0.015, hz: 300), room(800, 5))
        let ended = try #require(
            secondEnd(before + Signals.tone(ms: 1500, amplitude: 0.1) + room(300, 3) + tv + Signals.tone(ms: 200, amplitude: 0.04) + room(2000, 4)))
        #expect(ended.end - ended.pause == ms(7_300), "the voice heard through \((ended.end - ended.pause) / 16) ms")
        #expect(ended.tail == 0)
        #expect(ended.end >= ms(8_800), "ended at \(ended.end / 16) ms: the silence limit after the soft word")
    }

    @Test func aQuieterPersonsSoftWordsAfterAPauseAreKept() throws {
        // The second person is 9.5 dB quieter than the first; after a 300 ms pause their last
        // words are 20 dB under the first (under the gate) but within 12 dB of their own voice.
        let ended = try #require(
            secondEnd(before + Signals.tone(ms: 1500, amplitude: 0.1) + room(300, 3) + Signals.tone(ms: 800, amplitude: 0.03) + room(2000, 4)))
        #expect(ended.end - ended.pause == ms(7_100), "the voice heard through \((ended.end - ended.pause) / 16) ms")
        #expect(ended.tail == 0)
    }
}
