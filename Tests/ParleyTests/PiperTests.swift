import Foundation
import ParleyCore
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyConfig
@testable import ParleyDaemon
@testable import ParleySynthesis

extension ChildScript {
    /// A Piper worker in memory: it says a sentence in pieces cut after its commas, 10 samples
    /// of 5 per character; `requests` are the sentences it was asked.
    func startPiper() throws(ChildFailure) -> any PiperLink {
        try starting()
        return InMemoryPiper(script: self)
    }
}

/// A worker in memory that answers over the real wire: its answers are the bytes
/// `parley-piper` writes, read back by `PiperWire.takeAnswer`.
private final class InMemoryPiper: PiperLink {
    let script: ChildScript
    var said: [UInt8] = []
    var hung = false
    var dead = false
    var stopped = false
    var process: pid_t? { nil }

    init(script: ChildScript) { self.script = script }

    static func audio(id: Int, samples: Int, last: Bool) -> [UInt8] {
        Array(#"{"type": "audio", "id": \#(id), "samples": \#(samples), "last": \#(last)}"#.utf8) + [10]
            + [UInt8](repeating: 0, count: 2 * samples).enumerated().map { $0.offset % 2 == 0 ? 5 : 0 }
    }

    func send(_ request: [UInt8]) throws(ChildFailure) {
        guard !dead, !stopped else { throw .exited(how: nil) }
        struct Say: Decodable {
            let id: Int
            let text: String
        }
        guard let say = try? JSONDecoder().decode(Say.self, from: Data(request)) else { throw .broken("not a request") }
        switch script.next(say.text) {
        case .speak:
            let pieces = say.text.components(separatedBy: ", ")
            for (index, piece) in pieces.enumerated() {
                said += Self.audio(id: say.id, samples: 10 * piece.count, last: index == pieces.count - 1)
            }
        case .crash:
            dead = true
        case .hang:
            hung = true
        case .refuse:
            said += Array(#"{"type": "error", "id": \#(say.id), "error": "no voice for 'en'"}"#.utf8) + [10]
        }
    }

    func receive(id: Int, timeoutMs: Int) throws(ChildFailure) -> PiperAnswer {
        while true {
            if let answer = try PiperWire.takeAnswer(for: id, from: &said) { return answer }
            if said.isEmpty || !said.contains(10) {
                if dead { throw .exited(how: "killed by signal 9") }
                throw .timedOut(timeoutMs)
            }
        }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        script.stoppedOne()
    }
}

@Suite("Piper in front of Festival and espeak-ng, in memory")
struct PiperTests {
    let script = ChildScript()
    let espeak = SilentSynthesizer(languages: ["en", "es"], samplesPerCharacter: 1, chunk: 100)
    let reports = Reports()
    static let english = PiperVoice(language: "en", model: "/engines/piper/voices/en_US-joe-medium.onnx")

    func synthesizer() -> PiperSynthesizer {
        let reports = reports
        return PiperSynthesizer(
            fallback: espeak, piperVoices: ["en": Self.english], start: { () throws(ChildFailure) -> any PiperLink in try script.startPiper() },
            report: { reports.add($0) })
    }

    func say(_ synthesizer: PiperSynthesizer, _ text: String, _ language: String = "en") throws -> [Int16] {
        var samples: [Int16] = []
        let produced = try synthesizer.synthesize(text, language: language) { samples += $0 }
        #expect(produced == samples.count)
        return samples
    }

    // MARK: - Which engine speaks which language

    @Test func autoGivesEnglishAndTheVoicesAUserInstalledToPiper() throws {
        let spanish = PiperVoice(language: "es", model: "/home/x/.local/share/parley/voices/es/es_ES-davefx-medium.onnx", userInstalled: true)
        let installed = ["en": Self.english, "es": spanish]
        let auto = Daemon.piperVoices(ParleyConfig(), report: nil, installed: installed)
        #expect(auto == ["en": Self.english, "es": spanish], "the shipped English voice is heard best; a user's voice is theirs")
        #expect(Set(Daemon.festivalChoice(ParleyConfig(), piper: Set(auto.keys)).keys) == ["it", "ca"])
        // English given to Festival: Piper keeps the user's voice, Festival takes English.
        let festival = try parse("[voice.en]\nengine = \"festival\"")
        let chosen = Daemon.piperVoices(festival, report: nil, installed: installed)
        #expect(chosen == ["es": spanish])
        #expect(Set(Daemon.festivalChoice(festival, piper: Set(chosen.keys)).keys) == ["en", "it", "ca"])
        // Not installed: Festival speaks English again, and "auto" says nothing is missing.
        let lines = Reports()
        #expect(Daemon.piperVoices(ParleyConfig(), report: { lines.add($0) }, installed: [:]).isEmpty)
        #expect(lines.all.isEmpty)
        #expect(Set(Daemon.festivalChoice(ParleyConfig(), piper: []).keys) == ["en", "it", "ca"])
    }

    @Test func aLanguagesOwnEngineWinsAndAMissingPiperVoiceIsSaid() throws {
        let installed = ["en": Self.english]
        #expect(Daemon.piperVoices(try parse("[voice.en]\nengine = \"festival\""), report: nil, installed: installed).isEmpty)
        #expect(Daemon.piperVoices(try parse("[voice]\nengine = \"espeak-ng\""), report: nil, installed: installed).isEmpty)
        let onlyEnglish = try parse("[voice]\nengine = \"espeak-ng\"\n[voice.en]\nengine = \"piper\"")
        #expect(Daemon.piperVoices(onlyEnglish, report: nil, installed: installed) == ["en": Self.english])
        let lines = Reports()
        let spanish = try parse("[voice.es]\nengine = \"piper\"")
        #expect(Daemon.piperVoices(spanish, report: { lines.add($0) }, installed: installed) == ["en": Self.english], "English stays Piper's under auto")
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("Piper has no voice installed for es") == true)
    }

    @Test func theWorkersCommandLineNamesEachVoice() {
        let arguments = PiperSynthesizer.arguments(folder: "/e/piper", python: "/usr/bin/python3", voices: ["en": Self.english], rate: 22_050)
        #expect(arguments == [
            "/usr/bin/python3", "/e/piper/parley-piper", "--python-path", "/e/piper/python", "--rate", "22050",
            "--voice", "en=/engines/piper/voices/en_US-joe-medium.onnx",
        ])
        #expect(Self.english.name == "en_US-joe-medium" && Self.english.configFile.hasSuffix(".onnx.json"))
    }

    // MARK: - Speaking

    @Test func piperSpeaksItsLanguagesInPiecesAndTheFallbackTheOthers() throws {
        let synthesizer = synthesizer()
        synthesizer.prepare()
        #expect(script.started == 1, "started at once, warm for the first sentence")
        let english = try say(synthesizer, "Go forward, then left. Thanks.")
        #expect(english.count == 10 * ("Go forward".count + "then left.".count + "Thanks.".count))
        #expect(english.allSatisfy { $0 == 5 })
        #expect(script.requests == ["Go forward, then left.", "Thanks."])
        let spanish = try say(synthesizer, "Hola.", "es")
        #expect(spanish.count == 5 && espeak.texts == ["Hola."])
        #expect(script.started == 1 && reports.all.isEmpty)
        #expect(synthesizer.hasVoice(for: "en") && !synthesizer.hasVoice(for: "zz"))
    }

    // MARK: - Failures

    @Test func aDeadWorkerFallsBackToEspeakAndAFreshOneSpeaksNext() throws {
        let synthesizer = synthesizer()
        synthesizer.prepare()
        script.then(.crash)
        let samples = try say(synthesizer, "Where is the station?")
        #expect(samples.count == "Where is the station?".count, "espeak-ng said it")
        #expect(espeak.texts == ["Where is the station?"])
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("Piper failed (it exited (killed by signal 9))") == true)
        #expect(script.stopped == 1 && script.started == 2, "the dead one reaped, a fresh one started at once")
        #expect(try say(synthesizer, "Thank you.").first == 5, "Piper speaks the next text")
        #expect(reports.all.count == 1)
    }

    @Test func aHangFallsBackAndAFreshWorkerSpeaksNext() throws {
        let synthesizer = synthesizer()
        script.then(.hang)
        _ = try say(synthesizer, "Where is the station?")
        #expect(espeak.texts == ["Where is the station?"])
        #expect(reports.all.first?.contains("it did not answer within") == true)
        #expect(script.stopped == 1 && script.started == 2)
        #expect(try say(synthesizer, "Thank you.").first == 5)
    }

    @Test func aRefusalFallsBackWithoutReplacingTheWorker() throws {
        let synthesizer = synthesizer()
        script.then(.refuse)
        _ = try say(synthesizer, "Hello.")
        #expect(espeak.texts == ["Hello."])
        #expect(reports.all.count == 1 && reports.all.first?.contains("Piper could not speak en with en_US-joe-medium") == true)
        #expect(script.stopped == 0 && script.started == 1)
    }

    @Test func aWorkerThatCannotStartIsTriedAgainAtTheNextText() throws {
        let synthesizer = synthesizer()
        script.failToStart(true)
        synthesizer.prepare()
        _ = try say(synthesizer, "Hello.")
        #expect(espeak.texts == ["Hello."])
        #expect(reports.all.count == 2 && reports.all.allSatisfy { $0.contains("make engines") })
        script.failToStart(false)
        #expect(try say(synthesizer, "Hello again.").first == 5)
        #expect(script.started == 1)
    }

    @Test func afterAFailureTheRestOfTheTextIsEspeaks() throws {
        let synthesizer = synthesizer()
        // The second sentence is asked for while the first is handed on, and that worker dies.
        script.then(.speak, .crash)
        let samples = try say(synthesizer, "Good morning. Where is the station? Thanks.")
        #expect(Array(samples.prefix(10 * "Good morning.".count)).allSatisfy { $0 == 5 })
        #expect(espeak.texts == ["Where is the station?", "Thanks."], "no turn lost: every sentence is said")
        #expect(script.requests.count == 2)
    }

    @Test func aStopWhileSpeakingIsNoPiperFailureAndItsLeftoversAreSkipped() throws {
        struct Stop: Error {}
        let synthesizer = synthesizer()
        #expect(throws: SynthesisError.self) { try synthesizer.synthesize("Hello there, friend. Bye.", language: "en") { _ in throw Stop() } }
        #expect(espeak.texts.isEmpty && reports.all.isEmpty && script.stopped == 0)
        // What was made for the stopped text (its second piece, the next sentence) is not heard now.
        let samples = try say(synthesizer, "Thank you.")
        #expect(samples.count == 10 * "Thank you.".count)
    }

    // MARK: - The wire

    @Test func requestsAreJSONLines() throws {
        let request = String(decoding: PiperWire.say("say \"hi\"\nnow", language: "en", id: 3), as: UTF8.self)
        #expect(!request.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request.utf8)) as? [String: Any])
        #expect(object["type"] as? String == "say" && object["id"] as? Int == 3 && object["language"] as? String == "en")
        #expect(object["text"] as? String == "say \"hi\" now")
    }

    @Test func answersAreReadWhenWhole() throws {
        var said = Array(#"{"type": "info", "version": "1"}"#.utf8) + [10] + InMemoryPiper.audio(id: 1, samples: 2, last: false)
        said += Array(#"{"type": "audio", "id": 2, "samples": 2, "last": true}"#.utf8) + [10, 0x01, 0x00, 0xFF]
        #expect(try PiperWire.takeAnswer(for: 2, from: &said) == nil, "its info is skipped")
        #expect(try PiperWire.takeAnswer(for: 2, from: &said) == nil, "an answer to request 1 is skipped")
        #expect(try PiperWire.takeAnswer(for: 2, from: &said) == nil, "the audio is not all there")
        said += [0xFF]
        #expect(try PiperWire.takeAnswer(for: 2, from: &said) == .audio([1, -1], last: true))
        #expect(said.isEmpty)
        var error = Array(#"{"type": "error", "id": 4, "error": "no voice for 'fr'"}"#.utf8) + [10]
        #expect(try PiperWire.takeAnswer(for: 4, from: &error) == .refused("no voice for 'fr'"))
        var garbage = Array("Traceback (most recent call last):\n".utf8)
        #expect(throws: ChildFailure.self) { try PiperWire.takeAnswer(for: 1, from: &garbage) }
        var huge = Array(#"{"type": "audio", "id": 1, "samples": 999999999999}"#.utf8) + [10]
        #expect(throws: ChildFailure.self) { try PiperWire.takeAnswer(for: 1, from: &huge) }
    }

    // MARK: - A voice a user installs

    /// A voice's two files in `folder` (the model's bytes do not matter here).
    func writeVoice(_ name: String, in folder: URL, config: String) throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let model = folder.appendingPathComponent(name + ".onnx").path
        #expect(FileManager.default.createFile(atPath: model, contents: Data([1, 2, 3])))
        #expect(FileManager.default.createFile(atPath: model + ".json", contents: Data(config.utf8)))
        return model
    }

    static let spanishConfig = #"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "es"}, "language": {"code": "es_ES"}, "num_symbols": 256, "phoneme_id_map": {"a": [1]}}"#

    @Test func aVoiceIsCheckedAndItsLanguageRead() throws {
        let folder = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = try writeVoice("es_ES-davefx-medium", in: folder, config: Self.spanishConfig)
        let found = try PiperVoiceInstall.find(model: model, language: nil)
        #expect(found.language == "es" && found.sampleRate == 22_050 && found.config == model + ".json")
        #expect(try PiperVoiceInstall.find(model: model, language: "gl").language == "gl", "--language wins")

        func problem(_ model: String, _ language: String? = nil) -> String {
            do {
                _ = try PiperVoiceInstall.find(model: model, language: language)
                return ""
            } catch {
                return error.description
            }
        }
        #expect(problem(folder.appendingPathComponent("nothing.onnx").path).contains("does not exist"))
        #expect(problem(model + ".json").contains("not a .onnx file"))
        let lonely = folder.appendingPathComponent("lonely.onnx").path
        #expect(FileManager.default.createFile(atPath: lonely, contents: Data([1])))
        #expect(problem(lonely).contains("lonely.onnx.json is missing"))
        let chinese = try writeVoice("zh_CN-x", in: folder, config: Self.spanishConfig.replacingOccurrences(of: #""num_symbols""#, with: #""phoneme_type": "pinyin", "num_symbols""#))
        #expect(problem(chinese).contains("\"pinyin\", which needs packages"))
        let broken = try writeVoice("broken", in: folder, config: "{}")
        #expect(problem(broken).contains("lacks audio.sample_rate"))
        let nameless = try writeVoice("nameless", in: folder, config: #"{"audio": {"sample_rate": 16000}, "num_symbols": 1, "phoneme_id_map": {}}"#)
        #expect(problem(nameless).contains("give it with --language"))
        #expect(try PiperVoiceInstall.find(model: nameless, language: "ca").language == "ca")
    }

    @Test func anInstalledVoiceIsFoundAndSpeaksItsLanguageUnderAuto() throws {
        let source = try TestFiles.temporaryDirectory()
        let voices = try TestFiles.temporaryDirectory()
        defer { for folder in [source, voices] { try? FileManager.default.removeItem(at: folder) } }
        let model = try writeVoice("es_ES-davefx-medium", in: source, config: Self.spanishConfig)
        let found = try PiperVoiceInstall.find(model: model, language: nil)
        let installed = try PiperVoiceInstall.install(found, into: voices.path)
        #expect(installed == voices.path + "/es/es_ES-davefx-medium.onnx")
        #expect(FileManager.default.fileExists(atPath: installed + ".json"))
        #expect(throws: PiperVoiceInstall.Problem.self) { try PiperVoiceInstall.install(found, into: voices.path) }
        #expect(try PiperVoiceInstall.install(found, into: voices.path, replace: true) == installed, "--force replaces it")

        let found2 = PiperVoiceInstall.installed(in: [voices.path, source.path])
        let spanish = try #require(found2["es"])
        #expect(spanish.userInstalled && spanish.model == installed && spanish.name == "es_ES-davefx-medium")
        // Under "auto" a voice a user installed speaks its language; its own engine still wins.
        let all = found2.merging(["en": Self.english]) { user, _ in user }
        #expect(Set(Daemon.piperVoices(ParleyConfig(), report: nil, installed: all).keys) == ["en", "es"], "the user's voice beside the shipped English")
        #expect(Daemon.piperVoices(try parse("[voice.es]\nengine = \"espeak-ng\""), report: nil, installed: all).keys.sorted() == ["en"])
        #expect(ParleyConfig.voiceDirectories(environment: ["HOME": "/home/someone"]).first == "/home/someone/.local/share/parley/voices")
    }

    private func parse(_ text: String) throws -> ParleyConfig {
        try parseConfig(text, environment: ["HOME": "/home/someone", "XDG_RUNTIME_DIR": "/run/user/1000"])
    }
}
