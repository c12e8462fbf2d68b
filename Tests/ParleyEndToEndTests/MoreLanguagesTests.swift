import Foundation
import ParleyTesting
import Testing
import ParleyCore
import ParleyHistory
@testable import ParleyProtocol
import ParleyTranslation

/// Issue 26: any two of en, es, fr, pt, it, ca, gl, heard by Whisper, translated by Apertium
/// (through a pivot where Debian has no pair), spoken by espeak-ng. Real engines throughout;
/// skipped, visibly, when the engines or the Apertium pairs are not installed.
enum OfflineLanguages {
    static let modes = "/usr/share/apertium/modes"

    static func installed(_ source: String, _ target: String) -> Bool {
        ApertiumTranslator.modeFile(for: LanguagePair(source, target), modesDirectory: modes) != nil
    }

    /// The pairs of `make deps` (DEBS) that these tests need.
    static let pairsInstalled = [("fr", "es"), ("es", "fr"), ("en", "es"), ("es", "en"), ("es", "pt"), ("pt", "es"), ("ca", "pt"), ("en", "ca")]
        .allSatisfy { installed($0.0, $0.1) }

    /// The route history should name for `source`-`target`, as the planner chooses it here.
    static func expectedRoute(_ source: String, _ target: String) -> String? {
        let planner = RoutePlanner(installed: { ApertiumTranslator.modeFile(for: $0, modesDirectory: modes) != nil })
        return planner.route(for: LanguagePair(source, target)).map { $0.via.map { "apertium via \($0)" } ?? "apertium" }
    }

    static let french = EndToEnd.repository + "/Tests/data/fr"
    static let portuguese = EndToEnd.repository + "/Tests/data/pt"
    static let spanish = EndToEnd.repository + "/Tests/data/es/fleurs"
    static let english = EndToEnd.repository + "/Tests/data/en"

    static func reference(_ path: String) throws -> String {
        try String(contentsOfFile: (path as NSString).deletingPathExtension + ".txt", encoding: .utf8)
    }

    /// A conversation in file mode between `a` and `b` (auto mode: Whisper tells who spoke),
    /// one clip after another with time for the translation to be spoken; its turns, oldest first.
    static func converse(a: String, b: String, clips: [(String, String)], extra: String = "") async throws -> (turns: [TurnRecord], stdout: String) {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: "[conversation]\nspeaker_a = \"\(a)\"\nspeaker_b = \"\(b)\"\nmode = \"auto\"\n" + EndToEnd.spanishRecognizer + "\n"
                + AccurateEngines.table + "\n" + extra)
        let input = try EndToEnd.conversation(clips.map(\.1), gap: 12, in: dir)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains(" error "), "stderr: \(result.stderr)")
        let history = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path)
        let turns = Array(try await history.recentTurns(limit: 20).reversed())
        // The spoken translations are in the output: seconds of sound, not silence.
        let (played, rate) = try EndToEnd.wavSamples(dir.appendingPathComponent("out.wav"))
        #expect(played.count > 2 * rate && played.contains { abs(Int($0)) > 3_000 }, "\(played.count) samples played")
        return (turns, result.stdout)
    }

    /// Checks each turn against its clip: language, speaker, words, translated, route.
    static func check(_ turns: [TurnRecord], clips: [(String, String)], speakers: [Speaker], a: String, b: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(turns.count == clips.count, "turns: \(turns.map(\.sourceText))", sourceLocation: sourceLocation)
        #expect(turns.map(\.sourceLang) == clips.map(\.0), sourceLocation: sourceLocation)
        #expect(turns.map(\.speaker) == speakers, sourceLocation: sourceLocation)
        for (turn, clip) in zip(turns, clips) {
            let target = clip.0 == a ? b : a
            #expect(turn.targetLang == target, sourceLocation: sourceLocation)
            #expect(turn.status == .translated && turn.translatedText?.isEmpty == false, "\(clip.1): \(turn.error ?? "")", sourceLocation: sourceLocation)
            #expect(turn.engine == "whisper-base" || (clip.0 == "en" && turn.engine == "moonshine-tiny"), sourceLocation: sourceLocation)
            #expect(turn.route == expectedRoute(clip.0, target), "\(clip.0)->\(target): \(turn.route ?? "no route")", sourceLocation: sourceLocation)
            let recall = EndToEnd.wordRecall(turn.sourceText, reference: try reference(clip.1))
            #expect(recall >= 0.6, "\(clip.1): heard \"\(turn.sourceText)\" (\(Int(recall * 100)) % of the words)", sourceLocation: sourceLocation)
        }
    }
}

