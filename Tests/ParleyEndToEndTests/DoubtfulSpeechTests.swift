import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyHistory
import ParleyProtocol
import ParleyRuntime

/// `[conversation] min_confidence` and `repeat_prompt`, end to end in file mode.
@Suite("Doubtful speech, end to end", .serialized, .startsProcesses)
struct DoubtfulSpeechTests {
    @Test func aDoubtfulTurnIsFlaggedAndTheSpeakerAskedToRepeat() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // No recognition is this sure, so every turn is doubtful.
        let config = try EndToEnd.writeConfig(in: dir, extra: "[conversation]\nmin_confidence = 0.999\nrepeat_prompt = true")
        let output = dir.appendingPathComponent("out.wav")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: output.path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 10)
        let turn = try #require(turns.first)
        #expect(turns.count == 1)
        #expect(turn.lowConfidence)
        #expect(turn.sourceText.contains("go forward"))
        #expect(turn.translatedText == nil)
        #expect(turn.error?.contains("repeat") == true)
        // What was played is the English prompt, for the English speaker.
        let (samples, _) = try EndToEnd.wavSamples(output)
        try EndToEnd.expectSpokenTranslation(samples, text: "Sorry, please say that again.", voice: "en", in: dir)
    }

    @Test func withoutThePromptADoubtfulTurnIsStillTranslatedButFlagged() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[conversation]\nmin_confidence = 0.999")
        let result = try EndToEnd.runFileMode(config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("o.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turn = try #require(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 1).first)
        #expect(turn.lowConfidence)
        #expect(turn.translatedText?.isEmpty == false)
    }

    // With the shipped `min_confidence` (the calibrated confidence, docs/benchmarks.md).

    /// Runs `input` through parleyd in one-way mode, English speaking, with the prompt on and
    /// the default minimum; returns the turns, oldest first.
    private func oneWayEnglish(_ input: String, in dir: URL) async throws -> [TurnRecord] {
        let config = try EndToEnd.writeConfig(in: dir, extra: "[conversation]\nmode = \"one-way\"\nrepeat_prompt = true")
        let result = try EndToEnd.runFileMode(config: config, input: input, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20).reversed()
    }

    @Test func byDefaultACleanSentenceIsNotFlaggedAndItsWordsAreKept() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let turns = try await oneWayEnglish("\(EndToEnd.testData)/goforward.raw", in: dir)
        let turn = try #require(turns.first)
        #expect(turns.count == 1)
        #expect(turn.sourceText.contains("go forward"))
        #expect(!turn.lowConfidence, "confidence \(turn.confidence ?? -1)")
        #expect(turn.translatedText?.isEmpty == false)
        let words = try #require(turn.info.words)
        #expect(words.map(\.text).joined(separator: " ") == turn.sourceText)
        #expect(words.allSatisfy { (0...1).contains($0.confidence) })
    }

    @Test func byDefaultTheOtherLanguageIsAskedToRepeat() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A Spanish speaker where Parley expects English.
        let turns = try await oneWayEnglish("\(EndToEnd.spanishRecordings)/es-0029.wav", in: dir)
        #expect(!turns.isEmpty)
        for turn in turns {
            #expect(turn.lowConfidence, "\(turn.sourceText): confidence \(turn.confidence ?? -1)")
            #expect(turn.translatedText == nil)
            #expect(turn.error?.contains("repeat") == true)
        }
    }

    @Test func byDefaultNoiseIsAskedToRepeat() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Two and a half seconds of loud white noise (a fixed seed) between silences.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var samples = [Int16](repeating: 0, count: 8_000)
        for _ in 0..<40_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            samples.append(Int16(truncatingIfNeeded: Int(state >> 33) % 20_000 - 10_000))
        }
        samples += [Int16](repeating: 0, count: 24_000)
        let input = dir.appendingPathComponent("noise.raw")
        try samples.withUnsafeBytes { try Data($0).write(to: input) }
        let turns = try await oneWayEnglish(input.path, in: dir)
        #expect(!turns.isEmpty, "the noise gave no turn to flag")
        for turn in turns {
            #expect(turn.lowConfidence, "\(turn.sourceText): confidence \(turn.confidence ?? -1)")
            #expect(turn.translatedText == nil)
        }
    }
}
