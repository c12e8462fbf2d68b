import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyProtocol

/// A live parleyd whose only backend is an APy server that is not running yet.
@Suite("Translation: every backend failing, end to end", .serialized, .startsProcesses)
struct TranslationEndToEndTests {
    @Test func anUntranslatedTurnIsKeptAnnouncedAndRetriedOnceAServerIsUp() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 32_000).write(to: silence)
        let played = dir.appendingPathComponent("played.raw")
        let port = try freeLoopbackPort()
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: silence.path, played: played.path,
            extraConfig: """
                [translator]
                backends = ["apertium-apy"]
                deadline_ms = 1500
                [translator.apertium-apy]
                url = "http://127.0.0.1:\(port)"
                timeout_ms = 1000
                """)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        try #require(daemon.isRunning, "parleyd did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let parley = try EndToEnd.binary("parley")
        func parleyRun(_ arguments: [String]) throws -> EndToEnd.Output {
            try EndToEnd.run(parley, arguments + ["--socket", socket], in: dir, timeout: 60)
        }
        let decoder = JSONDecoder()

        // At start, parleyd says the configured server does not answer.
        var warned = false
        for _ in 0..<100 where !warned {
            warned = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("translation backend apertium-apy does not answer")
            if !warned { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(warned, "no warning at start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")

        // Nothing listens on the APy port: the turn is stored untranslated, with the error.
        let said = try parleyRun(["say", "--speaker", "a", "--json", "the house is red"])
        #expect(said.status == 0, "\(said.stderr)")
        let turn = try decoder.decode(TurnInfo.self, from: Data(said.stdout.utf8))
        #expect(turn.status == .untranslated && turn.translatedText == nil)
        #expect(turn.error?.contains("apertium-apy") == true, "\(turn.error ?? "no error")")

        // The speaker hears the notice in English, and the conversation goes on.
        var state = ""
        for _ in 0..<100 where state != "listening" {
            try await Task.sleep(for: .milliseconds(100))
            let status = try parleyRun(["status", "--json"])
            state = (try? decoder.decode(StatusInfo.self, from: Data(status.stdout.utf8)).state) ?? ""
        }
        #expect(state == "listening")
        let audio = try Data(contentsOf: played)
        let samples = audio.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        try EndToEnd.expectSpokenTranslation(samples, text: "Sorry, I could not translate that.", voice: "en", in: dir)

        // Retrying while the server is still down fails and says so.
        let early = try parleyRun(["retry", "\(turn.id)"])
        #expect(early.status == 1)
        #expect(early.message.contains("still untranslated"), "\(early.stderr)")

        // Once APy is up on that port, the retry translates the turn and history has it.
        let server = try await ApyServer(port: port)
        let retried = try parleyRun(["retry", "--json", "\(turn.id)"])
        #expect(retried.status == 0, "\(retried.stderr)")
        let updated = try decoder.decode(TurnInfo.self, from: Data(retried.stdout.utf8))
        #expect(updated.status == .translated && updated.error == nil)
        #expect(updated.translatedText?.lowercased().contains("casa") == true, "\(updated.translatedText ?? "nil")")
        let history = try decoder.decode([TurnInfo].self, from: Data(try parleyRun(["history", "--json"]).stdout.utf8))
        #expect(history.first { $0.id == turn.id }?.translatedText == updated.translatedText)
        #expect(try parleyRun(["retry", "\(turn.id)"]).message.contains("already translated"))
        #expect(try parleyRun(["retry", "99999"]).status == 1)

        // `languages` shows what can be heard, spoken and translated, and through what.
        let listed = try parleyRun(["languages", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let languages = try decoder.decode(LanguagesInfo.self, from: Data(listed.stdout.utf8))
        let english = try #require(languages.languages.first { $0.code == "en" })
        let spanish = try #require(languages.languages.first { $0.code == "es" })
        #expect(english.hearable && english.speakable && spanish.speakable)
        #expect(english.to.contains(.init(language: "es", backends: ["apertium-apy"])))
        #expect(spanish.from.contains(.init(language: "en", backends: ["apertium-apy"])))
        // With the model each hearable language is heard with.
        let model = try #require(english.model)
        #expect(model.origin == "Debian pocketsphinx-en-us")
        #expect(model.languageModel == "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")
        #expect((model.acousticModelBytes ?? 0) > 1_000_000 && (model.languageModelBytes ?? 0) > 1_000_000 && (model.dictionaryBytes ?? 0) > 0)
        #expect(listed.stdout.contains("\"acoustic_model_bytes\""))
        let table = try parleyRun(["languages"]).stdout
        // The matrix: English to Spanish by the APy server ("apy"), and the model's files.
        let english2Spanish = table.split(separator: "\n").first { $0.hasPrefix("en ") && $0.contains(" . ") }
        #expect(table.contains("LANG") && english2Spanish?.split(separator: " ").dropFirst(2).first == "apy", "\(table)")
        #expect(table.contains("en live words (PocketSphinx): Debian pocketsphinx-en-us") && table.contains("MiB)"), "\(table)")
        for line in table.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        withExtendedLifetime(server) {}
    }
}
