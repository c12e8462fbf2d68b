import Foundation
import Logging
import ParleyAudio
import ParleyConfig
import ParleyControl
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import ParleySynthesis
import ParleySystemd
import ParleyTranslation
internal import ParleyWeb
import ServiceLifecycle
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Why the daemon stopped early: one line that says what to do, and the exit code.
public struct DaemonFailure: Error, CustomStringConvertible {
    public enum Code: Int32, Sendable {
        case runtime = 1
        case config = 2
        case audioDevice = 3
        /// Another parleyd holds this control socket or history.
        case alreadyRunning = 4
    }
    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// How parleyd was asked to run.
public struct DaemonOptions: Sendable {
    /// The TOML config; nil for the built-in defaults.
    public var configPath: String?
    /// File mode: a recording to run through the pipeline instead of the microphone.
    public var input: String?
    /// File mode: where to write what would have been played.
    public var output: String?
    /// File mode: read the recording at the speed of a microphone (for measuring latency).
    public var pace: Bool

    public init(configPath: String?, input: String? = nil, output: String? = nil, pace: Bool = false) {
        self.configPath = configPath
        self.input = input
        self.output = output
        self.pace = pace
    }
}

/// Builds and runs parleyd. `@main` only parses arguments and calls `Daemon.run`.
public enum Daemon {
    /// Runs until the recording ends (file mode) or SIGTERM/SIGINT (live). Throws `DaemonFailure`.
    ///
    /// (Untyped `throws` on purpose: Swift 6.3's optimizer crashes on this function with typed throws.)
    public static func run(_ options: DaemonOptions, logger baseLogger: Logger) async throws {
        // A translator pipeline that dies must not take the daemon with it.
        signal(SIGPIPE, SIG_IGN)
        // SIGHUP is trapped from the start: one that arrives while the models load waits for
        // the reload service instead of killing the daemon (its default action).
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        // Read (and removed from the environment) before any child process starts.
        let notifier = SystemdNotifier()
        let activatedSocket = SocketActivation.controlSocket()
        let config = try loadConfig(options)
        ParleyLogLevel.level = Logger.Level(rawValue: config.logLevel) ?? .info
        // `[history] enabled = false` promises nothing said on disk: the journal included.
        ParleyLogLevel.transcripts = config.logTranscripts && config.historyEnabled
        let logger = baseLogger
        try requireSpeechModel(config)
        // One parleyd per control socket and per history, decided before anything is loaded or
        // opened: a second one leaves the first one's socket, microphone and database alone.
        // A socket or history path nothing can be made in says so in one line, before any
        // lock file is tried there.
        if options.input == nil && activatedSocket == nil {
            try prepareFolder(of: config.controlSocket, mode: 0o750, key: "[control] socket", fix: "a path in a writable folder, such as the default $XDG_RUNTIME_DIR/parley/control.sock")
        }
        if config.historyEnabled {
            try prepareFolder(of: config.historyPath, mode: 0o700, key: "[history] path", fix: "a file in a writable folder, or enabled = false")
        }
        let notice: (String) -> Void = { logger.notice("\($0)") }
        let locks = [
            options.input == nil ? try InstanceLock.acquire(for: config.controlSocket, what: "control socket", folderMode: 0o750, logger: notice) : nil,
            config.historyEnabled ? try InstanceLock.acquire(for: config.historyPath, what: "history", folderMode: 0o700, logger: notice) : nil,
        ]
        defer { withExtendedLifetime(locks) {} }
        let started = Date()
        let synthesizer = try makeSynthesizer(config)
        let recognizers = try RecognizerPool(config: config, logger: logger, meanDevice: options.input == nil ? config.captureDevice : nil)
        let translator = try makeTranslator(config)
        // A configured backend that does not answer is said now, not at the first turn.
        Task { [pairs = [LanguagePair(config.speakerA, config.speakerB), LanguagePair(config.speakerB, config.speakerA)]] in
            for line in await translator.checkBackends(pairs) { logger.warning("\(line)") }
        }
        let history = try openHistory(config)
        let events = EventBus()
        let writer = makeHistoryWriter(config, history, events: events, logger: logger)
        if let aside = history.movedAside {
            logger.error("the history was corrupt; it was moved to \(aside) and a new one started")
        }
        let journalFolders = config.historyEnabled ? historyJournalFolders(config) : []
        for restored in HistoryJournal.restore(into: history, historyPath: config.historyPath, folders: journalFolders) {
            if let problem = restored.problem {
                logger.error("the turns kept in \(restored.journal) at the last exit cannot be stored yet (\(problem)); they stay there for the next start")
            } else {
                logger.notice("stored \(restored.stored) turns kept in \(restored.journal) at the last exit, in a session of their own")
            }
        }
        // The devices last: from here on nothing can fail before the interpreter owns them.
        let source = try openCapture(options, config)
        let playback = try openPlayback(options, config, sampleRate: synthesizer.sampleRate)
        // Sessions and turns go through the queue: a full disk or a locked file is retried
        // while the conversation goes on.
        writer.startSession(speakerA: config.speakerA, speakerB: config.speakerB)
        let voices = synthesizer.languages
        let interpreter = Interpreter.make(
            config: config,
            engines: EngineAccess(
                recognizer: recognizers.recognizer(for:), lane: recognizers.lane(for:), canHear: recognizers.canHear,
                canSpeak: { voices.contains($0) }, translator: translator),
            synthesizer: synthesizer, playback: playback, capture: source, history: writer,
            events: events, logger: logger,
            observer: Interpreter.Observer(heartbeat: { notifier.watchdog() }, stateChanged: { notifier.status(statusLine($0)) }))
        for speaker in Speaker.allCases where !interpreter.isHearable(speaker) {
            logger.warning(
                "speaker \(speaker.rawValue) cannot be heard; they can still type with `parley say`",
                metadata: ["hint": "\(notHearableHint(language: config.language(of: speaker)))"])
        }

        // One service group in both modes: the conversation, and either the file-mode printer
        // or the control socket and reload. The conversation ending (a recording's end, SIGTERM)
        // shuts the others down; history is flushed once, before the socket closes.
        let conversation = ConversationService(
            interpreter: interpreter, notifier: notifier, history: writer,
            journal: config.historyEnabled ? (config.historyPath, journalFolders) : nil, logger: logger)
        // Graceful shutdown runs in reverse order: the conversation (listed last) finishes its
        // turn and flushes history first, while the socket still answers and the printer prints.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if options.input != nil {
            services.append(.init(service: TurnPrinter(subscription: events.subscribe())))
        } else {
            let reloader = Reloader(path: options.configPath, initial: config, interpreter: interpreter, notifier: notifier, logger: logger)
            var control = DaemonControl(
                interpreter: interpreter, config: config, history: history, events: events, writer: writer,
                started: started, logger: logger, reloader: reloader)
            // The caption page acts through the same handler, which it limits to say, replay and swap.
            if config.web.enabled {
                let web = WebServer(
                    settings: WebSettings(
                        listen: config.web.listen, port: config.web.port,
                        code: config.web.pairing == .code ? WebSettings.randomCode() : nil),
                    handler: control, events: events, logger: logger)
                control.web = web
                services.append(.init(service: WebService(server: web, logger: logger), successTerminationBehavior: .ignore))
            }
            // Ready once capture is open, the models are loaded and the socket answers.
            let server = ControlServer(
                path: config.controlSocket, inheritedSocket: activatedSocket, group: config.controlGroup,
                idleTimeout: .seconds(config.controlIdleTimeoutSeconds), handler: control, logger: logger
            ) {
                let milliseconds = Int(Date().timeIntervalSince(started) * 1000)
                logger.info(
                    "ready",
                    metadata: [
                        "a": "\(config.speakerA)", "b": "\(config.speakerB)", "mode": "\(config.mode.rawValue)",
                        "startup_ms": "\(milliseconds)",
                    ])
                notifier.ready(status: statusLine(interpreter.snapshot))
            }
            services.append(.init(service: ControlService(server: server)))
            services.append(.init(service: ReloadService(reloader: reloader, hangups: hangups, logger: logger)))
        }
        services.append(.init(service: conversation, successTerminationBehavior: .gracefullyShutdownGroup))
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let failure as DaemonFailure {
            throw failure
        } catch {
            throw DaemonFailure(.runtime, "\(error)")
        }
        if let sessionID = writer.currentSessionID {
            try? await history.endSession(id: sessionID)
        }
    }

