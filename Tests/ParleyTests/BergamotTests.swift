import Foundation
import ParleyCore
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyConfig
@testable import ParleyTranslation

/// What the in-memory worker does with each translate request, in order; once the list is
/// used up, it translates.
enum WorkerStep: Sendable {
    case translate
    /// Dies: its output closes.
    case crash
    /// Never answers: the wait runs out (at once here; the real worker waits `timeoutMs`).
    case hang
    /// Answers an error and goes on.
    case error(String)
}

/// The workers a `BergamotTranslator` starts, in memory: each answers `describe` with
/// `pairs`, and a translate request as `steps` say ("[pt] hello" for a translation into pt).
final class WorkerScript: Sendable {
    private struct State {
        var steps: [WorkerStep] = []
        var started = 0
        var stopped = 0
        var texts: [String] = []
        var failsToStart = false
    }

    let pairs: [LanguagePair]
    private let state = Mutex(State())

    init(pairs: [LanguagePair] = [LanguagePair("en", "pt"), LanguagePair("pt", "en")]) {
        self.pairs = pairs
    }

    func then(_ steps: WorkerStep...) { state.withLock { $0.steps += steps } }
    func failToStart(_ fails: Bool) { state.withLock { $0.failsToStart = fails } }
    var started: Int { state.withLock { $0.started } }
    var stopped: Int { state.withLock { $0.stopped } }
    /// Every text translate requests carried, the warming words included.
    var texts: [String] { state.withLock { $0.texts } }

    func start() throws(TranslationError) -> any BergamotWorkerLink {
        let fails = state.withLock { state -> Bool in
            if !state.failsToStart { state.started += 1 }
            return state.failsToStart
        }
        if fails { throw TranslationError("cannot start /usr/bin/python3: No such file or directory") }
        return InMemoryWorker(script: self)
    }

    fileprivate func next(_ text: String) -> WorkerStep {
        state.withLock { state in
            state.texts.append(text)
            return state.steps.isEmpty ? .translate : state.steps.removeFirst()
        }
    }

    fileprivate func stoppedOne() { state.withLock { $0.stopped += 1 } }
}

private final class InMemoryWorker: BergamotWorkerLink {
    let script: WorkerScript
    var dead = false
    var stopped = false
    var process: pid_t? { nil }

    init(script: WorkerScript) { self.script = script }

    func exchange(_ request: [UInt8], timeoutMs: Int) throws(BergamotWorkerFailure) -> [UInt8] {
        guard !dead, !stopped else { throw .exited(how: nil) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request)) as? [String: Any], let type = object["type"] as? String else {
            return Array(#"{"type":"error","error":"not JSON"}"#.utf8)
        }
        if type == "describe" {
            let pairs = script.pairs.map { ["from": $0.source, "to": $0.target] }
            return Self.line(["type": "info", "name": "in-memory", "pairs": pairs])
        }
        let id = object["id"] as? Int ?? 0
        let text = object["text"] as? String ?? ""
        let target = object["to"] as? String ?? ""
        switch script.next(text) {
        case .translate:
            return Self.line(["type": "translation", "id": id, "text": "[\(target)] \(text)"])
        case .crash:
            dead = true
            throw .exited(how: "killed by signal 9")
        case .hang:
            throw .timedOut(timeoutMs)
        case .error(let message):
            return Self.line(["type": "error", "id": id, "error": message])
        }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        script.stoppedOne()
    }

    static func line(_ object: [String: Any]) -> [UInt8] {
        Array((try? JSONSerialization.data(withJSONObject: object)) ?? Data())
    }
}

/// A models folder with empty model files for `pairs`, as `make engines` lays them out.
func modelsFolder(_ pairs: [LanguagePair]) throws -> URL {
    let folder = try TestFiles.temporaryDirectory()
    for pair in pairs {
        let code = pair.source + pair.target
        let dir = folder.appendingPathComponent("\(pair.source)-\(pair.target)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for file in ["model.\(code).intgemm.alphas.bin", "vocab.\(code).spm", "lex.50.50.\(code).s2t.bin"] {
            try Data().write(to: dir.appendingPathComponent(file))
        }
    }
    return folder
}

@Suite("Bergamot: the translator and its worker, in memory")
struct BergamotTranslatorTests {
    let enPt = LanguagePair("en", "pt")

    func translator(_ script: WorkerScript, models: URL, warming: [LanguagePair] = []) -> BergamotTranslator {
        BergamotTranslator(modelsFolders: [models.path], warming: warming, timeoutMs: 1_000, startWorker: { () throws(TranslationError) in try script.start() })
    }

