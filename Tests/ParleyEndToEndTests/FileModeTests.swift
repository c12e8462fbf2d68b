import Foundation
import Logging
import ParleyCore
import ParleyDaemon
import ParleyTesting
import Testing
@testable import ParleyHistory

/// parleyd --input/--output: the whole pipeline, real engines, on real recordings.
@Suite("File mode, end to end", .serialized, .startsProcesses)
struct FileModeTests {
    @Test func goForwardIsHeardTranslatedSpokenAndLogged() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir)
        let output = dir.appendingPathComponent("out.wav")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: output.path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("go forward"))

        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 10)
        try #require(turns.count == 1)
        let turn = turns[0]
        #expect(turn.sourceText.contains("go forward"))
        #expect(turn.speaker == .a && turn.sourceLang == "en" && turn.targetLang == "es")
        let translation = try #require(turn.translatedText)
        #expect(!translation.isEmpty)
        #expect(turn.status == .translated)
        #expect(turn.responseMs != nil && turn.asrMs != nil && turn.mtMs != nil)
        // The calibrated confidence of a clean sentence: over the default minimum, not a constant.
        let confidence = try #require(turn.confidence)
        #expect(confidence >= 0.5 && confidence < 1)
        #expect(!turn.lowConfidence)

        let (samples, rate) = try EndToEnd.wavSamples(output)
        EndToEnd.expectSpeechLike(samples, rate: rate)
        // What was played is the translation spoken, as long as espeak-ng's own rendering of it.
        try EndToEnd.expectSpokenTranslation(samples, text: translation, voice: "es", in: dir)
    }

    /// The daemon built and run in the test's own process (`Daemon.build`), as `@main` runs it.
    @Test func theDaemonRunsInProcess() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir)
        let options = DaemonOptions(
            configPath: config.path, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("out.wav").path)
        do {
            // Its history is closed once the built daemon is gone.
            let daemon = try await Daemon.build(options, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            try await daemon.run()
        }
        let history = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path)
        let turns = try await history.recentTurns(limit: 10)
        try #require(turns.count == 1)
        #expect(turns[0].sourceText.contains("go forward"))
        #expect(turns[0].translatedText?.isEmpty == false)
        #expect(try await history.export().sessions.allSatisfy { $0.endedAt != nil }, "the session is ended once the daemon has run")
    }

    @Test func twoUtterancesInOneRecordingAreTwoTurns() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // goforward, two seconds of silence, numbers: assembled from the real recordings.
        var audio = try Data(contentsOf: URL(fileURLWithPath: "\(EndToEnd.testData)/goforward.raw"))
        audio.append(Data(count: 16_000 * 2 * 2))
        audio.append(try Data(contentsOf: URL(fileURLWithPath: "\(EndToEnd.testData)/numbers.raw")))
        audio.append(Data(count: 16_000 * 2))
        let input = dir.appendingPathComponent("two.raw")
        try audio.write(to: input)
        let config = try EndToEnd.writeConfig(in: dir)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 10)
        // Speaker B (Spanish) has no speech model, so both utterances are A's.
        #expect(turns.count == 2)
        #expect(turns.last?.sourceText.contains("go forward") == true)
        #expect(turns.first?.sourceText.contains("three") == true)
        #expect(turns.allSatisfy { $0.speaker == .a && $0.translatedText?.isEmpty == false })
    }

    @Test func speakersAlternateWhenBothCanBeHeard() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // B's side borrows the English model: both languages on one decoder cannot be told apart
        // by what is heard, so the default auto mode takes turns. The point here is who speaks
        // when, not what B's words mean (BilingualTests hears real Spanish).
        let english = "/usr/share/pocketsphinx/model/en-us"
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: """
                [recognizer.es]
                acoustic_model = "\(english)/en-us"
                language_model = "\(english)/en-us.lm.bin"
                dictionary = "\(english)/cmudict-en-us.dict"
                """)
        var audio = Data()
        for name in ["goforward", "numbers", "something"] {
            audio.append(try Data(contentsOf: URL(fileURLWithPath: "\(EndToEnd.testData)/\(name).raw")))
            audio.append(Data(count: 16_000 * 2 * 3))  // 3 s between people
        }
        let input = dir.appendingPathComponent("conversation.raw")
        try audio.write(to: input)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 10)
        let oldestFirst = Array(turns.reversed())
        #expect(oldestFirst.map(\.speaker) == [.a, .b, .a])
        #expect(oldestFirst.map(\.sourceLang) == ["en", "es", "en"])
        #expect(oldestFirst.first?.sourceText.contains("go forward") == true)
    }

    @Test func anUnknownConfigKeyStopsStartUpWithOneLine() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[audio]\ncapture_devise = \"hw:0\"")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("o.wav").path, in: dir)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(result.stderr.contains("capture_devise"))
    }

    @Test func aMissingModelFileStopsStartUp() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[recognizer.en]\ndictionary = \"/nonexistent/cmudict.dict\"")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("o.wav").path, in: dir)
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/cmudict.dict"))
    }

    @Test func aRecordingInTheWrongFormatSaysHowToConvertIt() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("8k.wav")
        let sox = try EndToEnd.run(
            "/usr/bin/sox", ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", "\(EndToEnd.testData)/goforward.raw", "-r", "8000", input.path], in: dir)
        try #require(sox.status == 0, "sox: \(sox.stderr)")
        let config = try EndToEnd.writeConfig(in: dir)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("o.wav").path, in: dir)
        #expect(result.status != 0)
        #expect(result.stderr.contains("sox"))
        #expect(result.stderr.contains("16000"))
    }

    @Test func inputWithoutOutputIsAUsageError() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try EndToEnd.run(try EndToEnd.binary("parleyd"), ["--input", "x.wav"], in: dir)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--input and --output go together"))
    }
}

/// `[voice.<lang>]` and the IPA of each translation, end to end.
@Suite("Speech output settings, end to end", .serialized, .startsProcesses)
struct SpeechOutputTests {
    @Test func aFasterRateSpeaksTheSameWordsInLessTimeAndTheIPAIsKept() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[voice.es]\nrate = 350")
        let output = dir.appendingPathComponent("out.wav")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: output.path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turn = try #require(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 1).first)
        let translation = try #require(turn.translatedText)
        // Twice espeak-ng's own 175 words per minute: well under its default rendering.
        let played = EndToEnd.trimmingSilence(try EndToEnd.wavSamples(output).samples)
        let reference = EndToEnd.trimmingSilence(try EndToEnd.espeakReference(translation, voice: "es", in: dir))
        let ratio = Double(played.count) / Double(reference.count)
        #expect(ratio > 0.35 && ratio < 0.75, "rate 350 played \(played.count) samples against \(reference.count) at 175")
        // The pronunciation is espeak-ng's own IPA for the translation.
        let ipa = try #require(turn.ipa)
        let expected = try EndToEnd.run("/usr/bin/espeak-ng", ["-q", "--ipa", "-v", "es", translation], in: dir).stdout
        #expect(ipa.filter { !$0.isWhitespace } == expected.filter { !$0.isWhitespace })
    }

    @Test func anUnknownVoiceStopsStartUp() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[voice.es]\nvoice = \"no-such-voice\"")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("o.wav").path, in: dir)
        #expect(result.status == 2)
        #expect(result.stderr.contains("no-such-voice"))
    }
}
