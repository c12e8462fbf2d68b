import Foundation
import ParleyCore
import ParleyHistory
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyProtocol
@testable import ParleyTranslation

/// Bergamot as `make engines` installs it: the worker, the models, fxtranslate.
enum BergamotEngine {
    static let engines = EndToEnd.repository + "/.build/engines"
    static let folder = engines + "/bergamot"

    static var installed: Bool {
        [folder + "/parley-bergamot", folder + "/models/en-pt/model.enpt.intgemm.alphas.bin", folder + "/models/pt-en/model.pten.intgemm.alphas.bin",
         folder + "/python/fxtranslate/__init__.py", "/usr/bin/python3"]
            .allSatisfy { FileManager.default.fileExists(atPath: $0) }
    }

    /// The Apertium pairs these tests join Bergamot to.
    static let pairsInstalled = [("en", "es"), ("es", "en"), ("es", "pt"), ("pt", "es")].allSatisfy { OfflineLanguages.installed($0.0, $0.1) }

    /// The config table that turns Bergamot on from this build's engines.
    static var table: String { "[translator]\nengines = \"\(engines)\"" }
}

/// The lines a chain logs when it falls back.
final class FallbackLines: Sendable {
    let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
}

@Suite(
    "Bergamot, for real: the worker, its models, and Apertium behind it", .serialized, .startsProcesses,
    .enabled(if: BergamotEngine.installed, "run make engines first"),
    .enabled(if: BergamotEngine.pairsInstalled, "install the Apertium pairs of `make deps` (apertium-eng-spa, apertium-es-pt)"))
struct BergamotEndToEndTests {
    let modes = OfflineLanguages.modes

    /// The chain parleyd builds: Bergamot's routes, then Apertium's own; a deadline far above
    /// the work (the tests are about what fails, not how fast).
    func chain(_ bergamot: BergamotTranslator, log: FallbackLines) throws -> TranslatorChain {
        let apertium = try ApertiumTranslator(pairs: [LanguagePair("pt", "es"), LanguagePair("es", "pt")], modesDirectory: modes)
        return TranslatorChain(
            [
                .init(name: "bergamot", translator: RoutedTranslator(engines: [.apertium: apertium, .bergamot: bergamot], home: .bergamot, requiring: .bergamot)),
                .init(name: "apertium", translator: RoutedTranslator(base: apertium)),
            ], timing: .init(deadline: .seconds(120)), cacheCapacity: 0, fellBack: { line in log.lines.withLock { $0.append(line) } })
    }

    /// Whether `pid` has exited (a zombie, or gone); false after `seconds`, a guard against a hung test only.
    static func exited(_ pid: pid_t, within seconds: Double = 60) async -> Bool {
        await ApertiumTranslatorTests.exited([pid], within: seconds)
    }

    @Test func translatesEnglishToPortugueseAndBack() async throws {
        let bergamot = BergamotTranslator(folder: BergamotEngine.folder)
        let portuguese = try await bergamot.translate("The house is red and the dog is big.", from: "en", to: "pt")
        #expect(portuguese.lowercased().contains("casa") && portuguese.lowercased().contains("vermelha"), "\(portuguese)")
        let english = try await bergamot.translate("Onde fica a estação de comboios? A casa é vermelha.", from: "pt", to: "en")
        #expect(english.lowercased().contains("station") && english.lowercased().contains("house"), "\(english)")
        // One worker for both directions, kept warm.
        #expect(try await bergamot.translate("Good morning", from: "en", to: "pt").lowercased().contains("bom dia"))
        #expect(await bergamot.starts == 1)
        #expect(try await bergamot.availablePairs() == [LanguagePair("en", "pt"), LanguagePair("pt", "en")])
        #expect(bergamot.supports(LanguagePair("en", "pt")) && !bergamot.supports(LanguagePair("en", "fr")))
    }

