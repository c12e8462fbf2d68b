import Foundation
import Logging
import ParleyTesting
import Testing
@testable import ParleyConfig
@testable import ParleyDaemon
@testable import ParleyRecognition

/// Languages that use one acoustic model load it once; each keeps its own language model.
@Suite("Recognizers share an acoustic model", .startsProcesses)
struct RecognizerPoolTests {
    static let acousticModel = RecognizerModel.debianEnglish.acousticModel
    static let turtleDictionary = "\(EndToEnd.testData)/turtle.dic"

    /// Two "languages" on the US English acoustic model: "en" with the full English language
    /// model, "fr" with pocketsphinx-testdata's small "turtle" model of robot commands. Small
    /// dictionaries keep the searches quick to build: turtle's words, and for "fr" a word of its
    /// own, which must be added to the shared decoder.
    static func models(in dir: URL) throws -> (en: RecognizerModel, fr: RecognizerModel) {
        let turtle = try String(contentsOfFile: turtleDictionary, encoding: .utf8)
        let english = dir.appendingPathComponent("en.dic")
        try turtle.write(to: english, atomically: true, encoding: .utf8)
        let french = dir.appendingPathComponent("fr.dic")
        try (turtle + ";; a comment line\nparley P AA R L IY\nparley(2) P AA R L EY\n").write(to: french, atomically: true, encoding: .utf8)
        return (
            RecognizerModel(acousticModel: acousticModel, languageModel: RecognizerModel.debianEnglish.languageModel, dictionary: english.path),
            RecognizerModel(acousticModel: acousticModel, languageModel: "\(EndToEnd.testData)/turtle.lm.bin", dictionary: french.path)
        )
    }

    static func recognize(_ recognizer: any SpeechRecognizer, _ path: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        try recognizer.startUtterance()
        for start in stride(from: 0, to: samples.count, by: 320) {
            try recognizer.feed(Array(samples[start..<min(samples.count, start + 320)]))
        }
        return try recognizer.finishUtterance().text
    }

    @Test func twoLanguagesOnOneAcousticModelLoadItOnceAndKeepTheirOwnLanguageModels() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let models = try Self.models(in: dir)
        var config = ParleyConfig(environment: ["HOME": "/tmp"])
        config.speakerA = "en"
        config.speakerB = "fr"
        config.recognizers = ["en": models.en, "fr": models.fr]
        config.recognizerCacheDirectory = nil  // whole dictionaries: "parley" is in neither language model
        let pool = try RecognizerPool(config: config, logger: Logger(label: "test"))
        #expect(pool.decoderCount == 1)
        let english = try #require(pool.recognizer(for: "en") as? PocketSphinxRecognizer)
        let turtle = try #require(pool.recognizer(for: "fr") as? PocketSphinxRecognizer)
        #expect(english.engine === turtle.engine)
        #expect(english.engine.searchCount == 2)
        #expect(english.engine.knows("parley"), "fr's own word joins the shared dictionary")
        #expect(english.engine.knows("parley(2)"), "with its alternate pronunciation")

        // Each language decodes with its own language model, whichever ran last: the same
        // recording comes out differently.
        let recording = "\(EndToEnd.testData)/something.raw"
        let heardInEnglish = try Self.recognize(english, recording)
        #expect(english.engine.activeSearch == english.searchName)
        let heardByTurtle = try Self.recognize(turtle, recording)
        #expect(turtle.engine.activeSearch == turtle.searchName)
        #expect(english.searchName != turtle.searchName)
        #expect(!heardInEnglish.isEmpty && !heardByTurtle.isEmpty)
        #expect(heardByTurtle != heardInEnglish, "both said \"\(heardInEnglish)\": the turtle language model was not used")
        #expect(try Self.recognize(english, "\(EndToEnd.testData)/goforward.raw") == "go forward ten meters")
        #expect(english.engine.activeSearch == english.searchName, "English is back")
    }

    @Test func theDecoderKeepsAtMostTheConfiguredHMMsPerFrame() throws {
        let defaults = try RecognizerPool(config: ParleyConfig(environment: ["HOME": "/tmp"]), logger: Logger(label: "test"))
        let english = try #require(defaults.recognizer(for: "en") as? PocketSphinxRecognizer)
        #expect(english.engine.integerOption("-maxhmmpf") == 4_000)
        #expect(english.engine.integerOption("-maxwpf") == 10)
        #expect(english.engine.integerOption("-fwdflat") == 0)
        #expect(try Self.recognize(english, "\(EndToEnd.testData)/goforward.raw") == "go forward ten meters")

        var config = ParleyConfig(environment: ["HOME": "/tmp"])
        config.maxHMMsPerFrame = -1
        let unlimited = try RecognizerPool(config: config, logger: Logger(label: "test"))
        let engine = try #require(unlimited.recognizer(for: "en") as? PocketSphinxRecognizer).engine
        #expect(engine.integerOption("-maxhmmpf") == -1)
    }

    @Test func aDifferentAcousticModelGetsADecoderOfItsOwn() throws {
        let second = RecognizerModel(
            acousticModel: "\(EndToEnd.testData)/an4_ci_cont", languageModel: "\(EndToEnd.testData)/turtle.lm.bin",
            dictionary: Self.turtleDictionary)
        var config = ParleyConfig(environment: ["HOME": "/tmp"])
        config.speakerB = "fr"
        config.recognizers["fr"] = second
        let pool = try RecognizerPool(config: config, logger: Logger(label: "test"))
        #expect(pool.decoderCount == 2)
    }
}