    /// The microphone, or in file mode the recording.
    static func openCapture(_ options: DaemonOptions, _ config: ParleyConfig) throws(DaemonFailure) -> CaptureSource {
        try failing(options) { () throws(AudioError) in
            if let input = options.input {
                return CaptureSource(first: try FileCapture(path: input, pace: options.pace)) { () throws(AudioError) in
                    throw AudioError(.io, "the recording \(input) cannot be reopened")
                }
            }
            let device = config.captureDevice
            return CaptureSource(first: try ALSACapture(device: device)) { () throws(AudioError) in
                try ALSACapture(device: device)
            }
        }
    }

    /// The speaker, or in file mode the .wav that gets what would have been played.
    static func openPlayback(_ options: DaemonOptions, _ config: ParleyConfig, sampleRate: Int) throws(DaemonFailure) -> any AudioPlayback {
        try failing(options) { () throws(AudioError) -> any AudioPlayback in
            if let output = options.output {
                return try WAVRecorder(path: output, sampleRate: sampleRate)
            }
            let output = config.playbackDevice
            return ReopeningPlayback(device: try ALSAPlayback(device: output, sampleRate: sampleRate)) { () throws(AudioError) in
                try ALSAPlayback(device: output, sampleRate: sampleRate)
            }
        }
    }