    @Test func englishToSpanishGoesThroughBergamotThenApertium() async throws {
        let log = FallbackLines()
        let chain = try chain(BergamotTranslator(folder: BergamotEngine.folder), log: log)
        let turn = try await chain.translateNamingRoute("Two years ago I gave up civilization for this.", from: "en", to: "es")
        #expect(turn.route == "bergamot en-pt + apertium pt-es")
        #expect(turn.text.lowercased().contains("años") && turn.text.lowercased().contains("civilización"), "\(turn.text)")
        let back = try await chain.translateNamingRoute("La casa es roja.", from: "es", to: "en")
        #expect(back.route == "apertium es-pt + bergamot pt-en")
        #expect(back.text.lowercased().contains("house"), "\(back.text)")
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test func aKilledWorkerFallsBackToApertiumAndTheNextRequestGoesToAFreshWorker() async throws {
        let log = FallbackLines()
        let bergamot = BergamotTranslator(folder: BergamotEngine.folder)
        let chain = try chain(bergamot, log: log)
        #expect(try await chain.translateNamingRoute("The house is red.", from: "en", to: "es").route == "bergamot en-pt + apertium pt-es")
        let worker = try #require(await bergamot.workerProcess)
        #expect(kill(worker, SIGKILL) == 0)
        #expect(await Self.exited(worker), "the killed worker is still running")
        // The turn is not lost: Apertium translates it, and one line says why.
        let turn = try await chain.translateNamingRoute("The dog is big.", from: "en", to: "es")
        #expect(turn.route == "apertium" && turn.text.lowercased().contains("perro"), "\(turn)")
        #expect(log.all.count == 1 && log.all.first?.contains("bergamot failed") == true && log.all.first?.contains("killed by signal 9") == true, "\(log.all)")
        // The next one goes to a fresh worker.
        let next = try await chain.translateNamingRoute("The cat is small.", from: "en", to: "es")
        #expect(next.route == "bergamot en-pt + apertium pt-es" && next.text.lowercased().contains("gato"), "\(next)")
        #expect(await bergamot.starts == 2)
        #expect(await bergamot.workerProcess != worker)
    }

    @Test func aHungWorkerIsGivenUpFallsBackAndTheNextRequestGoesToAFreshWorker() async throws {
        let log = FallbackLines()
        // A sentence takes tens of milliseconds: 10 s is far above it, on any machine.
        let bergamot = BergamotTranslator(folder: BergamotEngine.folder, timeoutMs: 10_000)
        let chain = try chain(bergamot, log: log)
        #expect(try await chain.translateNamingRoute("The house is red.", from: "en", to: "es").route == "bergamot en-pt + apertium pt-es")
        let worker = try #require(await bergamot.workerProcess)
        #expect(kill(worker, SIGSTOP) == 0)
        let turn = try await chain.translateNamingRoute("The dog is big.", from: "en", to: "es")
        #expect(turn.route == "apertium" && turn.text.lowercased().contains("perro"), "\(turn)")
        #expect(log.all.first?.contains("did not answer within 10000 ms") == true, "\(log.all)")
        // The stopped worker was killed, not left behind.
        #expect(await Self.exited(worker), "the hung worker is still there")
        // Not a deadline of the chain: Bergamot is asked again at once, on a fresh worker.
        #expect(!chain.isSkipping("bergamot"))
        let next = try await chain.translateNamingRoute("The cat is small.", from: "en", to: "es")
        #expect(next.route == "bergamot en-pt + apertium pt-es", "\(next)")
        #expect(await bergamot.starts == 2)
    }

    @Test func aModelThatDoesNotLoadOrIsMissingLeavesTheTurnToApertium() async throws {
        // A Bergamot folder whose en-pt model is broken and which has no pt-en model.
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let folder = dir.appendingPathComponent("bergamot")
        let models = folder.appendingPathComponent("models/en-pt")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        for item in ["parley-bergamot", "python"] {
            try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent(item).path, withDestinationPath: "\(BergamotEngine.folder)/\(item)")
        }
        try FileManager.default.createSymbolicLink(
            atPath: models.appendingPathComponent("vocab.enpt.spm").path, withDestinationPath: "\(BergamotEngine.folder)/models/en-pt/vocab.enpt.spm")
        try Data("not a model".utf8).write(to: models.appendingPathComponent("model.enpt.intgemm.alphas.bin"))
        let log = FallbackLines()
        let bergamot = BergamotTranslator(folder: folder.path)
        let chain = try chain(bergamot, log: log)
        #expect(chain.routeName(for: LanguagePair("en", "es")) == "bergamot en-pt + apertium pt-es")
        let turn = try await chain.translateNamingRoute("The dog is big.", from: "en", to: "es")
        #expect(turn.route == "apertium" && turn.text.lowercased().contains("perro"), "\(turn)")
        #expect(log.all.count == 1 && log.all.first?.contains("does not load") == true, "\(log.all)")
        // A missing model is not offered at all: Apertium's own route, nothing to fall back from.
        #expect(chain.routeName(for: LanguagePair("es", "en")) == "apertium")
        #expect(try await chain.translateNamingRoute("El perro es grande.", from: "es", to: "en").route == "apertium")
        #expect(log.all.count == 1)
        // The worker that answered the error is kept.
        #expect(await bergamot.starts == 1)
    }

