import Foundation
import Logging
import ParleyConfig
import ParleyConversation
import ParleyEndpoint
import ParleyProtocol
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
    /// The config as last read from the file.
    private let loaded: Mutex<ParleyConfig>
    /// One reload at a time.
    private let serial = Mutex<Void>(())

    init(path: String?, initial: ParleyConfig, interpreter: Interpreter, notifier: SystemdNotifier, logger: Logger) {
        self.path = path
        self.loaded = Mutex(initial)
        self.interpreter = interpreter
        self.notifier = notifier
        self.logger = logger
    }

    /// Reloads; throws (changing nothing) when the file cannot be read or is invalid.
    func reload() throws -> ReloadInfo {
        try serial.withLock { _ in
            notifier.reloading()
            defer { notifier.notify("READY=1") }
            guard let path else {
                throw ConfigError("parleyd was started without --config, so there is no file to read again")
            }
            let new: ParleyConfig
            do {
                new = try ParleyConfig.load(path: path)
            } catch {
                logger.error("config not reloaded, still running on the previous one: \(error)")
                throw error
            }
            let old = loaded.withLock { $0 }
            let plan = Self.plan(from: old, to: new)
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

    /// What reading `new` over `old` changes.
    static func plan(from old: ParleyConfig, to new: ParleyConfig) -> Plan {
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

        // Whatever else differs is read only at start-up. Blank out what was compared above and
        // name the sections that still differ.
        func startUpOnly(_ config: ParleyConfig) -> ParleyConfig {
            var copy = config
            copy.speakerA = ""
            copy.speakerB = ""
            copy.mode = .alternate
            copy.echoTailMs = 0
            copy.minConfidence = 0
            copy.endpoint.silenceMs = 0
            copy.logLevel = ""
            return copy
        }
        var restart: [String] = []
        let (a, b) = (startUpOnly(old), startUpOnly(new))
        if a.repeatPrompt != b.repeatPrompt { restart.append("conversation.repeat_prompt") }
        if a.captureDevice != b.captureDevice || a.playbackDevice != b.playbackDevice { restart.append("audio") }
        if a.endpoint != b.endpoint { restart.append("endpoint") }
        if a.recognizers != b.recognizers || a.fwdflat != b.fwdflat { restart.append("recognizer") }
        if a.voices != b.voices { restart.append("voice") }
        if a.historyEnabled != b.historyEnabled || a.historyPath != b.historyPath { restart.append("history") }
        if a.controlSocket != b.controlSocket || a.controlGroup != b.controlGroup { restart.append("control") }
        if a.apertiumModesDirectory != b.apertiumModesDirectory || a.translationTimeoutMs != b.translationTimeoutMs {
            restart.append("translator")
        }
        var rest = b
        rest.repeatPrompt = a.repeatPrompt
        rest.captureDevice = a.captureDevice
        rest.playbackDevice = a.playbackDevice
        rest.endpoint = a.endpoint
        rest.recognizers = a.recognizers
        rest.fwdflat = a.fwdflat
        rest.voices = a.voices
        rest.historyEnabled = a.historyEnabled
        rest.historyPath = a.historyPath
        rest.controlSocket = a.controlSocket
        rest.controlGroup = a.controlGroup
        rest.apertiumModesDirectory = a.apertiumModesDirectory
        rest.translationTimeoutMs = a.translationTimeoutMs
        // Anything else (a key without a line above) is still reported, as a whole.
        if rest != a { restart.append("other") }
        return Plan(change: applied.contains { $0 != "log.level" } ? change : nil, applied: applied, restartNeeded: restart)
    }
}