@Suite(
    "More languages: conversations with the real engines", .startsProcesses,
    .enabled(if: AccurateEngines.installed, "run `make engines` first"),
    .enabled(if: OfflineLanguages.pairsInstalled, "install the Apertium pairs of `make deps` (apertium-fr-es, -es-pt, -por-cat, -eng-cat)"))
struct MoreLanguagesTests {
    @Test func aFrenchAndASpanishSpeakerAreEachHeardToldApartAndTranslated() async throws {
        let clips = [
            ("fr", "\(OfflineLanguages.french)/voxforge-Agoniste-fr-sb-496.wav"), ("es", "\(OfflineLanguages.spanish)/fleurs-es-006.wav"),
            ("fr", "\(OfflineLanguages.french)/voxforge-Agoniste-fr-sb-500.wav"), ("es", "\(OfflineLanguages.spanish)/fleurs-es-008.wav"),
        ]
        let (turns, _) = try await OfflineLanguages.converse(a: "fr", b: "es", clips: clips)
        try OfflineLanguages.check(turns, clips: clips, speakers: [.a, .b, .a, .b], a: "fr", b: "es")
        // Spanish and French words: "mundo" for "monde", "seguridad" for "sécurité".
        #expect(turns.first?.translatedText?.lowercased().contains("mundo") == true, "\(turns.first?.translatedText ?? "")")
    }

    @Test func anEnglishAndAPortugueseSpeakerAreTranslatedThroughAPivot() async throws {
        // Debian has no English-Portuguese pair: both directions go through Spanish or Catalan.
        #expect(OfflineLanguages.expectedRoute("en", "pt")?.contains(" via ") == true)
        #expect(OfflineLanguages.expectedRoute("pt", "en")?.contains(" via ") == true)
        let clips = [
            ("en", "\(OfflineLanguages.english)/cathy-a0122.wav"), ("pt", "\(OfflineLanguages.portuguese)/voxforge-LeonardodeJesus-199.wav"),
            ("en", "\(OfflineLanguages.english)/vctk-p238_165.wav"), ("pt", "\(OfflineLanguages.portuguese)/voxforge-LeonardodeJesus-201.wav"),
        ]
        let (turns, _) = try await OfflineLanguages.converse(a: "en", b: "pt", clips: clips)
        try OfflineLanguages.check(turns, clips: clips, speakers: [.a, .b, .a, .b], a: "en", b: "pt")
        // "passamos pelo parque para chegar em casa": a park and a house, in English.
        let park = turns.count > 1 ? turns[1].translatedText?.lowercased() ?? "" : ""
        #expect(park.contains("park") && (park.contains("home") || park.contains("house")), "\(park)")
    }
}

/// A live daemon whose pair changes while it runs, and one that lacks a pair.
@Suite(
    "More languages: changing the pair while running", .startsProcesses,
    .enabled(if: OfflineLanguages.pairsInstalled, "install the Apertium pairs of `make deps` (apertium-fr-es, -es-pt, -por-cat, -eng-cat)"))
