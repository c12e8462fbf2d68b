import Foundation
import ParleyAudio
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyRecognition
import ParleyTesting
import Testing

/// Rooms that never fall silent, with the real engines: Silero VAD (which comes with Moonshine's
/// library), Moonshine and Whisper. The noise beds are real: eight-talker babble and a kitchen
/// (Tests/data/SPEECH-NOTICE.md). Skipped, visibly, when the engines are not installed.
@Suite("A noisy room, real engines", .enabled(if: AccurateEngines.installed, "run `make engines` first"), .startsProcesses)
struct NoisyRoomTests {
    let english = EndToEnd.repository + "/Tests/data/en"
    let noise = EndToEnd.repository + "/Tests/data/noise"
    static let library = AccurateEngines.folder + "/moonshine/moonshine_voice/libmoonshine.so"

    /// The share of 20 ms periods Silero calls speech (probability ≥ 0.5).
    func speechShare(_ samples: [Int16], _ detector: SileroDetector) throws -> Double {
        var speech = 0
        var judged = 0
        for start in stride(from: 0, to: samples.count - 320, by: 320) {
            guard let probability = try detector.speechProbability(after: Array(samples[start..<(start + 320)])) else { continue }
            judged += 1
            speech += probability >= 0.5 ? 1 : 0
        }
        return judged == 0 ? 0 : Double(speech) / Double(judged)
    }

    /// `audio` fed to an endpointer in 20 ms periods as the capture loop feeds them: the detector
    /// judges only the periods loud enough to start speech while silent (`CaptureLoop.judge`,
    /// `TurnLogic`'s threshold) and every period in speech, and skips the rest. What the
    /// endpointer decided, and how many of how many periods were judged.
    func fedAsCaptured(_ audio: [Int16], to detector: SileroDetector) throws -> (events: [EndpointEvent], judged: Int, periods: Int) {
        var endpointer = Endpointer(sampleRate: 16_000)
        var judgeAbove: Float = -.infinity
        var events: [EndpointEvent] = []
        var judged = 0
        var periods = 0
        for start in stride(from: 0, through: audio.count - 320, by: 320) {
            periods += 1
            let frame = Array(audio[start..<(start + 320)])
            let level = Levels(measuring: frame).rmsDB
            var speech: Float? = 0
            if level > judgeAbove {
                speech = try detector.speechProbability(after: frame)
                judged += 1
            } else {
                detector.skip(frame, room: true)
            }
            if let event = endpointer.process(frame, at: SampleTime(start), rmsDB: level, speech: speech) { events.append(event) }
            judgeAbove = endpointer.phase == .silence ? endpointer.thresholdDB : -.infinity
        }
        return (events, judged, periods)
    }

    /// The RMS of `x`.
    static func rms(_ x: [Double]) -> Double { (x.reduce(0) { $0 + $1 * $1 } / Double(max(1, x.count))).squareRoot() }

