import Foundation
import ParleyTesting
import Testing
@testable import ParleyConfig
import ParleyDaemon
@testable import ParleyHistory
import ParleyProtocol
@testable import ParleyRecognition

/// `parleyd model check` and `install`, the model search path, and a daemon with a broken model.
@Suite("Adding a language: model check, install and search", .serialized, .startsProcesses)
struct ModelCheckTests {
    /// The Spanish model shipped in the checkout.
    static let spanish = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../models/es").standardizedFileURL.path

    /// A copy of the Spanish model in `dir`, to break.
    static func copyOfSpanish(in dir: URL) throws -> String {
        let copy = dir.appendingPathComponent("es").path
        try FileManager.default.copyItem(atPath: spanish, toPath: copy)
        return copy
    }

    /// A small model on the Spanish acoustic model: an ARPA language model of `words` and a
    /// dictionary of `pronunciations`.
    static func smallModel(in dir: URL, words: [String], pronunciations: String) throws -> String {
        let folder = dir.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder.path + "/acoustic", withDestinationPath: spanish + "/acoustic")
        let unigrams = (["-1.0 </s>", "-99 <s> 0.0"] + words.map { "-1.0 \($0) 0.0" }).joined(separator: "\n")
        let arpa = "\\data\\\nngram 1=\(words.count + 2)\n\n\\1-grams:\n\(unigrams)\n\n\\end\\\n"
        try arpa.write(to: folder.appendingPathComponent("xx.arpa"), atomically: true, encoding: .utf8)
        try pronunciations.write(to: folder.appendingPathComponent("xx.dict"), atomically: true, encoding: .utf8)
        return folder.path
    }

    @Test func theShippedSpanishModelPasses() {
        let report = ModelCheck.check(directory: Self.spanish, language: "es")
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.files?.acousticModel == Self.spanish + "/acoustic")
        #expect(report.files?.languageModel == Self.spanish + "/es.lm.bin")
        #expect(report.files?.dictionary == Self.spanish + "/es.dict")
        #expect(report.languageModelWords == 30_000)
        #expect((report.dictionaryWords ?? 0) >= 30_000)
    }

    @Test func aMissingMdefIsOneLineNamingIt() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try Self.copyOfSpanish(in: dir)
        try FileManager.default.removeItem(atPath: model + "/acoustic/mdef")
        let report = ModelCheck.check(directory: model, language: "es")
        #expect(!report.isUsable)
        try #require(report.problems.count == 1, "\(report.problems)")
        #expect(report.problems[0].file == model + "/acoustic/mdef")
        #expect(report.problems[0].description.contains("is missing; copy it"))
        #expect(!report.problems[0].description.contains("\n"))
    }

    @Test func an8kHzFeatParamsIsOneLineNamingIt() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try Self.copyOfSpanish(in: dir)
        let params = model + "/acoustic/feat.params"
        let text = try String(contentsOfFile: params, encoding: .utf8)
        try ("-samprate 8000\n" + text).write(toFile: params, atomically: true, encoding: .utf8)
        let report = ModelCheck.check(directory: model, language: "es")
        try #require(report.problems.count == 1, "\(report.problems)")
        #expect(report.problems[0].file == params)
        #expect(report.problems[0].problem.contains("-samprate 8000") && report.problems[0].problem.contains("16 kHz"))
        // A telephone band with no sample rate is caught too; 16 kHz passes.
        #expect(ModelCheck.checkFeatureParameters("-upperf 3500\n", file: "f").count == 1)
        #expect(ModelCheck.checkFeatureParameters("-samprate 16000\n-upperf 6800\n", file: "f").isEmpty)
        #expect(ModelCheck.checkFeatureParameters("-samprate 16000\n-upperf 11025\n", file: "f").count == 1)
    }

    @Test func aDictionaryMissingALanguageModelWordIsOneLineNamingTheWord() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let words = ["hola", "mundo", "adiós"]
        let complete = try Self.smallModel(in: dir, words: words, pronunciations: "hola o l a\nmundo m u n d o\nadiós a d i o s\n")
        let good = ModelCheck.check(directory: complete, language: "xx")
        #expect(good.problems.isEmpty, "\(good.problems)")
        #expect(good.languageModelWords == 3 && good.dictionaryWords == 3)

        try "hola o l a\nmundo m u n d o\n".write(toFile: complete + "/xx.dict", atomically: true, encoding: .utf8)
        let report = ModelCheck.check(directory: complete, language: "xx")
        try #require(report.problems.count == 1, "\(report.problems)")
        #expect(report.problems[0].file == complete + "/xx.dict")
        #expect(report.problems[0].problem.contains("1 of the 3 words of xx.arpa (adiós)"), "\(report.problems[0])")

        // Phones of another phone set (the CMU English one) are named too.
        try "hola OW L AA\nmundo m u n d o\nadiós a d i o s\n".write(toFile: complete + "/xx.dict", atomically: true, encoding: .utf8)
        let phones = ModelCheck.check(directory: complete, language: "xx")
        try #require(phones.problems.count == 1, "\(phones.problems)")
        #expect(phones.problems[0].problem.contains("AA in \"hola\""), "\(phones.problems[0])")
    }

    /// SphinxTrain's layout, as some tarballs have it: model_parameters/xx.cd_cont_N/ and
    /// etc/ with the dictionary and a gzipped language model.
    @Test func aSphinxTrainLayoutWithAGzippedLanguageModelIsFound() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("tarball").path
        let manager = FileManager.default
        try manager.createDirectory(atPath: model + "/model_parameters", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: model + "/etc", withIntermediateDirectories: true)
        try manager.createSymbolicLink(atPath: model + "/model_parameters/xx.cd_ptm_4000", withDestinationPath: Self.spanish + "/acoustic")
        let small = try Self.smallModel(in: dir, words: ["hola", "mundo"], pronunciations: "hola o l a\nmundo m u n d o\n")
        try manager.copyItem(atPath: small + "/xx.dict", toPath: model + "/etc/xx.dic")
        try manager.copyItem(atPath: small + "/xx.arpa", toPath: model + "/etc/xx.lm")
        let gzip = try EndToEnd.run("/bin/gzip", [model + "/etc/xx.lm"], in: dir)
        try #require(gzip.status == 0, "\(gzip.stderr)")
        let report = ModelCheck.check(directory: model)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.files?.acousticModel == model + "/model_parameters/xx.cd_ptm_4000")
        #expect(report.files?.languageModel == model + "/etc/xx.lm.gz")
        #expect(report.files?.dictionary == model + "/etc/xx.dic")
        #expect(report.languageModelWords == 2)

        let installed = try ModelInstall.install(try #require(report.files), from: model, language: "xx", into: dir.path + "/installed")
        #expect(installed.languageModel == dir.path + "/installed/xx.lm.gz")
        #expect(RecognizerModel.installed(in: dir.path + "/installed", language: "xx")?.languageModel == installed.languageModel)
    }

    @Test func aFolderWithoutAModelSaysWhatIsMissing() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let report = ModelCheck.check(directory: dir.path)
        #expect(report.files == nil)
        #expect(report.problems.map(\.file) == [dir.path, dir.path, dir.path])
        #expect(report.problems.map(\.problem).joined(separator: "\n").contains("holds no dictionary"))
    }

    @Test func installCopiesTheLayoutAndPrintsATableThatParses() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("models/es").path
        let parleyd = try EndToEnd.binary("parleyd")
        let result = try EndToEnd.run(parleyd, ["model", "install", Self.spanish, "--language", "es", "--into", target], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("add this table to parley.toml"), "\(result.stderr)")

        let config = try ParleyConfig.parse(result.stdout, source: "printed table", environment: ["HOME": dir.path])
        let model = try #require(config.recognizers["es"])
        #expect(model == RecognizerModel(acousticModel: target + "/acoustic", languageModel: target + "/es.lm.bin", dictionary: target + "/es.dict"))
        #expect(model.firstMissingFile() == nil)
        for name in ["NOTICE", "LICENSE.profile-GPL-3.0", "README.profile.md", "acoustic/mdef", "acoustic/sendump", "acoustic/noisedict"] {
            #expect(FileManager.default.fileExists(atPath: target + "/" + name), "\(name)")
        }
        #expect(model.origin() == "Spanish model directory for Debian pocketsphinx 0.8+5prealpha")
        #expect(ModelCheck.check(directory: target, language: "es").isUsable)

        // Installing again needs --force.
        let again = try EndToEnd.run(parleyd, ["model", "install", Self.spanish, "--language", "es", "--into", target], in: dir)
        #expect(again.status == 1)
        #expect(again.stderr.split(separator: "\n").count == 1 && again.stderr.contains("--force"), "\(again.stderr)")
        let forced = try EndToEnd.run(parleyd, ["model", "install", Self.spanish, "--language", "es", "--into", target, "--force"], in: dir)
        #expect(forced.status == 0, "\(forced.stderr)")

        // A broken model is not installed, and says why.
        let broken = try Self.copyOfSpanish(in: dir)
        try FileManager.default.removeItem(atPath: broken + "/es.dict")
        let refused = try EndToEnd.run(parleyd, ["model", "install", broken, "--language", "es", "--into", dir.path + "/other"], in: dir)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("holds no dictionary"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/other"))
        let checked = try EndToEnd.run(parleyd, ["model", "check", broken], in: dir)
        #expect(checked.status == 1)
        #expect(checked.stdout.split(separator: "\n").count == 1, "\(checked.stdout)")
    }

    @Test func anInstalledModelIsFoundThroughTheSearchPath() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Installed where `parleyd model install` puts it by default: $XDG_DATA_HOME/parley/models/es.
        let data = dir.appendingPathComponent("data").path
        let result = try EndToEnd.run(
            try EndToEnd.binary("parleyd"), ["model", "install", Self.spanish, "--language", "es"], in: dir,
            environment: ["XDG_DATA_HOME": data])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("when parley.toml has no [recognizer.es] table"), "\(result.stderr)")
        let folder = data + "/parley/models/es"

        let environment = ["HOME": dir.path, "XDG_DATA_HOME": data, "XDG_DATA_DIRS": dir.path + "/none"]
        let config = ParleyConfig(environment: environment)
        #expect(config.modelSearchPath == [data + "/parley/models", dir.path + "/none/parley/models"])
        #expect(
            config.recognizerModel(for: "es")
                == RecognizerModel(acousticModel: folder + "/acoustic", languageModel: folder + "/es.lm.bin", dictionary: folder + "/es.dict"))
        #expect(config.recognizerModel(for: "fr") == nil)
        #expect(config.recognizerModel(for: "en") == .debianEnglish)
        // A config table wins over the search path.
        let configured = try ParleyConfig.parse(
            "[recognizer.es]\nacoustic_model = \"\(Self.spanish)/acoustic\"\nlanguage_model = \"\(Self.spanish)/es.lm.bin\"\n"
                + "dictionary = \"\(Self.spanish)/es.dict\"", source: "t", environment: environment)
        #expect(configured.recognizerModel(for: "es")?.acousticModel == Self.spanish + "/acoustic")
        // The defaults: ~/.local/share, then /usr/local/share and /usr/share.
        #expect(
            ParleyConfig.modelDirectories(environment: ["HOME": "/home/u"])
                == ["/home/u/.local/share/parley/models", "/usr/local/share/parley/models", "/usr/share/parley/models"])
    }

    @Test func aModelSaysWhereItCameFromAndItsSizes() throws {
        let spanish = RecognizerModel(
            acousticModel: Self.spanish + "/acoustic", languageModel: Self.spanish + "/es.lm.bin", dictionary: Self.spanish + "/es.dict")
        let info = spanish.info()
        #expect(info.origin == "Spanish model directory for Debian pocketsphinx 0.8+5prealpha")
        #expect(info.languageModelBytes == 12_067_340)
        #expect(info.dictionaryBytes == 720_506)
        let acoustic = try FileManager.default.contentsOfDirectory(atPath: spanish.acousticModel).reduce(Int64(0)) { total, name in
            total + ((try FileManager.default.attributesOfItem(atPath: spanish.acousticModel + "/" + name)[.size] as? NSNumber)?.int64Value ?? 0)
        }
        #expect(info.acousticModelBytes == acoustic)
        #expect(RecognizerModel.debianEnglish.origin() == "Debian pocketsphinx-en-us")
        #expect(RecognizerModel(acousticModel: "/nowhere/a", languageModel: "/nowhere/l", dictionary: "/nowhere/d").origin() == "config")
        let json = String(decoding: try JSONEncoder().encode(info), as: UTF8.self)
        for key in ["\"acoustic_model\"", "\"language_model_bytes\"", "\"dictionary_bytes\"", "\"origin\""] {
            #expect(json.contains(key), "\(json)")
        }
    }

    @Test func aDaemonWhoseSpanishModelIsBrokenHearsEnglish() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try Self.copyOfSpanish(in: dir)
        try FileManager.default.removeItem(atPath: model + "/acoustic/mdef")
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: """
                [recognizer.es]
                acoustic_model = "es/acoustic"
                language_model = "es/es.lm.bin"
                dictionary = "es/es.dict"
                """)
        let result = try EndToEnd.runFileMode(
            config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("go forward"))
        let errors = result.stderr.split(separator: "\n").filter { $0.contains(" error ") || $0.hasPrefix("<3>") }
        try #require(errors.count == 1, "\(result.stderr)")
        #expect(errors[0].contains(model + "/acoustic/mdef") && errors[0].contains("parleyd model check"), "\(errors[0])")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 10)
        #expect(turns.map(\.sourceLang) == ["en"])

        // A language model that is there but not a language model: PocketSphinx fails to load
        // it, and that too is one line while English is heard.
        try FileManager.default.removeItem(atPath: model)
        _ = try Self.copyOfSpanish(in: dir)
        try "this is not a language model\n".write(toFile: model + "/es.lm.bin", atomically: true, encoding: .utf8)
        let garbled = try EndToEnd.runFileMode(
            config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("out2.wav").path, in: dir)
        #expect(garbled.status == 0, "stderr: \(garbled.stderr)")
        #expect(garbled.stdout.contains("go forward"))
        let lines = garbled.stderr.split(separator: "\n").filter { $0.contains(" error ") || $0.hasPrefix("<3>") }
        #expect(lines.count == 1 && lines.first?.contains("the es speech model in \(model) did not load") == true, "\(garbled.stderr)")
    }

    @Test func aDaemonHearsAModelInstalledWithoutAConfigTable() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let parleyd = try EndToEnd.binary("parleyd")
        let config = try EndToEnd.writeConfig(in: dir)  // no [recognizer.es]
        let environment = ["XDG_DATA_HOME": dir.path + "/data", "XDG_DATA_DIRS": dir.path + "/none"]
        let arguments = ["--config", config.path, "--input", "\(EndToEnd.testData)/goforward.raw", "--output", dir.path + "/out.wav"]
        let before = try EndToEnd.run(parleyd, arguments, in: dir, environment: environment)
        #expect(before.status == 0, "\(before.stderr)")
        #expect(before.stderr.contains("speaker b cannot be heard"), "\(before.stderr)")

        let installed = try EndToEnd.run(parleyd, ["model", "install", Self.spanish, "--language", "es"], in: dir, environment: environment)
        #expect(installed.status == 0, "\(installed.stderr)")
        let after = try EndToEnd.run(parleyd, arguments, in: dir, environment: environment)
        #expect(after.status == 0, "\(after.stderr)")
        #expect(!after.stderr.contains("cannot be heard") && !after.stderr.contains(" error "), "\(after.stderr)")
        #expect(after.stdout.contains("[a en] go forward"), "\(after.stdout)")
    }

    @Test func withEveryModelBrokenStartUpStops() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try Self.copyOfSpanish(in: dir)
        try FileManager.default.removeItem(atPath: model + "/acoustic/means")
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: """
                [recognizer.en]
                dictionary = "/nonexistent/cmudict.dict"
                [recognizer.es]
                acoustic_model = "es/acoustic"
                language_model = "es/es.lm.bin"
                dictionary = "es/es.dict"
                """)
        let result = try EndToEnd.runFileMode(
            config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("o.wav").path, in: dir)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("/nonexistent/cmudict.dict") && result.stderr.contains(model + "/acoustic/means"))
    }
}
