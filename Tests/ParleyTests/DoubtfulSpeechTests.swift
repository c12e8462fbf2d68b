import Foundation
import Testing
@testable import ParleyHistory

/// `[conversation] min_confidence` and `repeat_prompt`, end to end in file mode.
@Suite("Doubtful speech, end to end", .serialized)
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
}