    /// A device that cannot be opened stops start-up: exit 3, or 1 for a recording or a format.
    private static func failing<T>(_ options: DaemonOptions, _ open: () throws(AudioError) -> T) throws(DaemonFailure) -> T {
        do {
            return try open()
        } catch {
            let code: DaemonFailure.Code = error.kind == .format || options.input != nil ? .runtime : .audioDevice
            throw DaemonFailure(code, error.description)
        }
    }

    /// The history write queue, which logs and reports when storage fails and recovers.
    static func makeHistoryWriter(_ config: ParleyConfig, _ history: AppDatabase, events: EventBus, logger: Logger) -> HistoryWriter {
        HistoryWriter(
            store: history, retention: Retention(maxTurns: config.historyMaxTurns, maxAgeDays: config.historyMaxAgeDays),
            sessionGap: TimeInterval(config.sessionGapMinutes * 60), speakerA: config.speakerA, speakerB: config.speakerB,
            onHealthChange: { problem in
                if let problem {
                    let message = "history writes are failing; turns are kept in memory and retried: \(problem)"
                    logger.error("\(message)")
                    events.publish(EventType.error, ErrorEvent(message: message))
                } else {
                    logger.notice("history writes work again; the turns kept in memory are stored")
                }
            },
            onFileRecreated: {
                logger.error(
                    "the history file \(config.historyPath) was deleted while parleyd ran; a new one was made there and the turns since are stored in it")
            })
    }

    /// At exit: waits (up to `timeout`, or `failingStoreExitWait` when writes already fail) for
    /// the turns still queued. Turns that still cannot be stored
    /// (a full disk) are saved to a journal (`journal`: the history's path and the folders to
    /// try; nil when history is off, since then nothing may go to disk) and stored at the next
    /// start; what cannot be saved either is logged as lost. Whoever waits for such a turn
    /// (`say`) is answered, so that no client connection holds up the exit.
    static func flushHistory(
        _ writer: HistoryWriter, journal: (path: String, folders: [String])?, timeout: Duration = .seconds(Int64(Interpreter.stopTimeout)),
        logger: Logger
    ) async {
        // A store that already fails (a full disk) is not waited on for the whole stop
        // timeout: it had its retries, the turns go to the journal, and the stop stays quick.
        let wait = writer.health.lastError == nil ? timeout : min(timeout, failingStoreExitWait)
        if !(await writer.flush(timeout: wait)) {
            let error = writer.health.lastError ?? "unknown error"
            var saved: (count: Int, to: String)?
            var unsaved: String?
            let given = writer.failPending { turns in
                guard let journal else { return nil }
                do {
                    let path = try HistoryJournal.spill(turns, historyPath: journal.path, folders: journal.folders)
                    saved = (turns.count, path)
                    return path
                } catch {
                    unsaved = "\(error)"
                    return nil
                }
            }
            if let saved {
                logger.notice("\(saved.count) turns could not be stored before exit (\(error)); they were saved to \(saved.to) and are stored at the next start")
            } else {
                let why = unsaved.map { "; nor saved to a journal: \($0)" } ?? ""
                logger.error("\(given) history writes could not be stored before exit: \(error)\(why)")
            }
        }
    }

