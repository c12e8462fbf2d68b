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
/// min_confidence) and the log's level and transcripts (`ParleyConfig.sections` says which key
/// is which). A key the file changed since it was last read wins over a runtime `set`; keys the
/// file left alone keep their runtime value. Keys read only at start-up (devices, models,
/// translator, history, control socket, voices) are reported as needing a restart. An invalid
/// file changes nothing: the daemon keeps running on what it has.
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

    /// What reading `new` over `old` changes (`ParleyConfig.reloadPlan`: the config's tables say
    /// which keys apply at once).
    static func plan(from old: ParleyConfig, to new: ParleyConfig, startup: ParleyConfig? = nil) -> ReloadPlan {
        ParleyConfig.reloadPlan(from: old, to: new, startup: startup)
    }
}
