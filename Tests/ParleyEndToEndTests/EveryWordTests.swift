import Foundation
import ParleyAudio
import ParleyHistory
import ParleyTesting
import Testing

/// Every word kept: whatever the turn plumbing decides (where a turn ends, what Parley says
/// meanwhile), every word a person said reaches the history, in file mode with the real engines.
/// Sentences of speakers Parley was never tuned to (Tests/data/SPEECH-NOTICE.md) are joined with
/// pauses of 200-900 ms, as one person speaking on after a pause; some of those pauses end a
/// turn, and the person goes on while Parley answers. Skipped, visibly, without the engines.
@Suite("Every word kept, real engines", .enabled(if: AccurateEngines.installed, "run `make engines` first"), .startsProcesses)
struct EveryWordTests {
    let english = EndToEnd.repository + "/Tests/data/en"
    let spanish = EndToEnd.repository + "/Tests/data/es/fleurs"

    @Test func spanishSentencesJoinedWithPausesAllArrive() async throws {
        try await expectEveryWord(
            ["fleurs-es-006", "fleurs-es-007", "fleurs-es-008", "fleurs-es-009"].map { "\(spanish)/\($0).wav" }, pausesMs: [300, 600, 900],
            language: "es")
    }

    @Test func englishSentencesJoinedWithPausesAllArrive() async throws {
        try await expectEveryWord(
            ["cathy-a0122", "vctk-p301_102", "vctk-p238_165"].map { "\(english)/\($0).wav" }, pausesMs: [200, 500, 800], language: "en")
    }

    /// The recording that fleurs-es-007 is: its turn ends at a pause after "a Miller" (the
    /// language model takes it for the end), and the rest, "que fue a quien le relató la
    /// historia", is said while Parley answers. It used to be skipped as audio Parley spoke over.
    @Test func wordsSaidWhileParleyAnswersAreHeard() async throws {
        try await expectEveryWord(["\(spanish)/fleurs-es-007.wav"], pausesMs: [], language: "es")
    }

    /// fleurs-es-009 pauses to think after "una cultura específica de" (900 ms after
    /// fleurs-es-008 here): the language model took that pause for the end, the reply went out
    /// and "forma parte de un extenso grupo…" became a turn of its own (live, it was talked
    /// over). The words end on "de que", which no sentence ends on: the answer waits for the
    /// silence limit, the reader goes on within it, and the sentence is one turn.
    @Test func aThinkingPauseAfterAWordNoSentenceEndsOnKeepsTheSentenceWhole() async throws {
        let turns = try await run(["fleurs-es-008", "fleurs-es-009"].map { "\(spanish)/\($0).wav" }, pausesMs: [900])
        let texts = turns.map(\.sourceText)
        #expect(turns.count == 2, "turns: \(texts)")
        let last = texts.last.map(EndToEnd.words) ?? []
        #expect(last.contains("definir") && last.contains("sociedad"), "turns: \(texts)")
    }