struct PairSwitchTests {
    func start(in dir: URL, extra: String = "") async throws -> (daemon: Process, log: URL, run: ([String]) throws -> EndToEnd.Output) {
        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 32_000).write(to: silence)
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: silence.path, played: dir.appendingPathComponent("played.raw").path,
            extraConfig: "[transcriber]\nenabled = false\n" + extra)
        let parley = try EndToEnd.binary("parley")
        return (daemon, log, { try EndToEnd.run(parley, $0 + ["--socket", socket], in: dir, timeout: 60) })
    }

    @Test func setSpeakerBChangesThePairAndItsRouteFromTheNextTurn() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (daemon, log, parley) = try await start(in: dir)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        try #require(daemon.isRunning, "parleyd did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let decoder = JSONDecoder()

        let before = try decoder.decode(TurnInfo.self, from: Data(try parley(["say", "--speaker", "a", "--json", "the house is red"]).stdout.utf8))
        #expect(before.targetLang == "es" && before.route == "apertium", "\(before)")

        let set = try parley(["set", "--speaker-b", "pt", "--json"])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains(#""speaker_b" : "pt""#), "\(set.stdout)")
        let after = try decoder.decode(TurnInfo.self, from: Data(try parley(["say", "--speaker", "a", "--json", "the house is red"]).stdout.utf8))
        #expect(after.targetLang == "pt" && after.route == OfflineLanguages.expectedRoute("en", "pt"), "\(after)")
        #expect(after.translatedText?.lowercased().contains("casa") == true, "\(after.translatedText ?? "")")
        let back = try decoder.decode(TurnInfo.self, from: Data(try parley(["say", "--speaker", "b", "--json", "a casa é vermelha"]).stdout.utf8))
        #expect(back.sourceLang == "pt" && back.targetLang == "en" && back.route == OfflineLanguages.expectedRoute("pt", "en"), "\(back)")
        #expect(back.translatedText?.lowercased().contains("house") == true, "\(back.translatedText ?? "")")

        // `languages` shows the pair in use, its routes, and fits 80 columns.
        let table = try parley(["languages"])
        #expect(table.status == 0, "\(table.stderr)")
        for line in table.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        // Portuguese is marked in use, and its row of routes says how English gets there.
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("*") && $0.contains(" pt ") }, "\(table.stdout)")
        #expect(lines.contains { $0.hasPrefix("en ") && $0.split(separator: " ").count == 8 }, "\(table.stdout)")
        let info = try decoder.decode(LanguagesInfo.self, from: Data(try parley(["languages", "--json"]).stdout.utf8))
        #expect(info.directions?.first { $0.source == "en" && $0.target == "pt" }?.route == OfflineLanguages.expectedRoute("en", "pt"))
        #expect(info.languages.first { $0.code == "pt" }?.inUse == true)
        let country = try parley(["languages", "--country", "JP"])
        #expect(country.status == 0 && country.stdout.contains("Japanese (ja)") && country.stdout.contains("LibreTranslate"), "\(country.stdout)")
        #expect(try parley(["languages", "--country", "XX"]).status == 2)
    }

    @Test func aPairThatIsNotInstalledIsRefusedWithWhatToInstallAndThePairInUseGoesOn() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Apertium with English-Spanish only.
        let modes = dir.appendingPathComponent("modes")
        try FileManager.default.createDirectory(at: modes, withIntermediateDirectories: true)
        for mode in ["eng-spa", "spa-eng"] {
            try FileManager.default.createSymbolicLink(
                atPath: modes.appendingPathComponent("\(mode).mode").path, withDestinationPath: "\(OfflineLanguages.modes)/\(mode).mode")
        }
        let (daemon, log, parley) = try await start(in: dir, extra: "[translator]\napertium_modes = \"\(modes.path)\"\n")
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        try #require(daemon.isRunning, "parleyd did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")

        let refused = try parley(["set", "--speaker-b", "fr"])
        #expect(refused.status == 1)
        #expect(refused.message.contains("apt-get install apertium-fr-es"), "\(refused.stderr)")
        #expect(refused.message.split(separator: "\n").count == 1, "\(refused.stderr)")
        // Nothing changed: English-Spanish is still served.
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(try parley(["say", "--speaker", "a", "--json", "the house is red"]).stdout.utf8))
        #expect(turn.targetLang == "es" && turn.status == .translated && turn.route == "apertium", "\(turn)")
        let table = try parley(["languages"]).stdout
        #expect(table.contains("apertium-fr-es"), "\(table)")
        for line in table.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
    }
}