    @Test func sileroHearsVoicesAndNotAKitchen() throws {
        let detector = try SileroDetector(library: Self.library)
        let (speech, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(english)/cathy-a0122.wav"))
        let (kitchen, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(noise)/dishes.wav"))
        let spoken = try speechShare(speech, detector)
        detector.reset()
        let clatter = try speechShare(kitchen, detector)
        #expect(spoken > 0.5, "speech judged speech in \(Int(spoken * 100)) % of periods")
        #expect(clatter < 0.05, "the kitchen judged speech in \(Int(clatter * 100)) % of periods")
    }

    /// A person 28-30 dB over a quiet room (speechocean762: English read by a Mandarin speaker),
    /// after half a second of that room, fed as the capture loop feeds them: the detector judges
    /// only the periods loud enough to be speech and skips the rest (`CaptureLoop.judge`,
    /// `TurnLogic` asks for judgements above the endpointer's threshold while silent). Given those
    /// loud periods alone, stitched together, Silero heard no voice in this person's 7.8 s, and no
    /// speech started; hearing the room before each (`SileroDetector.runUpSamples`), it does.
    @Test func aVoiceOverAQuietRoomStartsSpeechWhenOnlyItsLoudPeriodsAreJudged() throws {
        let detector = try SileroDetector(library: Self.library)
        let path = EndToEnd.repository + "/Tests/data/en-nonnative/speechocean762-9600-096000003.wav"
        let (voice, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: path))
        let room = Array(voice.prefix(1600))
        let audio = Array(repeatElement(room, count: 5).joined()) + voice
        let (events, judged, periods) = try fedAsCaptured(audio, to: detector)
        let started = events.compactMap { if case .started(let at, _) = $0 { at } else { nil } }
        #expect(judged < periods, "every period was judged: the test does not skip the quiet ones")
        #expect(!started.isEmpty, "no speech started in 7.8 s of a voice 28-30 dB over the room")
    }

    @Test func aMissingLibraryIsAClearError() {
        #expect(throws: VoiceActivityError.self) { try SileroDetector(library: "/nowhere/libmoonshine.so") }
        do {
            _ = try SileroDetector(library: "/nowhere/libmoonshine.so")
        } catch {
            #expect(error.description.contains("make engines"))
        }
    }

    /// A person over a running tap 6 dB under their voice (Speech Commands' running_tap; the
    /// recording, its silences included, and the tap at their RMS levels: about 9 dB under
    /// the voice itself), fed as the capture loop feeds them, through the
    /// real Silero: the detector is sure of the voice throughout, but only a few of its periods
    /// stand the margin (12 dB) over the tap. They were all that counted, and the sentence was
    /// discarded as too short to be words; once speech has started in so loud a room, a voice
    /// the detector is sure of needs 6 dB (`Endpointer.sureMarginDB`) for a while after a loud
    /// syllable, and the sentence is an utterance whose voice runs well into it.
    @Test func aSentenceOverALoudTapIsAnUtteranceNotASoundDiscarded() throws {
        let detector = try SileroDetector(library: Self.library)
        let (voice, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(english)/vctk-p301_102.wav"))
        let (tap, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(noise)/tap.wav"))
        let rate = 16_000
        let speech = [Int16](repeating: 0, count: 4 * rate) + voice + [Int16](repeating: 0, count: 3 * rate)
        let gain = Self.rms(voice.map(Double.init)) / pow(10, 6.0 / 20) / max(1, Self.rms(tap.map(Double.init)))
        let audio = speech.enumerated().map { index, sample in
            Int16(clamping: Int((Double(sample) + Double(tap[index % tap.count]) * gain).rounded()))
        }
        let events = try fedAsCaptured(audio, to: detector).events
        let kinds = events.map { event -> String in
            switch event {
            case .started(let at, _): "started at \(at * 1000 / SampleTime(rate)) ms"
            case .ended(let end, let reason, let pause): "ended at \(end * 1000 / SampleTime(rate)) ms (\(reason), pause \(pause * 1000 / SampleTime(rate)) ms)"
            case .discarded(let end, let reason): "discarded at \(end * 1000 / SampleTime(rate)) ms (\(reason))"
            }
        }
        let ended = events.compactMap { if case .ended(let end, _, let pause) = $0 { end - pause } else { nil } }
        #expect(ended.count == 1, "\(kinds)")
        #expect(!events.contains { if case .discarded = $0 { true } else { false } }, "\(kinds)")
        // Its voice runs well into the sentence (1.3-3.2 s of the recording: 5.3-7.2 s here), not
        // just the loud syllables at its start, and the tap does not hold it on.
        #expect(ended.allSatisfy { $0 >= SampleTime(rate) * 63 / 10 && $0 <= SampleTime(rate) * 76 / 10 }, "\(kinds)")
    }

    /// A room: quiet for `bedFrom` seconds (1), then `bed` comes on and never stops; the first
    /// clip comes at 4 s, each clip (brought to one level, about -26 dBFS) followed by `gap`
    /// seconds of the bed alone (the next person waits for Parley's spoken translation), then
    /// `tail` seconds more; the bed `snr` dB below the speech. A clip `quieter` names is
    /// `quieterDB` under the others (a person further away).
    func room(
        _ clips: [String], bed: [Int16], snr: Double, gap: Double = 10, tail: Double = 0, bedFrom: Double = 1, quieter: Set<String> = [],
        quieterDB: Double = 0, in dir: URL
    ) throws -> URL {
        let rate = 16_000.0
        let level = 0.05 * 32_768
        let rms = Self.rms
        var speech = [Double](repeating: 0, count: Int(4 * rate))
        for clip in clips {
            let samples = try EndToEnd.wavSamples(URL(fileURLWithPath: clip)).samples.map(Double.init)
            let gain = level / max(1, rms(samples)) / (quieter.contains(clip) ? pow(10, quieterDB / 20) : 1)
            speech += samples.map { $0 * gain } + [Double](repeating: 0, count: Int(gap * rate))
        }
        speech += [Double](repeating: 0, count: Int(tail * rate))
        let noise = bed.map(Double.init)
        let gain = level / pow(10, snr / 20) / max(1, rms(noise))
        let mixed = speech.enumerated().map { index, sample in
            Int16(clamping: Int((sample + (index < Int(bedFrom * rate) ? 0 : noise[index % noise.count] * gain)).rounded()))
        }
        let url = dir.appendingPathComponent("room.raw")
        try WAV.encodeSamples(mixed).write(to: url)
        return url
    }

    func reference(_ path: String) throws -> String {
        try String(contentsOfFile: (path as NSString).deletingPathExtension + ".txt", encoding: .utf8)
    }

    @Test(arguments: ["babble", "dishes"])
    func everySentenceIsOneTurnAndTheNoiseAloneNone(_ bed: String) async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clips = ["vctk-p238_165", "cathy-a0122", "vctk-p301_102"].map { "\(english)/\($0).wav" }
        let input = try room(clips, bed: try EndToEnd.wavSamples(URL(fileURLWithPath: "\(noise)/\(bed).wav")).samples, snr: 15, in: dir)
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"one-way\"\n" + AccurateEngines.table + "\n[log]\nlevel = \"debug\"")
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("voice detector"), "stderr: \(result.stderr)")
        let said = result.stderr.split(separator: "\n").filter { $0.contains("speech ") || $0.contains("sound discarded") }
        let turns = Array(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20).reversed())
        try #require(turns.count == clips.count, "turns: \(turns.map(\.sourceText)); endpoints: \(said)")
        for (turn, clip) in zip(turns, clips) {
            let recall = EndToEnd.wordRecall(turn.sourceText, reference: try reference(clip))
            #expect(recall >= 0.6, "\(clip): heard \"\(turn.sourceText)\" (\(Int(recall * 100)) % of the words)")
            #expect(turn.status == .translated)
        }
    }

    @Test(arguments: ["babble", "dishes"])
    func noiseThatComesOnAndStaysMakesNoTurn(_ bed: String) async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Only the bed, as loud as in the room above: 1 s quiet, then 23 s of it.
        let input = try room([], bed: try EndToEnd.wavSamples(URL(fileURLWithPath: "\(noise)/\(bed).wav")).samples, snr: 15, tail: 20, in: dir)
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"one-way\"\n" + AccurateEngines.table + "\n[log]\nlevel = \"debug\"")
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20)
        let said = result.stderr.split(separator: "\n").filter { $0.contains("speech ") || $0.contains("sound discarded") }
        #expect(turns.isEmpty, "turns: \(turns.map(\.sourceText)); endpoints: \(said)")
    }

    /// A TV across the room: one voice at a time (two French recordings, one after the other,
    /// with their own pauses), 15 dB under the people, on from the first person's first word.
    /// Each sentence is one turn of its own words (the TV's did not run into it), and the TV
    /// alone makes no turn. (With `[endpoint] background_below_db = 0`, before the
    /// gate, the TV made turns of its own and ran into the sentences: bench/scene.py, "talker".)
    @Test func aVoiceAcrossTheRoomMakesNoTurnAndHoldsNoneOpen() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let french = EndToEnd.repository + "/Tests/data/fr"
        let talker = try ["voxforge-Agoniste-fr-sb-496", "voxforge-Agoniste-fr-sb-500"].flatMap {
            try EndToEnd.wavSamples(URL(fileURLWithPath: "\(french)/\($0).wav")).samples
        }
        let clips = ["vctk-p238_165", "cathy-a0122", "vctk-p301_102"].map { "\(english)/\($0).wav" }
        let input = try room(clips, bed: talker, snr: 15, gap: 8, tail: 4, bedFrom: 4, in: dir)
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"one-way\"\n" + AccurateEngines.table + "\n[log]\nlevel = \"debug\"")
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let said = result.stderr.split(separator: "\n").filter { $0.contains("speech ") || $0.contains("sound discarded") }
        let turns = Array(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20).reversed())
        try #require(turns.count == clips.count, "turns: \(turns.map(\.sourceText)); endpoints: \(said)")
        for (turn, clip) in zip(turns, clips) {
            let reference = try reference(clip)
            let recall = EndToEnd.wordRecall(turn.sourceText, reference: reference)
            #expect(recall >= 0.6, "\(clip): heard \"\(turn.sourceText)\" (\(Int(recall * 100)) % of the words)")
            // Little beyond the sentence: the TV's words did not run into it.
            let extra = turn.sourceText.split(separator: " ").count - reference.split(separator: " ").count
            #expect(extra <= 3, "\(clip): heard \"\(turn.sourceText)\"; endpoints: \(said)")
        }
    }

    /// A person, then another 14 dB quieter (further away; speechocean762 learners read 12-20 dB
    /// under the reader before them), after Parley's reply and a quiet room. The second is under
    /// the gate for voices in the background (`background_below_db`, 12 dB under the people
    /// heard so far) and lost every word to it, without a notice; after a quiet room a voice
    /// under the gate is heard as a quieter person's (`Endpointer.hearsQuietVoice`). (16 dB under,
    /// over babble 40 dB under the people, Silero called the learner speech in under 1 % of the
    /// periods, and nothing started: a voice that soft is beyond the detector, docs/benchmarks.md.)
    @Test func aQuieterPersonAfterAQuietRoomIsHeard() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let learner = EndToEnd.repository + "/Tests/data/en-nonnative/speechocean762-9600-096000003.wav"
        let clips = ["\(english)/vctk-p238_165.wav", learner]
        let babble = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(noise)/babble.wav")).samples
        let input = try room(clips, bed: babble, snr: 45, gap: 8, quieter: [learner], quieterDB: 14, in: dir)
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"one-way\"\n" + AccurateEngines.table + "\n[log]\nlevel = \"debug\"")
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let said = result.stderr.split(separator: "\n").filter { $0.contains("speech ") || $0.contains("discarded") || $0.contains("quieter") }
        let turns = Array(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20).reversed())
        try #require(turns.count == clips.count, "turns: \(turns.map(\.sourceText)); endpoints: \(said)")
        let first = EndToEnd.wordRecall(turns[0].sourceText, reference: try reference(clips[0]))
        #expect(first >= 0.6, "heard \"\(turns[0].sourceText)\" (\(Int(first * 100)) % of the words)")
        // The learner's words as well as Moonshine hears the recording alone, at its own level
        // (an accent it hears badly: "Oh, you're new, you're", AccurateHearingTests).
        let alone = try AccurateEngines.moonshine(timeoutMs: 30_000).transcribe(
            try EndToEnd.wavSamples(URL(fileURLWithPath: learner)).samples, TranscriptionRequest(language: "en")
        ).text
        let reference = try reference(learner)
        let (heard, engine) = (EndToEnd.wordRecall(turns[1].sourceText, reference: reference), EndToEnd.wordRecall(alone, reference: reference))
        #expect(heard >= engine - 0.15, "heard \"\(turns[1].sourceText)\" (\(Int(heard * 100)) %); alone \"\(alone)\" (\(Int(engine * 100)) %)")
        #expect(result.stderr.contains("heard as a quieter person's"), "endpoints: \(said)")
    }

    /// Pink noise from a fixed seed (Paul Kellet's filter over white noise): a room tone like
    /// bench/turn-end.py's.
    static func pinkNoise(seconds: Double) -> [Int16] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var (b0, b1, b2) = (0.0, 0.0, 0.0)
        return (0..<Int(seconds * 16_000)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let white = Double(Int64(bitPattern: state) >> 11) / Double(1 << 52)
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            return Int16(clamping: Int(((b0 + b1 + b2 + white * 0.1848) * 3_000).rounded()))
        }
    }

    /// A soft, accented learner over a room tone (speechocean762-9613-096130001, pink noise 14 dB
    /// under her): a noisy room, whose English Whisper hears first. Whisper does not trust its
    /// words on her (an average log-probability of -1.2 to -1.4 at 6-15 dB, its no-speech
    /// probability 0.11-0.20: sure someone spoke), and its worker drops them; the turn was
    /// "nothing recognized", 5-7 of 24 learners live. Moonshine hears her; the turn has its words.
    @Test func aVoiceWhisperCouldNotMakeOutIsHeardByMoonshine() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let learner = EndToEnd.repository + "/Tests/data/en-nonnative/speechocean762-9613-096130001.wav"
        let input = try room([learner], bed: Self.pinkNoise(seconds: 30), snr: 14, gap: 4, bedFrom: 0, in: dir)
        let config = try EndToEnd.writeConfig(in: dir, extra: AccurateEngines.table + "\n[log]\nlevel = \"debug\"")
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let said = result.stderr.split(separator: "\n").filter { !$0.contains("sl-") && !$0.contains("state") }
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20)
        try #require(turns.count == 1, "turns: \(turns.map(\.sourceText)); log: \(said)")
        #expect(turns[0].sourceLang == "en")
        #expect(result.stderr.contains("whisper-base did not trust its words"), "log: \(said)")
        // Her words as well as Moonshine hears the same room alone ("I wound up to see the water.").
        let alone = try AccurateEngines.moonshine(timeoutMs: 30_000).transcribe(
            WAV.decodeSamples(try Data(contentsOf: input)[...]), TranscriptionRequest(language: "en")
        ).text
        let reference = try reference(learner)
        let (heard, engine) = (EndToEnd.wordRecall(turns[0].sourceText, reference: reference), EndToEnd.wordRecall(alone, reference: reference))
        #expect(engine >= 0.5, "Moonshine alone heard \"\(alone)\"")
        #expect(heard >= engine - 0.15, "heard \"\(turns[0].sourceText)\" (\(Int(heard * 100)) %); alone \"\(alone)\" (\(Int(engine * 100)) %)")
    }
}