    @Test func theWorkerSpeaksItsProtocol() throws {
        let requests = [
            #"{"type":"describe"}"#, #"{"type":"translate","id":1,"text":"hello","from":"en","to":"pt"}"#,
            #"{"type":"translate","id":2,"text":"olá","from":"en","to":"fr"}"#, "not json", #"{"type":"translate","id":3,"text":"  ","from":"en","to":"pt"}"#,
        ]
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("requests")
        try (requests.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let output = try EndToEnd.run(
            "/bin/sh", ["-c", "/usr/bin/python3 '\(BergamotEngine.folder)/parley-bergamot' --models '\(BergamotEngine.folder)/models' "
                + "--python-path '\(BergamotEngine.folder)/python' < '\(input.path)'"], in: dir)
        #expect(output.status == 0, "\(output.stderr)")
        let answers = output.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(answers.count == 5, "\(output.stdout)")
        #expect(answers[0]["type"] as? String == "info" && (answers[0]["pairs"] as? [[String: String]])?.count == 2)
        #expect(answers[1]["type"] as? String == "translation" && answers[1]["id"] as? Int == 1 && (answers[1]["text"] as? String)?.lowercased().contains("olá") == true)
        #expect(answers[2]["type"] as? String == "error" && answers[2]["id"] as? Int == 2 && (answers[2]["error"] as? String)?.contains("make engines") == true)
        #expect(answers[3]["type"] as? String == "error")
        #expect(answers[4]["type"] as? String == "translation" && answers[4]["text"] as? String == "")
    }
}

/// parleyd with Bergamot: a recording in file mode, and `languages` and `say` on a live daemon.
@Suite(
    "Bergamot, for real: parleyd", .startsProcesses,
    .enabled(if: BergamotEngine.installed, "run make engines first"),
    .enabled(if: BergamotEngine.pairsInstalled, "install the Apertium pairs of `make deps` (apertium-eng-spa, apertium-es-pt)"))
struct BergamotDaemonTests {
    @Test(.enabled(if: AccurateEngines.installed, "run `make engines` first"))
    func anEnglishRecordingIsTranslatedToSpanishThroughBergamot() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clips = ["\(OfflineLanguages.english)/cathy-a0122.wav", "\(OfflineLanguages.english)/vctk-p301_102.wav"]
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: "[conversation]\nspeaker_a = \"en\"\nspeaker_b = \"es\"\nmode = \"one-way\"\n" + AccurateEngines.table + "\n" + BergamotEngine.table)
        let input = try EndToEnd.conversation(clips, gap: 12, in: dir)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains(" error "), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("bergamot is ready"), "stderr: \(result.stderr)")
        let history = try AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path)
        let turns = Array(try await history.recentTurns(limit: 20).reversed())
        try #require(turns.count == clips.count, "turns: \(turns.map(\.sourceText))")
        for (turn, clip) in zip(turns, clips) {
            #expect(turn.sourceLang == "en" && turn.targetLang == "es")
            #expect(turn.status == .translated && turn.translatedText?.isEmpty == false, "\(clip): \(turn.error ?? "")")
            #expect(turn.route == "bergamot en-pt + apertium pt-es", "\(clip): \(turn.route ?? "no route")")
            let recall = EndToEnd.wordRecall(turn.sourceText, reference: try OfflineLanguages.reference(clip))
            #expect(recall >= 0.6, "\(clip): heard \"\(turn.sourceText)\"")
        }
        // "Two years ago I gave up civilization for this."
        let first = turns.first?.translatedText?.lowercased() ?? ""
        #expect(first.contains("años"), "\(first)")
        // The spoken translations are in the output.
        let (played, rate) = try EndToEnd.wavSamples(dir.appendingPathComponent("out.wav"))
        #expect(played.count > 2 * rate && played.contains { abs(Int($0)) > 3_000 }, "\(played.count) samples played")
    }

    @Test func languagesShowsTheRouteAndATypedTurnTakesIt() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 32_000).write(to: silence)
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: silence.path, played: dir.appendingPathComponent("played.raw").path,
            extraConfig: "[transcriber]\nenabled = false\n" + BergamotEngine.table)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        try #require(daemon.isRunning, "parleyd did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let parley = try EndToEnd.binary("parley")
        func run(_ arguments: [String]) throws -> EndToEnd.Output { try EndToEnd.run(parley, arguments + ["--socket", socket], in: dir, timeout: 60) }
        let decoder = JSONDecoder()

        let info = try decoder.decode(LanguagesInfo.self, from: Data(try run(["languages", "--json"]).stdout.utf8))
        func route(_ source: String, _ target: String) -> String? { info.directions?.first { $0.source == source && $0.target == target }?.route }
        #expect(route("en", "es") == "bergamot en-pt + apertium pt-es")
        #expect(route("es", "en") == "apertium es-pt + bergamot pt-en")
        #expect(route("en", "pt") == "bergamot")
        #expect(info.backends.map(\.name) == ["bergamot", "apertium"])
        let table = try run(["languages"])
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("en->es: bergamot en-pt + apertium pt-es"), "\(table.stdout)")
        for line in table.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }

        let said = try run(["say", "--speaker", "a", "--json", "the house is red"])
        let turn = try decoder.decode(TurnInfo.self, from: Data(said.stdout.utf8))
        #expect(turn.route == "bergamot en-pt + apertium pt-es" && turn.translatedText?.lowercased().contains("casa") == true, "\(turn)")
    }

    /// `parleyd model install-translation` checks and measures a model, and parleyd then takes
    /// it for its direction instead of the route through Portuguese. The only models here are
    /// en-pt and pt-en, so the test installs pt-en's files under es-en's names: a real model
    /// the worker loads and runs (its English from Spanish is poor, and the test asks no more
    /// of it than English words).
    @Test func aModelAUserInstallsIsMeasuredAndReplacesThePivot() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let unpacked = dir.appendingPathComponent("unpacked/esen")
        try FileManager.default.createDirectory(at: unpacked, withIntermediateDirectories: true)
        let ptEn = BergamotEngine.folder + "/models/pt-en"
        for name in try FileManager.default.contentsOfDirectory(atPath: ptEn) {
            try FileManager.default.createSymbolicLink(
                atPath: unpacked.appendingPathComponent(name.replacingOccurrences(of: "pten", with: "esen")).path, withDestinationPath: ptEn + "/" + name)
        }
        let data = ["XDG_DATA_HOME": dir.appendingPathComponent("data").path]
        let install = try EndToEnd.run(
            try EndToEnd.binary("parleyd"), ["model", "install-translation", unpacked.deletingLastPathComponent().path, "--engines", BergamotEngine.engines],
            in: dir, environment: data)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(install.stdout.contains("installed es-en in \(dir.path)/data/parley/translation/es-en"), "\(install.stdout)")
        #expect(install.stdout.contains("ms a sentence here, the worker holds"), "\(install.stdout)")
        // The bytes were copied, not the links.
        let installed = dir.appendingPathComponent("data/parley/translation/es-en/model.esen.intgemm.alphas.bin").path
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: installed)) == nil)
        // A model that does not load is refused, and nothing stays installed.
        let broken = dir.appendingPathComponent("broken")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("not a model".utf8).write(to: broken.appendingPathComponent("model.esfr.intgemm.alphas.bin"))
        try FileManager.default.copyItem(atPath: ptEn + "/vocab.pten.spm", toPath: broken.appendingPathComponent("vocab.esfr.spm").path)
        let refused = try EndToEnd.run(
            try EndToEnd.binary("parleyd"), ["model", "install-translation", broken.path, "--engines", BergamotEngine.engines], in: dir, environment: data)
        #expect(refused.status == 1 && refused.stderr.contains("does not work"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("data/parley/translation/es-fr").path))

        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 32_000).write(to: silence)
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: silence.path, played: dir.appendingPathComponent("played.raw").path,
            extraConfig: "[transcriber]\nenabled = false\n" + BergamotEngine.table, environment: data)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        try #require(daemon.isRunning, "parleyd did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let parley = try EndToEnd.binary("parley")
        let info = try JSONDecoder().decode(
            LanguagesInfo.self, from: Data(try EndToEnd.run(parley, ["languages", "--json", "--socket", socket], in: dir, timeout: 60).stdout.utf8))
        #expect(info.directions?.first { $0.source == "es" && $0.target == "en" }?.route == "bergamot")
        #expect(info.directions?.first { $0.source == "en" && $0.target == "es" }?.route == "bergamot en-pt + apertium pt-es")
        let said = try EndToEnd.run(parley, ["say", "--speaker", "b", "--json", "la casa es roja", "--socket", socket], in: dir, timeout: 60)
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(said.stdout.utf8))
        #expect(turn.route == "bergamot" && turn.translatedText?.lowercased().contains("house") == true, "\(turn)")
    }
}
