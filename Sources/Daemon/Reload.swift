import Foundation
import Logging
import ParleyConfig
import ParleyCore
import ParleyEndpoint
import ParleyProtocol
import ParleyRuntime
import ParleySystemd
import Synchronization

/// Reads the config file again (SIGHUP or `parley reload`) and applies what can change while the
/// daemon runs: the conversation settings (languages, mode, silence_ms, echo_tail_ms,
/// min_confidence) and the log level. A key the file changed since it was last read wins over a
/// runtime `set`; keys the file left alone keep their runtime value. Sections read only at
/// start-up (devices, models, translator, history, control socket, voices) are reported as
/// needing a restart. An invalid file changes nothing: the daemon keeps running on what it has.
final class Reloader: Sendable {
    private let path: String?
    private let interpreter: Interpreter
    private let logger: Logger
    private let notifier: SystemdNotifier
    /// The config as last read from the file: runtime keys are compared with it.
    private let loaded: Mutex<ParleyConfig>
    /// The config the daemon started with: sections read only at start-up are compared with it,
    /// so a change that needs a restart is reported until the daemon restarts.
    private let startup: ParleyConfig
    /// One reload at a time.
    private let serial = Mutex<Void>(())

    init(path: String?, initial: ParleyConfig, interpreter: Interpreter, notifier: SystemdNotifier, logger: Logger) {
        self.path = path
        self.loaded = Mutex(initial)
        self.startup = initial
        self.interpreter = interpreter
        self.notifier = notifier
        self.logger = logger
    }

    /// Reloads; throws (changing nothing) when the file cannot be read or is invalid.
    func reload() throws -> ReloadInfo {
        try serial.withLock { _ in
            notifier.reloading()
            defer { notifier.reloaded() }
            guard let path else {
                throw ConfigError("parleyd was started without --config, so there is no file to read again; start it with --config FILE to use reload")
            }
            let new: ParleyConfig
            do {
                new = try ParleyConfig.load(path: path)
            } catch {
                logger.error("config not reloaded, still running on the previous one: \(error)")
                throw error
            }
            let old = loaded.withLock { $0 }
            let plan = Self.plan(from: old, to: new, startup: startup)
            if let change = plan.change {
                // A setting the interpreter refuses (say a language with no voice) changes nothing.
                do {
                    _ = try interpreter.apply(change)
                } catch {
                    logger.error("config not reloaded, still running on the previous one: \(error)")
                    throw error
                }
            }
            if old.logLevel != new.logLevel, let level = Logger.Level(rawValue: new.logLevel) {
                ParleyLogLevel.level = level
            }
            if old.logTranscripts != new.logTranscripts {
                // History is read only at start-up; without it nothing said is logged either.
                ParleyLogLevel.transcripts = new.logTranscripts && startup.historyEnabled
            }
            loaded.withLock { $0 = new }
            let info = ReloadInfo(applied: plan.applied, restartNeeded: plan.restartNeeded, settings: interpreter.snapshot.settings)
            logger.notice(
                "config reloaded",
                metadata: [
                    "applied": "\(info.applied.isEmpty ? "nothing" : info.applied.joined(separator: ","))",
                    "restart_needed": "\(info.restartNeeded.isEmpty ? "nothing" : info.restartNeeded.joined(separator: ","))",
                ])
            return info
        }
    }

    struct Plan {
        var change: Interpreter.Change?
        var applied: [String]
        var restartNeeded: [String]
    }

