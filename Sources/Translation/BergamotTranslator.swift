import Foundation
import ParleyCore
import Synchronization

/// Mozilla's Bergamot models (Firefox Translations), run by the translation worker
/// (`libexec/parley-bergamot`, Python and fxtranslate), which parleyd starts as a child and
/// speaks to in JSON lines (docs/protocol.md, "The translation worker").
///
/// It offers the directions whose model files are in its models folders: the models a user
/// installed (`parleyd model install-translation`), then those `make engines` installed
/// (English to Portuguese and back); a direction comes from the first folder that has it. The worker loads a direction the first time it is asked
/// for and keeps it warm; here, a new worker answers `describe` and each direction answers one
/// fixed word (`fixedProbeText`) before any sentence, within `coldStartTimeoutMs` (the worker
/// starts Python and reads a 17 MB model: a fraction of a second here, seconds on a slow
/// board), so a sentence always gets `timeoutMs`.
///
/// A request fails, with an error that says why, when the worker:
/// - exits or closes its output (it crashed, or was killed): the error says how it ended;
/// - does not answer within the limit (hung): it is killed;
/// - answers with an error (a model file missing, or that does not load): it goes on serving.
/// No request is tried twice here: the chain in front (`TranslatorChain`) gives the turn to the
/// next backend (Apertium), so no turn waits for a second try. A worker that failed is replaced
/// at once in the background, and the directions it had loaded are loaded again, so the next
/// sentence finds it warm. A worker that will not start is not started again for
/// `restDuration`: meanwhile requests fail at once.
///
/// An actor on a serial queue of its own (`QueueExecutor`), as `ApertiumTranslator`: the answer
/// is waited for with `poll`, which blocks, so it never runs on the concurrency pool, and the
/// worker (not `Sendable`) is its state.
public actor BergamotTranslator: Translator {
    private let executor = QueueExecutor(label: "parley.bergamot")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The folders of model folders (`en-pt/`, `pt-en/`), in the order they are searched.
    public nonisolated let modelsFolders: [String]
    private let startWorker: @Sendable () throws(TranslationError) -> any BergamotWorkerLink
    private let timeoutMs: Int
    private let coldStartTimeoutMs: Int
    private let notice: @Sendable (String) -> Void
    private var worker: (any BergamotWorkerLink)?
    /// The directions the running worker has answered.
    private var warm: Set<LanguagePair> = []
    /// Directions to load before anything else: those asked for at start, or those the worker
    /// that failed had loaded.
    private var toWarm: [LanguagePair]
    private var nextID = 1
    /// After a start that failed, no start before this (uptime nanoseconds).
    private var downUntil: UInt64 = 0
    private var startsMade = 0
    /// The directions the worker's `describe` answer named (nil before it answered).
    private nonisolated let declared = Mutex<Set<LanguagePair>?>(nil)

    /// How long a worker that would not start is left alone.
    static let restDuration: UInt64 = 30_000_000_000
    /// How long a new worker may take to answer `describe`, and a direction its first word, by default.
    public static let defaultColdStartTimeoutMs = 30_000

    /// The worker `folder/parley-bergamot` (from `make engines`: `folder` is the engines
    /// folder's `bergamot/`), run by `python`, with the models in `userModels` (searched first)
    /// and `folder/models`, and fxtranslate in `folder/python`. `warming`: directions loaded at the first call (the
    /// daemon's start-up check prepares a direction in the background), before its request.
    /// Nothing starts before that. `timeoutMs` bounds a sentence's answer; `coldStartTimeoutMs` (at least `timeoutMs`) a
    /// new worker's start and each direction's first answer. `notice` hears one line when a
    /// worker starts, and when one that failed is replaced.
    public init(
        folder: String, userModels: [String] = [], python: String = "/usr/bin/python3", warming: [LanguagePair] = [], timeoutMs: Int = 5_000,
        coldStartTimeoutMs: Int = BergamotTranslator.defaultColdStartTimeoutMs, notice: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        let folders = userModels + [folder + "/models"]
        let arguments = [python, folder + "/parley-bergamot"] + folders.flatMap { ["--models", $0] } + ["--python-path", folder + "/python"]
        self.init(
            modelsFolders: folders, warming: warming, timeoutMs: timeoutMs, coldStartTimeoutMs: coldStartTimeoutMs, notice: notice,
            startWorker: { () throws(TranslationError) -> any BergamotWorkerLink in try BergamotWorkerProcess.spawn(arguments) })
    }

    /// With the worker `startWorker` starts (tests: an in-memory one).
    init(
        modelsFolders: [String], warming: [LanguagePair] = [], timeoutMs: Int = 5_000,
        coldStartTimeoutMs: Int = BergamotTranslator.defaultColdStartTimeoutMs, notice: @escaping @Sendable (String) -> Void = { _ in },
        startWorker: @escaping @Sendable () throws(TranslationError) -> any BergamotWorkerLink
    ) {
        self.modelsFolders = modelsFolders
        self.timeoutMs = timeoutMs
        self.coldStartTimeoutMs = max(timeoutMs, coldStartTimeoutMs)
        self.notice = notice
        self.startWorker = startWorker
        toWarm = warming
    }

    // No deinit: the worker goes with the actor, and a process stops itself in its own deinit.

    // MARK: - Models

    /// The files a direction's model needs, by Mozilla's naming: the model and its vocabulary
    /// (one shared, or one for each side).
    public static func modelFiles(for pair: LanguagePair, in modelsFolder: String) -> [[String]] {
        let (folder, code) = ("\(modelsFolder)/\(pair.source)-\(pair.target)", pair.source + pair.target)
        let model = "\(folder)/model.\(code).intgemm.alphas.bin"
        return [[model, "\(folder)/vocab.\(code).spm"], [model, "\(folder)/srcvocab.\(code).spm", "\(folder)/trgvocab.\(code).spm"]]
    }

    /// Whether the models folder holds a model for `pair`.
    public static func hasModel(for pair: LanguagePair, in modelsFolder: String) -> Bool {
        guard pair.source != pair.target, [pair.source, pair.target].allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isLetter) }) else { return false }
        return modelFiles(for: pair, in: modelsFolder).contains { $0.allSatisfy { FileManager.default.fileExists(atPath: $0) } }
    }

    /// Whether one of the models folders holds a model for `pair`.
    public static func hasModel(for pair: LanguagePair, in modelsFolders: [String]) -> Bool {
        modelsFolders.contains { hasModel(for: pair, in: $0) }
    }

    /// A direction whose model is in the folder (and, once the worker has described itself, one
    /// it names).
    public nonisolated func supports(_ pair: LanguagePair) -> Bool {
        Self.hasModel(for: pair, in: modelsFolders) && declared.withLock { $0?.contains(pair) ?? true }
    }

    /// The directions whose models are in the folder.
    public nonisolated func availablePairs() async throws -> [LanguagePair] {
        let folders = Set(modelsFolders.flatMap { (try? FileManager.default.contentsOfDirectory(atPath: $0)) ?? [] })
        return folders.compactMap { name -> LanguagePair? in
            let parts = name.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            let pair = LanguagePair(String(parts[0]), String(parts[1]))
            return supports(pair) ? pair : nil
        }
        .sorted { ($0.source, $0.target) < ($1.source, $1.target) }
    }

    // MARK: - Translating

    public func prepare(_ pair: LanguagePair) async throws(TranslationError) {
        warmPending()
        try warmUp(pair)
    }

    public func translate(_ text: String, from source: String, to target: String) async throws(TranslationError) -> String {
        warmPending()
        let pair = LanguagePair(source, target)
        guard !text.allSatisfy(\.isWhitespace) else { return "" }
        let worker = try warmUp(pair)
        return try ask(worker, text, pair, timeoutMs: timeoutMs)
    }

    /// How many workers were started (the first included).
    public var starts: Int { startsMade }

    /// The running worker's process id (tests kill or stop it).
    public var workerProcess: pid_t? { worker?.process }

    /// Whether the running worker has answered in `pair` (tests).
    func isWarm(_ pair: LanguagePair) -> Bool { warm.contains(pair) }

    /// Loads the directions waiting to be loaded (asked for at start, or loaded by a worker
    /// that failed); one that fails is left for its first sentence.
    private func warmPending() {
        let pairs = toWarm
        toWarm = []
        for pair in pairs { _ = try? warmUp(pair) }
    }

    /// The running worker, with `pair` loaded: a new worker answers `describe` first, and a new
    /// direction one fixed word, each within the cold start's allowance.
    @discardableResult
    private func warmUp(_ pair: LanguagePair) throws(TranslationError) -> any BergamotWorkerLink {
        guard Self.hasModel(for: pair, in: modelsFolders) else {
            throw TranslationError("no Bergamot \(pair) model in \(modelsFolders.joined(separator: " or ")); run `make engines`, or turn Bergamot off ([translator] bergamot = false)")
        }
        let worker = try running()
        if warm.contains(pair) { return worker }
        _ = try ask(worker, fixedProbeText, pair, timeoutMs: coldStartTimeoutMs)
        warm.insert(pair)
        return worker
    }

    /// The running worker, started (and its `describe` answered) if there is none.
    private func running() throws(TranslationError) -> any BergamotWorkerLink {
        if let worker { return worker }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now >= downUntil else {
            throw TranslationError("the Bergamot worker could not start a moment ago; it is tried again in \((downUntil - now) / 1_000_000_000 + 1) s")
        }
        let started = ContinuousClock.now
        let worker: any BergamotWorkerLink
        do {
            worker = try startWorker()
        } catch {
            downUntil = DispatchTime.now().uptimeNanoseconds + Self.restDuration
            throw error
        }
        startsMade += 1
        let answer: BergamotMessage.Answer
        do {
            let line = try worker.exchange(BergamotMessage.encode(BergamotMessage.Describe()), timeoutMs: coldStartTimeoutMs)
            guard let decoded = BergamotMessage.decode(line), decoded.type == "info" else {
                throw BergamotWorkerFailure.broken("it answered describe with \(String(decoding: line.prefix(200), as: UTF8.self))")
            }
            answer = decoded
        } catch {
            worker.stop()
            downUntil = DispatchTime.now().uptimeNanoseconds + Self.restDuration
            throw TranslationError("the Bergamot worker did not start: \(error); run `make engines`, and see parleyd's log for what it said")
        }
        declared.withLock { $0 = answer.pairs.map { Set($0.map { LanguagePair($0.from, $0.to) }) } }
        let process = worker.process.map { " (process \($0))" } ?? ""
        notice("bergamot is ready: its worker\(process) started in \((ContinuousClock.now - started).milliseconds) ms")
        self.worker = worker
        warm = []
        return worker
    }

    /// Asks the worker to translate `text` in `pair`. A worker that fails (exits, hangs, or
    /// answers what is not an answer) is stopped and replaced in the background; an `error`
    /// answer fails this request alone.
    private func ask(_ worker: any BergamotWorkerLink, _ text: String, _ pair: LanguagePair, timeoutMs: Int) throws(TranslationError) -> String {
        let id = nextID
        nextID += 1
        let request = BergamotMessage.Translate(id: id, text: text, from: pair.source, to: pair.target)
        let line: [UInt8]
        do {
            line = try worker.exchange(BergamotMessage.encode(request), timeoutMs: timeoutMs)
        } catch {
            throw replace(worker, because: "the Bergamot worker gave no \(pair) translation: \(error)")
        }
        guard let answer = BergamotMessage.decode(line), answer.id == id else {
            throw replace(worker, because: "the Bergamot worker answered \(String(decoding: line.prefix(200), as: UTF8.self)) to request \(id)")
        }
        switch answer.type {
        case "translation":
            guard let translation = answer.text else { throw replace(worker, because: "the Bergamot worker's \(pair) answer had no text") }
            return translation
        case "error":
            throw TranslationError("Bergamot \(pair): \(answer.error ?? "the worker said it failed")")
        default:
            throw replace(worker, because: "the Bergamot worker answered a \(answer.type) to a translate request")
        }
    }

    /// Stops a worker that failed, starts a fresh one in the background (its directions loaded
    /// again), and returns the error for the request.
    private func replace(_ failed: any BergamotWorkerLink, because reason: String) -> TranslationError {
        failed.stop()
        if worker === failed {
            worker = nil
            toWarm = Array(warm).sorted { ($0.source, $0.target) < ($1.source, $1.target) }
            warm = []
        }
        Task { self.restart() }
        return TranslationError("\(reason); it was stopped, and a fresh worker is started for the next sentence")
    }

    /// Starts a worker in place of one that failed, and loads what it had loaded.
    private func restart() {
        guard worker == nil, !toWarm.isEmpty else { return }
        warmPending()
    }
}