    @Test func aDirectionIsWarmedWithTheFixedWordThenTranslatesOnTheSameWorker() async throws {
        let models = try modelsFolder([enPt, LanguagePair("pt", "en")])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        let bergamot = translator(script, models: models)
        #expect(try await bergamot.translate("Good morning", from: "en", to: "pt") == "[pt] Good morning")
        #expect(try await bergamot.translate("Obrigado", from: "pt", to: "en") == "[en] Obrigado")
        #expect(try await bergamot.translate("Thanks", from: "en", to: "pt") == "[pt] Thanks")
        // One worker; each direction answered the fixed word once, before its first sentence.
        #expect(script.started == 1 && script.stopped == 0)
        #expect(script.texts == [fixedProbeText, "Good morning", fixedProbeText, "Obrigado", "Thanks"])
        // A text of blanks asks nothing.
        #expect(try await bergamot.translate("  ", from: "en", to: "pt") == "")
        #expect(script.texts.count == 5)
    }

    @Test func directionsAskedForAtStartAreLoadedBeforeAnySentence() async throws {
        let models = try modelsFolder([enPt, LanguagePair("pt", "en")])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        let bergamot = translator(script, models: models, warming: [enPt, LanguagePair("pt", "en")])
        #expect(try await bergamot.translate("Hi", from: "pt", to: "en") == "[en] Hi")
        #expect(script.texts == [fixedProbeText, fixedProbeText, "Hi"])
        #expect(await bergamot.isWarm(enPt))
    }

    @Test func aCrashFailsTheRequestSaysHowAndAFreshWorkerServesTheNext() async throws {
        let models = try modelsFolder([enPt])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        let bergamot = translator(script, models: models)
        _ = try await bergamot.translate("one", from: "en", to: "pt")
        script.then(.crash)
        do {
            _ = try await bergamot.translate("two", from: "en", to: "pt")
            Issue.record("a crashed worker must fail the request")
        } catch {
            #expect(error.description.contains("it exited (killed by signal 9)"), "\(error)")
            #expect(error.description.contains("a fresh worker is started"), "\(error)")
        }
        // The sentence was not asked again (the chain gives it to Apertium); the next one goes
        // to a fresh worker, warmed first.
        #expect(try await bergamot.translate("three", from: "en", to: "pt") == "[pt] three")
        #expect(script.started == 2 && script.stopped == 1)
        #expect(script.texts.filter { $0 == "two" }.count == 1)
        #expect(script.texts.suffix(2) == [fixedProbeText, "three"])
    }

    @Test func aHungWorkerIsStoppedAndTheNextRequestGoesToAFreshOne() async throws {
        let models = try modelsFolder([enPt])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        let bergamot = translator(script, models: models)
        _ = try await bergamot.translate("one", from: "en", to: "pt")
        script.then(.hang)
        do {
            _ = try await bergamot.translate("two", from: "en", to: "pt")
            Issue.record("a hung worker must fail the request")
        } catch {
            #expect(error.description.contains("did not answer within 1000 ms"), "\(error)")
        }
        #expect(script.stopped == 1)
        #expect(try await bergamot.translate("three", from: "en", to: "pt") == "[pt] three")
        #expect(script.started == 2)
    }

    @Test func anErrorAnswerFailsOneRequestAndKeepsTheWorker() async throws {
        let models = try modelsFolder([enPt])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        let bergamot = translator(script, models: models)
        _ = try await bergamot.translate("one", from: "en", to: "pt")
        script.then(.error("the model in en-pt does not load: trace ended mid-record"))
        await #expect(throws: TranslationError.self) { try await bergamot.translate("two", from: "en", to: "pt") }
        #expect(try await bergamot.translate("three", from: "en", to: "pt") == "[pt] three")
        #expect(script.started == 1 && script.stopped == 0)
    }

    @Test func aMissingModelIsNotOfferedAndSaysWhatToDo() async throws {
        let models = try modelsFolder([enPt])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        let bergamot = translator(script, models: models)
        #expect(bergamot.supports(enPt) && !bergamot.supports(LanguagePair("pt", "en")))
        #expect(try await bergamot.availablePairs() == [enPt])
        do {
            _ = try await bergamot.translate("olá", from: "pt", to: "en")
            Issue.record("a missing model must fail the request")
        } catch {
            #expect(error.description.contains("no Bergamot pt-en model") && error.description.contains("make engines"), "\(error)")
        }
        #expect(script.started == 0, "nothing is started for a model that is not there")
        // A model removed while parleyd runs is no longer offered.
        try FileManager.default.removeItem(at: models.appendingPathComponent("en-pt/model.enpt.intgemm.alphas.bin"))
        #expect(!bergamot.supports(enPt))
    }

    @Test func onlyTheDirectionsTheWorkerNamesAreOffered() async throws {
        let models = try modelsFolder([enPt, LanguagePair("pt", "en")])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript(pairs: [enPt])
        let bergamot = translator(script, models: models)
        #expect(bergamot.supports(LanguagePair("pt", "en")), "before it describes itself, the files decide")
        _ = try await bergamot.translate("hi", from: "en", to: "pt")
        #expect(!bergamot.supports(LanguagePair("pt", "en")))
    }

