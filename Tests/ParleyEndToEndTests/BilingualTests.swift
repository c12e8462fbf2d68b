import Foundation
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyTesting
import Testing

/// Two people, two languages, the real engines: English from pocketsphinx-testdata, Spanish from
/// VoxForge (human speakers), heard with the Spanish model Parley ships.
@Suite("Both people heard, in file mode", .startsProcesses)
struct BilingualTests {
    let english = EndToEnd.testData
    let spanish = EndToEnd.spanishRecordings

    func transcript(_ clip: String) throws -> String {
        try String(contentsOfFile: "\(spanish)/\(clip).txt", encoding: .utf8)
    }

    /// Runs `clips` as one recording through parleyd with both models and returns the turns,
    /// oldest first.
    func run(_ clips: [String], mode: String, in dir: URL) async throws -> [TurnRecord] {
        let config = try EndToEnd.writeConfig(in: dir, extra: "[conversation]\nmode = \"\(mode)\"\n" + EndToEnd.spanishRecognizer)
        // Each person waits for Parley's spoken translation before speaking again: a recording
        // skips what Parley spoke over (see the echo guard), and a VoxForge sentence's
        // translation takes up to 8 s to say.
        let input = try EndToEnd.conversation(clips, gap: 12, in: dir)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20)
        return turns.reversed()
    }

    @Test func takingTurnsEveryTurnIsTranslatedIntoTheOtherLanguageAndSpanishWordsAreHeard() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let turns = try await run(
            ["\(english)/goforward.raw", "\(spanish)/es-0029.wav", "\(english)/something.raw", "\(spanish)/es-0027.wav"],
            mode: "alternate", in: dir)
        #expect(turns.map(\.speaker) == [.a, .b, .a, .b])
        #expect(turns.map(\.sourceLang) == ["en", "es", "en", "es"])
        #expect(turns.map(\.targetLang) == ["es", "en", "es", "en"])
        #expect(turns.allSatisfy { $0.status == .translated && $0.translatedText?.isEmpty == false })
        #expect(turns.first?.sourceText.contains("go forward") == true)
        // Spanish words recognised: most of what the VoxForge speakers read.
        for (turn, clip) in [(turns[safe: 1], "es-0029"), (turns[safe: 3], "es-0027")] {
            let heard = try #require(turn?.sourceText)
            let recall = EndToEnd.wordRecall(heard, reference: try transcript(clip))
            #expect(recall >= 0.6, "\(clip): heard \"\(heard)\" (\(Int(recall * 100)) % of the words)")
        }
        // The translation is English: Apertium's words, not the Spanish ones back.
        #expect(turns[safe: 1]?.translatedText?.lowercased().contains("perspective") == true)
    }

    @Test func inAutoModePeopleSpeakInAnyOrderAndEachTurnIsTheirs() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clips = [
            ("en", "\(english)/goforward.raw"), ("en", "\(english)/something.raw"),
            ("es", "\(spanish)/es-0028.wav"), ("es", "\(spanish)/es-0030.wav"),
            ("en", "\(english)/librivox/sense_and_sensibility_01_austen_64kb-0880.wav"), ("es", "\(spanish)/es-0031.wav"),
        ]
        let turns = try await run(clips.map(\.1), mode: "auto", in: dir)
        #expect(turns.map(\.speaker) == [.a, .a, .b, .b, .a, .b])
        #expect(turns.map(\.sourceLang) == clips.map(\.0))
        for turn in turns {
            let detection = try #require(turn.detection)
            #expect(detection.decidedBy == .audio, "turn \(turn.id): \(turn.sourceText)")
            let scores = detection.scores
            #expect(scores.count == 2 && (scores[turn.sourceLang] ?? -.infinity) > (scores[turn.targetLang] ?? .infinity))
            #expect(detection.rivalLanguage == turn.targetLang && detection.rivalText?.isEmpty == false)
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