    /// How long the exit waits for a history store that was already failing.
    static let failingStoreExitWait: Duration = .seconds(2)

    /// Where turns that cannot be stored at exit may wait for the next start: the history's
    /// own folder (enough when only the database is full), the cache folder, the control
    /// socket's runtime folder.
    static func historyJournalFolders(_ config: ParleyConfig) -> [String] {
        [
            (config.historyPath as NSString).deletingLastPathComponent, config.recognizerCacheDirectory,
            (config.controlSocket as NSString).deletingLastPathComponent,
        ].compactMap { $0 }.filter { !$0.isEmpty }
    }

    // MARK: - Building the engines

    static func loadConfig(_ options: DaemonOptions) throws(DaemonFailure) -> ParleyConfig {
        guard let path = options.configPath else { return ParleyConfig() }
        do {
            return try ParleyConfig.load(path: path)
        } catch {
            throw DaemonFailure(.config, error.description)
        }
    }

    /// The backends of `[translator] backends`, in order, behind one chain.
    static func makeTranslator(
        _ config: ParleyConfig, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(DaemonFailure) -> TranslatorChain {
        var backends: [TranslatorChain.Backend] = []
        let pairs = [LanguagePair(config.speakerA, config.speakerB), LanguagePair(config.speakerB, config.speakerA)]
        for backend in config.translatorBackends {
            let name = backend.rawValue
            do {
                switch backend {
                case .apertium:
                    // Alone, Apertium must have the speakers' pairs; in a chain, a missing local
                    // pair is left to the other backends.
                    if config.translatorBackends.count == 1,
                        let missing = pairs.first(where: { ApertiumTranslator.modeFile(for: $0, modesDirectory: config.apertiumModesDirectory) == nil })
                    {
                        throw ConfigError(TranslationHints.missingPair(source: missing.source, target: missing.target))
                    }
                    let installed = config.translatorBackends.count == 1
                        ? pairs
                        : pairs.filter { ApertiumTranslator.modeFile(for: $0, modesDirectory: config.apertiumModesDirectory) != nil }
                    let translator = try ApertiumTranslator(
                        pairs: installed, modesDirectory: config.apertiumModesDirectory, timeoutMs: config.translationTimeoutMs,
                        keepUnknownMarks: config.keepUnknownMarks)
                    backends.append(.init(name: name, translator: translator))
                case .libreTranslate, .apertiumApy:
                    let settings = backend == .libreTranslate ? config.libreTranslate : config.apertiumApy
                    guard let url = URL(string: settings.url) else { throw ConfigError("url \(settings.url) is not a URL") }
                    let key = try settings.apiKey?.read(environment: environment)
                    let translator: any Translator =
                        backend == .libreTranslate
                        ? LibreTranslateTranslator(url: url, timeoutMs: settings.timeoutMs, apiKey: key)
                        : ApyTranslator(url: url, timeoutMs: settings.timeoutMs, apiKey: key, keepUnknownMarks: config.keepUnknownMarks)
                    backends.append(.init(name: name, translator: translator))
                }
            } catch {
                throw DaemonFailure(.config, "[translator] \(name): \(error)")
            }
        }
        return TranslatorChain(
            backends, timing: .init(deadline: .milliseconds(config.translationDeadlineMs)), cacheCapacity: config.translationCacheSize)
    }

    static func makeSynthesizer(_ config: ParleyConfig) throws(DaemonFailure) -> EspeakSynthesizer {
        let synthesizer: EspeakSynthesizer
        do {
            synthesizer = try EspeakSynthesizer.shared()
        } catch {
            throw DaemonFailure(.runtime, error.description)
        }
        synthesizer.voices = config.voices.mapValues {
            VoiceSettings(voice: $0.voice, rate: $0.rate, pitch: $0.pitch, volume: $0.volume)
        }
        for (language, voice) in config.voices {
            if let name = voice.voice, !synthesizer.canLoad(voice: name) {
                throw DaemonFailure(.config, "[voice.\(language)] voice \"\(name)\" is not installed; pick one from `espeak-ng --voices`")
            }
        }
        for language in [config.speakerA, config.speakerB] where !synthesizer.hasVoice(for: language) {
            throw DaemonFailure(
                .config, "[conversation]: espeak-ng has no voice for \"\(language)\"; pick a language from `espeak-ng --voices`")
        }
        return synthesizer
    }

    static func openHistory(_ config: ParleyConfig) throws(DaemonFailure) -> AppDatabase {
        do {
            let history = config.historyEnabled ? try AppDatabase.open(path: config.historyPath) : try AppDatabase.inMemory()
            Task { try? await history.applyRetention(Retention(maxTurns: config.historyMaxTurns, maxAgeDays: config.historyMaxAgeDays)) }
            return history
        } catch {
            throw DaemonFailure(.runtime, "\(error)")
        }
    }

    /// Makes the folder of `path` (with `mode`) when it is missing, and checks that a file can
    /// be made in it; else one line naming `key` and what to set it to (exit 2).
    static func prepareFolder(of path: String, mode: Int, key: String, fix: String) throws(DaemonFailure) {
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty else { return }
        var info = stat()
        if stat(folder, &info) != 0 {
            if let problem = makeFolder(folder, mode: mode_t(mode)) {
                throw DaemonFailure(.config, "\(key) \(excerpt(path)): cannot make its folder \(excerpt(folder)) (\(problem)); set it to \(fix)")
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw DaemonFailure(.config, "\(key) \(excerpt(path)): \(excerpt(folder)) is not a folder; set it to \(fix)")
        }
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw DaemonFailure(.config, "\(key) \(excerpt(path)) is a folder; set it to \(fix)")
        }
        // Whether a file can be made there: a probe, made and removed at once.
        let probe = (folder as NSString).appendingPathComponent(".parleyd-probe-\(getpid())")
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let problem = String(cString: strerror(errno))
            throw DaemonFailure(.config, "\(key) \(excerpt(path)): cannot make files in \(excerpt(folder)) (\(problem)); set it to \(fix)")
        }
        close(descriptor)
        unlink(probe)
    }

