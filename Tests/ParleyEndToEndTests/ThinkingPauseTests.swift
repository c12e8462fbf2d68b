import Foundation
import ParleyTesting
import Testing
@testable import ParleyHistory

/// The end of a turn on real recordings, real engines, file mode: a thinking pause where the
/// sentence cannot end keeps it whole, and a whole sentence is answered after a short pause.
@Suite("Thinking pauses, end to end", .serialized, .startsProcesses)
struct ThinkingPauseTests {
    static let librivox = "\(EndToEnd.testData)/librivox/sense_and_sensibility_01_austen_64kb-"

    /// The recording `id` with `pause` seconds of its own room tone inserted at `cut`, and 2 s
    /// of room tone after it.
    static func withPause(_ id: String, at cut: Double, pause: Double, in directory: URL) throws -> String {
        let source = librivox + id + ".wav"
        let parts = ["a", "b", "tone", "pause", "tail"].map { directory.appendingPathComponent("\(id)-\($0).wav").path }
        let steps: [[String]] = [
            [source, parts[0], "trim", "0", "\(cut)"],
            [source, parts[1], "trim", "\(cut)"],
            [source, parts[2], "trim", "0", "0.1", "repeat", "30"],
            [parts[2], parts[3], "trim", "0", "\(pause)"],
            [parts[2], parts[4], "trim", "0", "2"],
        ]
        for step in steps {
            let made = try EndToEnd.run("/usr/bin/sox", step, in: directory)
            try #require(made.status == 0, "sox: \(made.stderr)")
        }
        let output = directory.appendingPathComponent("\(id)-paused.wav").path
        let joined = try EndToEnd.run("/usr/bin/sox", [parts[0], parts[3], parts[1], parts[4], output], in: directory)
        try #require(joined.status == 0, "sox: \(joined.stderr)")
        return output
    }

    func turns(of input: String, in directory: URL, config extra: String = "") async throws -> [TurnRecord] {
        let config = try EndToEnd.writeConfig(in: directory, extra: extra)
        let result = try EndToEnd.runFileMode(config: config, input: input, output: directory.appendingPathComponent("out.wav").path, in: directory)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return try await AppDatabase.open(path: directory.appendingPathComponent("history.sqlite").path).recentTurns(limit: 10)
    }

    @Test(arguments: [("0880", 0.97, "not"), ("0890", 2.40, "and")])
    func aSecondOfThinkingWhereTheSentenceCannotEndKeepsItWhole(id: String, cut: Double, word: String) async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = try Self.withPause(id, at: cut, pause: 1.0, in: dir)
        let turns = try await turns(of: input, in: dir)
        #expect(turns.count == 1, "a pause after \"\(word)\" cut the sentence: \(turns.map(\.sourceText))")
        #expect(turns.first?.endedBy != nil)
        // The same recording with the old fixed 700 ms of silence is cut at the pause: its first
        // turn ends there (the rest is a second turn, or lost under Parley's reply).
        let old = dir.appendingPathComponent("fixed")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        let fixed = try await self.turns(of: input, in: old, config: "[endpoint]\nsilence_ms = 700\nlikely_end_ms = 0\n")
        let whole = EndToEnd.words(turns.first?.sourceText ?? "")
        let cut = EndToEnd.words(fixed.last?.sourceText ?? "")
        #expect(cut.count < whole.count - 2, "700 ms did not cut \(whole) (\(fixed.map(\.sourceText)))")
    }

    @Test func aWholeSentenceIsAnsweredAfterAShortPause() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // "he was not an ill disposed young man", then silence.
        let input = try Self.withPause("0880", at: 0.97, pause: 0, in: dir)
        let turns = try await turns(of: input, in: dir)
        let turn = try #require(turns.first)
        #expect(turns.count == 1)
        #expect(turn.sourceText.hasSuffix("young man"))
        #expect(turn.endedBy == "language_model")
        let pause = try #require(turn.pauseMs)
        #expect(pause >= 200 && pause < 500, "answered after \(pause) ms of silence")
    }
}
