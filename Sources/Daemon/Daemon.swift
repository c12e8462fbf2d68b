import Foundation
import Logging
import ParleyAudio
import ParleyConfig
import ParleyControl
import ParleyControlSocket
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

/// A daemon built (`Daemon.build`): its services in one group, and what it holds while they run.
public struct BuiltDaemon: Sendable {
    /// The conversation, and either the file-mode printer or the control socket, reload and the
    /// caption page, with the start-up work.
    public let group: ServiceGroup
    let writer: HistoryWriter
    let history: AppDatabase
    /// One parleyd per control socket and history: held until the group has run.
    let locks: [InstanceLock?]

    /// Runs until the recording ends (file mode) or SIGTERM/SIGINT (live), then ends the
    /// session in history. Throws `DaemonFailure`.
    public func run() async throws {
        defer { withExtendedLifetime(locks) {} }
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
}

/// Builds and runs parleyd. `@main` only parses arguments and calls `Daemon.run`.
public enum Daemon {
    /// Builds the daemon and runs it (`build`, then `BuiltDaemon.run`).
    public static func run(_ options: DaemonOptions, logger: Logger) async throws {
        try await build(options, logger: logger).run()
    }

    /// Reads the config, takes the instance locks, loads the engines and opens the devices and
    /// history, and returns the services that run the daemon, not yet started: what a test that
    /// runs the daemon in-process starts. Throws `DaemonFailure`.
    ///
    /// (Untyped `throws` on purpose: Swift 6.3's optimizer crashes on this function with typed throws.)
    public static func build(_ options: DaemonOptions, logger baseLogger: Logger) async throws -> BuiltDaemon {
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
        // The one clock every part is timed by (`ParleyClock`).
        let clock = ParleyClock.continuous
        let started = clock.now
        let synthesizer = try makeSynthesizer(config)
        // Whisper (and Moonshine) hear a language PocketSphinx has no model for (fr, pt, it, ca,
        // gl): the pool then only gives live words for the languages it has. Judged from the
        // files here; the engines themselves are made once the devices are open (below), so a
        // missing sound card is still the one line said.
        let heardAccurately = accuratelyHeard(config)
        let recognizers = try RecognizerPool(
            config: config, logger: logger, meanDevice: options.input == nil ? config.captureDevice : nil,
            othersHear: [config.speakerA, config.speakerB].contains { heardAccurately.contains($0) })
        let translator = try makeTranslator(config, clock: clock, logger: logger)
        let history = try openHistory(config)
        let startup = StartupWork(jobs: [
            // A configured backend that does not answer is said now, not at the first turn.
            { [pairs = [LanguagePair(config.speakerA, config.speakerB), LanguagePair(config.speakerB, config.speakerA)]] in
                let lines = await translator.checkBackends(pairs)
                guard !Task.isCancelled else { return }
                for line in lines { logger.warning("\(line)") }
            },
            // Retention also runs at start (then with every turn).
            {
                _ = try? await history.applyRetention(Retention(maxTurns: config.historyMaxTurns, maxAgeDays: config.historyMaxAgeDays))
            },
        ])
        let events = EventBus()
        let writer = makeHistoryWriter(config, history, events: events, clock: clock, logger: logger)
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
        if let absence = bergamotAbsence(config) { logger.info("\(absence)") }
        // Sessions and turns go through the queue: a full disk or a locked file is retried
        // while the conversation goes on.
        writer.startSession(speakerA: config.speakerA, speakerB: config.speakerB)
        let accurate = makeAccurateHearing(config, logger: logger)
        // The models are loaded: what loading them freed goes back now, a turn's once it ends.
        let trimmer = HeapTrimmer(clock: clock)
        trimmer.stateChanged(to: "listening")
        let voices = synthesizer.languages
        let setVoices = Set(synthesizer.voices.filter { $0.value.voice != nil }.keys)
        let interpreter = Interpreter.make(
            config: config,
            engines: EngineAccess(
                recognizers: recognizers,
                canSpeak: { voices.contains($0) || setVoices.contains($0) }, translator: translator, accurate: accurate,
                voiceActivity: makeVoiceActivity(config, logger: logger)),
            synthesizer: withVoices(synthesizer, config, logger: logger), playback: playback, capture: source, history: writer,
            events: events, logger: logger, logsTranscripts: { ParleyLogLevel.transcripts },
            observer: Interpreter.Observer(
                heartbeat: { notifier.watchdog() },
                stateChanged: {
                    notifier.status(statusLine($0))
                    trimmer.stateChanged(to: $0.state)
                }),
            clock: clock)
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
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: startup, successTerminationBehavior: .ignore)]
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
                    handler: control, events: events, logger: logger, clock: clock)
                control.web = web
                services.append(.init(service: WebService(server: web, logger: logger), successTerminationBehavior: .ignore))
            }
            // Ready once capture is open, the models are loaded and the socket answers.
            let server = ControlServer(
                path: config.controlSocket, inheritedSocket: activatedSocket, group: config.controlGroup,
                idleTimeout: .seconds(config.controlIdleTimeoutSeconds), handler: control, logger: logger, clock: clock
            ) {
                let milliseconds = clock.milliseconds(since: started)
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
        return BuiltDaemon(group: group, writer: writer, history: history, locks: locks)
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
}