    /// A Spanish reader who stops to think for a second after a word where the sentence cannot
    /// end, a cut of Tests/data/thinking-pauses-es.txt ("Duval, que está casado y tiene | dos
    /// hijos…"). The language model took each pause for the end, and the reply cut the sentence
    /// in two (19 of 30 such pauses of 0.6-1.0 s stayed whole); Whisper's words at the pause end
    /// without a stop, so the answer now waits for the silence limit and the reader goes on
    /// within it.
    @Test(arguments: ["fleurs-es-007", "es-0029", "es-0031"])
    func aSpanishThinkingPauseKeepsTheSentenceWhole(recording: String) async throws {
        let list = try String(contentsOfFile: EndToEnd.repository + "/Tests/data/thinking-pauses-es.txt", encoding: .utf8)
        let cut = try #require(
            list.split(separator: "\n").map { $0.split(separator: " ") }.first { $0.first.map(String.init) == recording }, "\(recording) in the list")
        let seconds = try #require(cut.count == 3 ? Double(cut[1]) : nil)
        let folder = recording.hasPrefix("fleurs") ? spanish : EndToEnd.repository + "/Tests/data/es/voxforge"
        let path = "\(folder)/\(recording).wav"
        let (audio, rate) = try EndToEnd.wavSamples(URL(fileURLWithPath: path))
        try #require(rate == 16_000)
        let at = min(audio.count, Int(seconds * 16_000))
        let tone = Array(audio.prefix(1_600))
        let samples = Self.roomTone(tone, ms: 500) + audio[..<at] + Self.roomTone(tone, ms: 1_000) + audio[at...] + Self.roomTone(tone, ms: 3_000)
        let turns = try await turns(of: samples)
        let texts = turns.map(\.sourceText)
        #expect(turns.count == 1, "a second's pause after \"\(cut[2])\" cut the sentence: \(texts)")
        let reference = try String(contentsOfFile: (path as NSString).deletingPathExtension + ".txt", encoding: .utf8)
        let heard = texts.joined(separator: " ")
        #expect(EndToEnd.wordRecall(heard, reference: reference) >= 0.75, "heard \(texts)")
        let tail = EndToEnd.words(reference).suffix(4).joined(separator: " ")
        #expect(EndToEnd.wordRecall(heard, reference: tail) >= 0.5, "\"\(tail)\" lost: \(texts)")
    }

    /// Learners reading English word by word, pausing 0.5-0.9 s between words
    /// (speechocean762-9646-096460002, "A quick jump over the widening | gap saved him"; -9615-096150005,
    /// "But she had left that life | behind now too", 14 s): the language model took such a pause
    /// for the end, Moonshine's words looked whole ("A quarter drop of water."), and the reply
    /// cut the sentence in two. Their words came at about 1.5-2 syllables a second, so the answer
    /// waits for the silence limit (`SlowSpeech`), and the reader goes on within it.
    /// Heard as bench/every-word.py hears a recording alone: whole, with silence before and after.
    /// (Trimmed and in its room tone, -9615-096150005 loses its first 9 s to both engines' loops,
    /// and session 54 saw that under load: docs/benchmarks.md, "Nothing recognized under load";
    /// so the test counts turns, not words. Under `stress-ng --cpu 2` both cases still gave two
    /// turns without the rule and one with it.)
    @Test(arguments: ["speechocean762-9646-096460002", "speechocean762-9615-096150005"])
    func aLearnerReadingWordByWordKeepsTheSentenceWhole(recording: String) async throws {
        let (audio, rate) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(EndToEnd.repository)/Tests/data/en-nonnative/\(recording).wav"))
        try #require(rate == 16_000)
        let turns = try await turns(of: [Int16](repeating: 0, count: 8_000) + audio + [Int16](repeating: 0, count: 32_000))
        let texts = turns.map(\.sourceText)
        #expect(turns.count == 1, "a pause between words cut the sentence: \(texts)")
        #expect(turns.allSatisfy { $0.sourceLang == "en" }, "\(turns.map { "\($0.sourceLang): \($0.sourceText)" })")
    }

    /// The turns file mode in auto mode makes of `clips`, trimmed to their speech and joined
    /// with `pausesMs` of their own room tone (3 s after the last), oldest first.
    private func run(_ clips: [String], pausesMs: [Int]) async throws -> [TurnRecord] {
        var samples: [Int16] = []
        var tone: [Int16] = []
        for (index, clip) in clips.enumerated() {
            let (audio, rate) = try EndToEnd.wavSamples(URL(fileURLWithPath: clip))
            try #require(rate == 16_000)
            let speech = Self.trimmedToSpeech(audio)
            if tone.isEmpty {
                tone = Array(audio.prefix(1_600))
                samples += Self.roomTone(tone, ms: 1_000)
            }
            samples += speech
            samples += Self.roomTone(tone, ms: index < pausesMs.count ? pausesMs[index] : 3_000)
        }
        return try await turns(of: samples)
    }

    /// The turns file mode in auto mode (English and Spanish, the real engines) makes of
    /// `samples`, oldest first.
    private func turns(of samples: [Int16]) async throws -> [TurnRecord] {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("joined.raw")
        try WAV.encodeSamples(samples).write(to: input)
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"auto\"\n" + EndToEnd.spanishRecognizer + "\n" + AccurateEngines.table)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return Array(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 50).reversed())
    }

    /// Runs `clips`, trimmed to their speech and joined with `pausesMs` of their own room tone,
    /// through file mode in auto mode, and checks that the turns together hold every clip's
    /// words, its last words included, in `language`.
    private func expectEveryWord(_ clips: [String], pausesMs: [Int], language: String) async throws {
        let turns = try await run(clips, pausesMs: pausesMs)
        let heard = turns.map(\.sourceText).joined(separator: " ")
        // Who spoke, on every turn of four words or more. (A two-word fragment split off at a
        // pause, "forma parte", was once heard as English "For my part": who spoke on short
        // fragments is issue 36's item 4, still open.)
        let long = turns.filter { EndToEnd.words($0.sourceText).count >= 4 }
        #expect(long.allSatisfy { $0.sourceLang == language }, "turns: \(turns.map { "\($0.sourceLang): \($0.sourceText)" })")
        let references = try clips.map { try String(contentsOfFile: ($0 as NSString).deletingPathExtension + ".txt", encoding: .utf8) }
        // Whisper alone hears 85-95 % of these words; a sentence heard in two parts loses a
        // few more to the shorter context (fleurs-es-007's tail alone: "que fue aquí en la").
        let whole = EndToEnd.wordRecall(heard, reference: references.joined(separator: " "))
        #expect(whole >= 0.75, "heard \(Int(whole * 100)) % of the words: \(turns.map(\.sourceText))")
        for (clip, reference) in zip(clips, references) {
            // Its last six words: where a turn cut short loses them (all of them, or all but one
            // or two a later turn shares: 0-33 % before issue 36). Whisper mishears some on a
            // long utterance ("hielo o polvo" as "elopolvo"), so half is the bar.
            let tail = EndToEnd.words(reference).suffix(6).joined(separator: " ")
            let kept = EndToEnd.wordRecall(heard, reference: tail)
            #expect(kept >= 0.5, "\((clip as NSString).lastPathComponent): \"\(tail)\" lost; heard \(turns.map(\.sourceText))")
        }
    }

    /// `audio` from 100 ms before its first loud period to 150 ms after its last (20 ms periods
    /// within 35 dB of the loudest).
    static func trimmedToSpeech(_ audio: [Int16]) -> [Int16] {
        let period = 320
        let levels = stride(from: 0, to: audio.count - period, by: period).map { start in
            Levels(measuring: Array(audio[start..<start + period])).rmsDB
        }
        guard let loudest = levels.max() else { return audio }
        let loud = levels.indices.filter { levels[$0] > loudest - 35 }
        guard let first = loud.first, let last = loud.last else { return audio }
        let start = max(0, first * period - 1_600)
        let end = min(audio.count, (last + 1) * period + 2_400)
        return Array(audio[start..<end])
    }

    /// `ms` of `tone` (a recording's own room tone), repeated.
    static func roomTone(_ tone: [Int16], ms: Int) -> [Int16] {
        let count = ms * 16
        guard !tone.isEmpty else { return [Int16](repeating: 0, count: count) }
        return (0..<count).map { tone[$0 % tone.count] }
    }
}