    @Test func aWorkerThatWillNotStartIsLeftAloneForAWhile() async throws {
        let models = try modelsFolder([enPt])
        defer { try? FileManager.default.removeItem(at: models) }
        let script = WorkerScript()
        script.failToStart(true)
        let bergamot = translator(script, models: models)
        await #expect(throws: TranslationError.self) { try await bergamot.translate("one", from: "en", to: "pt") }
        script.failToStart(false)
        // Within the rest, a request fails at once, without a start.
        do {
            _ = try await bergamot.translate("two", from: "en", to: "pt")
            Issue.record("a worker that would not start is not asked again at once")
        } catch {
            #expect(error.description.contains("could not start a moment ago"), "\(error)")
        }
        #expect(script.started == 0)
    }

    @Test func theModelFilesFollowMozillasNames() throws {
        let files = BergamotTranslator.modelFiles(for: enPt, in: "/m")
        #expect(files.first == ["/m/en-pt/model.enpt.intgemm.alphas.bin", "/m/en-pt/vocab.enpt.spm"])
        #expect(!BergamotTranslator.hasModel(for: LanguagePair("../x", "pt"), in: "/m"))
    }

    @Test func requestsAndAnswersAreOneJSONLineEach() throws {
        let request = BergamotMessage.encode(BergamotMessage.Translate(id: 3, text: "two\nlines «ok»", from: "en", to: "pt"))
        #expect(!request.contains(UInt8(ascii: "\n")))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(request)) as? [String: Any])
        #expect(object["type"] as? String == "translate" && object["text"] as? String == "two\nlines «ok»" && object["id"] as? Int == 3)
        let answer = try #require(BergamotMessage.decode(Array(#"{"type":"translation","text":"olá","id":3}"#.utf8)))
        #expect(answer.type == "translation" && answer.text == "olá" && answer.id == 3)
        #expect(BergamotMessage.decode(Array("not json".utf8)) == nil)
    }
}

@Suite("Bergamot: a model a user installs")
struct BergamotModelInstallTests {
    func folder(_ names: [String], in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in names { try Data(name.utf8).write(to: directory.appendingPathComponent(name)) }
    }

    @Test func theDirectionComesFromTheModelsNameAndItsFilesAreFound() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // As Mozilla's archives unpack: one folder below.
        try folder(["model.enes.intgemm.alphas.bin", "vocab.enes.spm", "lex.50.50.enes.s2t.bin", "LICENSE", "metadata.json"], in: dir.appendingPathComponent("enes"))
        let files = try BergamotModelInstall.find(in: dir.path)
        #expect(files.pair == LanguagePair("en", "es"))
        #expect(files.paths.map { ($0 as NSString).lastPathComponent } == ["model.enes.intgemm.alphas.bin", "vocab.enes.spm", "lex.50.50.enes.s2t.bin", "LICENSE"])
        let installed = try BergamotModelInstall.install(files, into: dir.appendingPathComponent("translation").path)
        #expect(installed.hasSuffix("/translation/en-es"))
        #expect(BergamotTranslator.hasModel(for: LanguagePair("en", "es"), in: dir.appendingPathComponent("translation").path))
        // Not twice without --force.
        #expect(throws: BergamotModelInstall.Problem.self) { try BergamotModelInstall.install(files, into: dir.appendingPathComponent("translation").path) }
        #expect(try BergamotModelInstall.install(files, into: dir.appendingPathComponent("translation").path, replace: true) == installed)
    }

    @Test func aFolderWithoutAUsableModelSaysWhatIsWrong() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func problem(_ names: [String], _ name: String) throws -> String {
            let model = dir.appendingPathComponent(name)
            try folder(names, in: model)
            do {
                _ = try BergamotModelInstall.find(in: model.path)
                return "found"
            } catch {
                return error.description
            }
        }
        #expect(try problem([], "empty").contains("no model.xxyy.intgemm.alphas.bin"))
        #expect(try problem(["model.enes.intgemm.alphas.bin"], "novocab").contains("no vocab.enes.spm"))
        #expect(try problem(["model.enes.intgemm.alphas.bin", "srcvocab.enes.spm"], "split").contains("no trgvocab.enes.spm"))
        #expect(try problem(["model.enes.intgemm.alphas.bin", "model.esen.intgemm.alphas.bin"], "two").contains("2 models"))
        #expect(try problem(["model.english.intgemm.alphas.bin", "vocab.english.spm"], "name").contains("two two-letter codes"))
        #expect(try problem(["model.enen.intgemm.alphas.bin", "vocab.enen.spm"], "same").contains("two two-letter codes"))
        #expect(try problem([], "missing/deeper").contains("no model"))
        #expect((try? BergamotModelInstall.find(in: dir.path + "/nowhere")) == nil)
    }
}
