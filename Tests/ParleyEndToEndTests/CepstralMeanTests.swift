import Foundation
import Logging
import ParleyTesting
import Testing
@testable import ParleyAudio
@testable import ParleyConfig
@testable import ParleyDaemon
@testable import ParleyRecognition

/// The first utterance after a start is normalised like the tenth: the cepstral mean is seeded,
/// kept after each utterance per model and microphone, and read back at the next start.
@Suite("Cepstral mean kept across utterances and restarts", .startsProcesses)
struct CepstralMeanTests {
    func spanishConfig(cache: String) -> ParleyConfig {
        var config = ParleyConfig(environment: ["HOME": "/tmp"])
        let model = EndToEnd.repository + "/models/es"
        config.recognizers["es"] = RecognizerModel(
            acousticModel: model + "/acoustic", languageModel: model + "/es.lm.bin", dictionary: model + "/es.dict")
        config.recognizerCacheDirectory = cache
        return config
    }

    func decode(_ recognizer: PocketSphinxRecognizer, _ wav: String) throws -> Recognition {
        let samples = try EndToEnd.wavSamples(URL(fileURLWithPath: wav)).samples
        try recognizer.startUtterance()
        try recognizer.feed(samples)
        return try recognizer.finishUtterance()
    }

    @Test func aModelWithoutCmninitStartsFromTheSeedLearnsFromSpeechAndTheNextStartResumesThere() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = spanishConfig(cache: dir.path)
        let first = try RecognizerPool(config: config, logger: Logger(label: "test"), meanDevice: "plughw:1,0")
        let recognizer = try #require(first.recognizer(for: "es") as? PocketSphinxRecognizer)
        #expect(recognizer.engine.cepstralMean == CepstralMeanStore.seed, "models/es gives no -cmninit: the seed")
        _ = try decode(recognizer, "\(EndToEnd.spanishRecordings)/es-0029.wav")
        let learned = try #require(recognizer.engine.cepstralMean)
        #expect(learned != CepstralMeanStore.seed, "the mean moved towards the speaker's")
        let store = CepstralMeanStore(cacheDirectory: dir.path, acousticModel: EndToEnd.repository + "/models/es/acoustic", device: "plughw:1,0")
        let kept = try #require(store.load(length: learned.count))
        #expect(zip(kept, learned).allSatisfy { abs($0 - $1) < 0.001 })

        // A restart on the same microphone resumes from it; another microphone starts afresh.
        let again = try RecognizerPool(config: config, logger: Logger(label: "test"), meanDevice: "plughw:1,0")
        let resumed = try #require((again.recognizer(for: "es") as? PocketSphinxRecognizer)?.engine.cepstralMean)
        #expect(zip(resumed, learned).allSatisfy { abs($0 - $1) < 0.001 })
        let other = try RecognizerPool(config: config, logger: Logger(label: "test"), meanDevice: "hw:2")
        #expect((other.recognizer(for: "es") as? PocketSphinxRecognizer)?.engine.cepstralMean == CepstralMeanStore.seed)
    }

    @Test func aRecordingKeepsNothingAndAModelWithItsOwnCmninitKeepsIt() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = spanishConfig(cache: dir.path)
        let file = try RecognizerPool(config: config, logger: Logger(label: "test"), meanDevice: nil)
        let recognizer = try #require(file.recognizer(for: "es") as? PocketSphinxRecognizer)
        _ = try decode(recognizer, "\(EndToEnd.spanishRecordings)/es-0027.wav")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("cmn").path), "file mode keeps no mean")

        config.speakerB = "en"
        config.speakerA = "es"
        config.recognizers["es"] = nil
        let english = try RecognizerPool(config: config, logger: Logger(label: "test"))
        let mean = try #require((english.recognizer(for: "en") as? PocketSphinxRecognizer)?.engine.cepstralMean)
        #expect(mean.first.map { abs($0 - 41.0) < 0.01 } == true, "pocketsphinx-en-us's own -cmninit")
    }

    @Test func aDamagedKeptMeanIsIgnored() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = CepstralMeanStore(cacheDirectory: dir.path, acousticModel: "/m/acoustic", device: "default")
        store.save([1, 2, 3])
        #expect(store.load(length: 3) == [1, 2, 3])
        #expect(store.load(length: 13) == nil, "a mean of another length")
        try "41 nan 3".write(toFile: store.path, atomically: true, encoding: .utf8)
        #expect(store.load(length: 3) == nil)
    }
}
