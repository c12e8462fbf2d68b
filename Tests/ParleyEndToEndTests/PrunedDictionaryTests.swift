import Foundation
import Logging
import ParleyTesting
import Testing
@testable import ParleyConfig
@testable import ParleyDaemon
@testable import ParleyRecognition

/// Dictionaries are cut down to the words their language model can produce, once, into a cache.
@Suite("Pruned dictionaries", .startsProcesses)
struct PrunedDictionaryTests {
    static let cmudict = RecognizerModel.debianEnglish.dictionary
    static let turtleModel = "\(EndToEnd.testData)/turtle.lm.bin"

    static func entries(_ path: String) throws -> [Substring] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    }

    @Test func keepsEveryPronunciationOfTheLanguageModelsWordsAndNothingElse() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = dir.appendingPathComponent("cache").path
        let path = try PrunedDictionary.path(for: Self.cmudict, languageModel: Self.turtleModel, in: cache)
        #expect(path.hasPrefix(cache + "/cmudict-en-us-") && path.hasSuffix(".dict"))

        let vocabulary = try PrunedDictionary.words(of: Self.turtleModel)
        #expect(vocabulary.count == 91 && vocabulary.contains("forward") && vocabulary.contains("<s>"))
        let kept = try Self.entries(path)
        let expected = try Self.entries(Self.cmudict).filter { line in
            let word = line.split(separator: " ").first.map { $0.split(separator: "(").first ?? $0 } ?? ""
            return vocabulary.contains(String(word))
        }
        #expect(kept == expected)
        #expect(kept.contains("go G OW"))
        #expect(kept.contains("a(2) EY"), "alternate pronunciations stay")
        #expect(!kept.contains { $0.hasPrefix("zywicki ") }, "a word the model cannot produce is dropped")
        #expect(kept.count < 200)
    }

    /// With a vocabulary, only the language model's likeliest words stay, in a copy of their own.
    @Test func aVocabularyKeepsTheLikeliestWords() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = dir.appendingPathComponent("cache").path
        let all = try PrunedDictionary.words(of: Self.turtleModel)
        let ten = try PrunedDictionary.words(of: Self.turtleModel, likeliest: 10)
        let twenty = try PrunedDictionary.words(of: Self.turtleModel, likeliest: 20)
        #expect(ten.count == 10 && twenty.count == 20)
        #expect(ten.isSubset(of: twenty) && twenty.isSubset(of: all))
        #expect(try PrunedDictionary.words(of: Self.turtleModel, likeliest: 500) == all)
        // turtle.lm.bin's ten likeliest unigrams (log10 -0.91 to -2.13; "five" and "right" tie
        // at -2.126 and both fit, the next is "left" at -2.205).
        #expect(ten == ["</s>", "<s>", "go", "degrees", "forward", "meters", "one", "rotate", "five", "right"])

        let whole = try PrunedDictionary.path(for: Self.cmudict, languageModel: Self.turtleModel, in: cache)
        let cut = try PrunedDictionary.path(for: Self.cmudict, languageModel: Self.turtleModel, vocabulary: 10, in: cache)
        #expect(cut != whole)
        let kept = try Self.entries(cut)
        #expect(Set(kept).isSubset(of: Set(try Self.entries(whole))))
        let words = Set(kept.compactMap { $0.split(separator: " ").first.map { String($0.split(separator: "(").first ?? $0) } })
        #expect(!words.isEmpty && words.isSubset(of: ten))
    }

    @Test func theCopyIsMadeOnceAndRemadeWhenAModelChanges() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = dir.appendingPathComponent("turtle.lm.bin")
        try FileManager.default.copyItem(atPath: Self.turtleModel, toPath: model.path)
        let cache = dir.appendingPathComponent("cache").path
        let first = try PrunedDictionary.path(for: Self.cmudict, languageModel: model.path, in: cache)
        // A marker line shows whether the second call rewrote the copy.
        try (String(contentsOfFile: first, encoding: .utf8) + "marker M AA R K ER\n").write(toFile: first, atomically: true, encoding: .utf8)
        #expect(try PrunedDictionary.path(for: Self.cmudict, languageModel: model.path, in: cache) == first)
        #expect(try Self.entries(first).last == "marker M AA R K ER", "the kept copy was used, not remade")

        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: model.path)
        let second = try PrunedDictionary.path(for: Self.cmudict, languageModel: model.path, in: cache)
        #expect(second != first)
        #expect(try !Self.entries(second).contains("marker M AA R K ER"))
    }

    @Test func aDamagedCopyIsMadeAgain() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = dir.appendingPathComponent("cache").path
        let copy = cache + "/" + PrunedDictionary.fileName(dictionary: Self.cmudict, languageModel: Self.turtleModel)
        // An empty file, then a folder, where the copy should be: PocketSphinx would load either
        // as a dictionary without a word.
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: copy, contents: Data())
        #expect(try PrunedDictionary.path(for: Self.cmudict, languageModel: Self.turtleModel, in: cache) == copy)
        #expect(try Self.entries(copy).contains("go G OW"))
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        #expect(try PrunedDictionary.path(for: Self.cmudict, languageModel: Self.turtleModel, in: cache) == copy)
        #expect(try Self.entries(copy).contains("go G OW"))
    }

    /// A dictionary sharing no word with its language model, and a file that is no language
    /// model: each is an error naming the file, never an empty copy.
    @Test(arguments: [
        ("zywicki Z IH W IH K IY\n", "turtle", "no word of DICT is in the language model"),
        ("not a language model", "bogus", "could not read the language model LM"),
    ])
    func badFilesAreClearErrors(written: String, model: String, message: String) throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("written")
        try written.write(to: file, atomically: true, encoding: .utf8)
        let dictionary = model == "turtle" ? file.path : Self.cmudict
        let languageModel = model == "turtle" ? Self.turtleModel : file.path
        let expected = message.replacingOccurrences(of: "DICT", with: dictionary).replacingOccurrences(of: "LM", with: languageModel)
        #expect {
            try PrunedDictionary.path(for: dictionary, languageModel: languageModel, in: dir.appendingPathComponent("cache").path)
        } throws: { error in
            "\(error)".contains(expected)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("cache").path))
    }

    @Test func theDaemonsDecoderLoadsTheCutDownDictionaryAndStillRecognizes() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = ParleyConfig(environment: ["HOME": "/tmp"])
        config.recognizerCacheDirectory = dir.appendingPathComponent("cache").path
        let pool = try RecognizerPool(config: config, logger: Logger(label: "test"))
        let english = try #require(pool.recognizer(for: "en") as? PocketSphinxRecognizer)
        #expect(english.engine.knows("forward") && english.engine.knows("meters"), "common words of the language model")
        #expect(!english.engine.knows("aardvark"), "a rare word of the language model: not among English's 20,000 likeliest")
        #expect(!english.engine.knows("zywicki"), "a word only the dictionary has")
        let copies = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("cache").path)
        #expect(copies.count == 1)
        #expect(try RecognizerPoolTests.recognize(english, "\(EndToEnd.testData)/goforward.raw") == "go forward ten meters")
    }

    @Test func withoutAWritableCacheTheWholeDictionaryIsLoaded() throws {
        var config = ParleyConfig(environment: ["HOME": "/tmp"])
        config.recognizerCacheDirectory = "/dev/null/parley"
        let pool = try RecognizerPool(config: config, logger: Logger(label: "test"))
        let english = try #require(pool.recognizer(for: "en") as? PocketSphinxRecognizer)
        #expect(english.engine.knows("zywicki"))
        #expect(try RecognizerPoolTests.recognize(english, "\(EndToEnd.testData)/goforward.raw") == "go forward ten meters")
    }

    @Test func theCacheFolderFollowsSystemdAndXDG() {
        #expect(ParleyConfig.defaultCacheDirectory(environment: ["CACHE_DIRECTORY": "/var/cache/parley"]) == "/var/cache/parley")
        #expect(ParleyConfig.defaultCacheDirectory(environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"]) == "/x/parley")
        #expect(ParleyConfig.defaultCacheDirectory(environment: ["HOME": "/h"]) == "/h/.cache/parley")
    }
}