    /// What reading `new` over `old` (the file as last read) changes; start-up sections are
    /// compared with `startup`, what the daemon runs on.
    static func plan(from old: ParleyConfig, to new: ParleyConfig, startup: ParleyConfig? = nil) -> Plan {
        var change = Interpreter.Change()
        var applied: [String] = []
        func compare<Value: Equatable>(_ key: String, _ path: KeyPath<ParleyConfig, Value>, into target: WritableKeyPath<Interpreter.Change, Value?>) {
            guard old[keyPath: path] != new[keyPath: path] else { return }
            change[keyPath: target] = new[keyPath: path]
            applied.append(key)
        }
        compare("conversation.speaker_a", \.speakerA, into: \.speakerA)
        compare("conversation.speaker_b", \.speakerB, into: \.speakerB)
        compare("conversation.mode", \.mode, into: \.mode)
        compare("conversation.echo_tail_ms", \.echoTailMs, into: \.echoTailMs)
        compare("conversation.min_confidence", \.minConfidence, into: \.minConfidence)
        compare("endpoint.silence_ms", \.endpoint.silenceMs, into: \.silenceMs)
        if old.logLevel != new.logLevel { applied.append("log.level") }
        if old.logTranscripts != new.logTranscripts { applied.append("log.transcripts") }

        // Whatever else differs is read only at start-up: take the runtime keys from the new
        // file, then name each section that still differs.
        var base = startup ?? old
        adoptRuntimeKeys(&base, from: new)
        let restart = startUpSections.compactMap { section -> String? in
            var probe = base
            section.adopt(&probe, new)
            return probe == base ? nil : section.name
        }
        var everything = base
        for section in startUpSections { section.adopt(&everything, new) }
        // A key without a section below is still reported, as a whole.
        let other = everything == new ? [] : ["other"]
        return Plan(change: applied.contains { !$0.hasPrefix("log.") } ? change : nil, applied: applied, restartNeeded: restart + other)
    }

    /// The keys `reload` applies while the daemon runs.
    static func adoptRuntimeKeys(_ config: inout ParleyConfig, from source: ParleyConfig) {
        config.speakerA = source.speakerA
        config.speakerB = source.speakerB
        config.mode = source.mode
        config.echoTailMs = source.echoTailMs
        config.minConfidence = source.minConfidence
        config.endpoint.silenceMs = source.endpoint.silenceMs
        config.logLevel = source.logLevel
        config.logTranscripts = source.logTranscripts
    }

    /// What is read only at start-up, by the name `reload` reports, and how to copy it over.
    static let startUpSections: [(name: String, adopt: @Sendable (inout ParleyConfig, ParleyConfig) -> Void)] = [
        ("conversation.repeat_prompt", { $0.repeatPrompt = $1.repeatPrompt }),
        ("audio", { $0.captureDevice = $1.captureDevice; $0.playbackDevice = $1.playbackDevice }),
        ("endpoint", { config, source in
            let silence = config.endpoint.silenceMs
            config.endpoint = source.endpoint
            config.endpoint.silenceMs = silence
        }),
        ("recognizer", { $0.recognizers = $1.recognizers; $0.fwdflat = $1.fwdflat; $0.maxHMMsPerFrame = $1.maxHMMsPerFrame }),
        ("voice", { $0.voiceEngine = $1.voiceEngine; $0.voices = $1.voices }),
        ("translator", { config, source in
            config.apertiumModesDirectory = source.apertiumModesDirectory
            config.translationTimeoutMs = source.translationTimeoutMs
            config.translatorBackends = source.translatorBackends
            config.translationDeadlineMs = source.translationDeadlineMs
            config.keepUnknownMarks = source.keepUnknownMarks
            config.failureNotice = source.failureNotice
            config.translationCacheSize = source.translationCacheSize
            config.libreTranslate = source.libreTranslate
            config.apertiumApy = source.apertiumApy
            config.bergamotEnabled = source.bergamotEnabled
            config.translatorEngines = source.translatorEngines
        }),
        ("history", { config, source in
            config.historyEnabled = source.historyEnabled
            config.historyPath = source.historyPath
            config.historyMaxTurns = source.historyMaxTurns
            config.historyMaxAgeDays = source.historyMaxAgeDays
            config.sessionGapMinutes = source.sessionGapMinutes
        }),
        ("control", { config, source in
            config.controlSocket = source.controlSocket
            config.controlGroup = source.controlGroup
            config.controlIdleTimeoutSeconds = source.controlIdleTimeoutSeconds
        }),
        ("web", { $0.web = $1.web }),
    ]
}