    /// Makes `folder` and the folders above it that are missing; the reason it cannot, or nil.
    private static func makeFolder(_ folder: String, mode: mode_t) -> String? {
        let parent = (folder as NSString).deletingLastPathComponent
        var info = stat()
        if !parent.isEmpty, parent != folder, stat(parent, &info) != 0, let problem = makeFolder(parent, mode: mode) {
            return problem
        }
        guard mkdir(folder, mode) == 0 || errno == EEXIST else { return String(cString: strerror(errno)) }
        return nil
    }

    /// A path for a message: at most 80 characters (its start and end), so the line stays short.
    static func excerpt(_ path: String) -> String {
        path.count > 80 ? "\(path.prefix(40))...\(path.suffix(37))" : path
    }

    /// systemd's status line: what Parley is doing, in a few words.
    static func statusLine(_ snapshot: Interpreter.Snapshot) -> String {
        let settings = snapshot.settings
        let who = snapshot.speaker.map { " \($0.rawValue) (\(settings.language(of: $0)))" } ?? ""
        return "\(snapshot.state)\(who); \(settings.speakerA)<->\(settings.speakerB), \(snapshot.turns) turns"
    }

    /// Parley is for speech: with no model for either language it does not start (exit 2, so
    /// systemd does not restart it in a loop).
    static func requireSpeechModel(_ config: ParleyConfig) throws(DaemonFailure) {
        guard !RecognizerPool.canHear(config, config.speakerA) && !RecognizerPool.canHear(config, config.speakerB) else { return }
        // A model whose files are missing says which; else how to get one.
        let missing = [config.speakerA, config.speakerB].lazy.compactMap { language in
            config.recognizerModel(for: language)?.missingFileProblem(language: language)
        }.first
        throw DaemonFailure(
            .config,
            "no speech model for \(config.speakerA) or \(config.speakerB), so nobody can be heard: "
                + (missing ?? notHearableHint(language: config.speakerA == "en" || config.speakerB == "en" ? "en" : config.speakerA)))
    }

    static func notHearableHint(language: String) -> String {
        language == "en"
            ? "install pocketsphinx-en-us (apt-get install pocketsphinx-en-us)"
            : "no usable speech model for \"\(language)\": install a CMU Sphinx model with `parleyd model install DIR --language \(language)` "
                + "(README: Adding a language)"
    }

    /// File mode prints each committed turn.
    static func printTurn(_ line: Data) {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: line), envelope.type == EventType.turn,
            let turn = try? JSONDecoder().decode(TurnEventLine.self, from: line).data
        else { return }
        let translated = turn.translatedText ?? "(untranslated: \(turn.error ?? "unknown error"))"
        let confidence = turn.confidence.map { String(format: "%.2f", $0) } ?? "-"
        print("[\(turn.speaker) \(turn.sourceLang)] \(turn.sourceText)")
        print("[\(turn.speaker == "a" ? "b" : "a") \(turn.targetLang)] \(translated)")
        if let ipa = turn.ipa { print("  /\(ipa)/") }
        print("  confidence \(confidence), recognition \(turn.timings.asrMs ?? -1) ms, translation \(turn.timings.mtMs ?? -1) ms, response \(turn.timings.responseMs ?? -1) ms")
        fflush(nil)
    }

    private struct TurnEventLine: Decodable {
        var data: TurnInfo
    }
}

/// The control socket as a service.
struct ControlService: Service {
    let server: ControlServer

    func run() async throws {
        do {
            // Graceful shutdown drains: requests in flight are answered, then the socket is
            // closed and removed.
            try await withGracefulShutdownHandler {
                try await server.run()
            } onGracefulShutdown: {
                server.drain()
            }
        } catch is CancellationError {
            // Another service failed: the group is cancelled.
        }
    }
}

/// The caption page as a service. A page that cannot be served (its port taken) is logged and
/// the conversation goes on without it.
struct WebService: Service {
    let server: WebServer
    let logger: Logger

    func run() async {
        do {
            try await server.run()
        } catch is CancellationError {
        } catch {
            logger.error(
                "the caption page cannot be served on \(server.settings.listen) port \(server.settings.port): \(error); fix [web] listen or port and restart")
        }
    }
}

/// The conversation as a service: graceful shutdown stops the capture loop after the turn in
/// flight; then the history is flushed.
struct ConversationService: Service {
    let interpreter: Interpreter
    let notifier: SystemdNotifier
    let history: HistoryWriter
    /// Where turns that cannot be stored at exit are saved (`Daemon.flushHistory`).
    let journal: (path: String, folders: [String])?
    let logger: Logger

    func run() async throws {
        let interpreter = self.interpreter
        // Graceful shutdown (SIGTERM) and cancellation (another service failed) both end the
        // capture loop; its thread cannot see task cancellation by itself.
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                do {
                    try await interpreter.run()
                } catch let error as AudioError {
                    throw DaemonFailure(error.kind == .deviceLost ? .audioDevice : .runtime, error.description)
                }
                // Before the socket closes: clients waiting for a stored turn get their answer.
                await Daemon.flushHistory(history, journal: journal, logger: logger)
            } onGracefulShutdown: { [notifier] in
                notifier.stopping()
                interpreter.stop()
            }
        } onCancel: {
            interpreter.stop()
        }
    }
}

/// File mode: prints each committed turn, until the conversation has ended and every turn
/// queued before that is printed.
struct TurnPrinter: Service {
    let subscription: Subscription

    func run() async {
        await withGracefulShutdownHandler {
            while let line = await subscription.next() {
                Daemon.printTurn(line)
            }
        } onGracefulShutdown: {
            subscription.finish()
        }
    }
}

/// SIGHUP reads the config again; an invalid file is logged and changes nothing.
struct ReloadService: Service {
    let reloader: Reloader
    let hangups: UnixSignalsSequence
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                logger.notice("SIGHUP: reading the config again")
                // A failure is logged by the reloader; the daemon runs on.
                _ = try? reloader.reload()
            }
        }
    }
}
