import Foundation
import Logging
import ParleyAudio
import ParleyControl
import ParleyControlSocket
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRuntime
import ParleySystemd
internal import ParleyWeb
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Work started with the daemon that nothing waits for (asking the translation backends a
/// fixed word, history retention): child tasks of the service group, so none outlives
/// `Daemon.run`. A shutdown before they end cancels them. Once they have ended, the service
/// waits for its turn to shut down: the group takes a service that ends while it shuts the
/// others down for one that failed (a SIGTERM just after start, while the backends were still
/// being asked, made parleyd exit 1).
struct StartupWork: Service {
    let jobs: [@Sendable () async -> Void]

    func run() async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                for job in jobs { group.addTask { await job() } }
            }
        }
        try? await gracefulShutdown()
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
            } onGracefulShutdown: { [notifier, logger] in
                logger.notice("stopping: asked to stop (SIGTERM or SIGINT); the turn in flight is finished and stored first")
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

extension Daemon {
    /// File mode prints each committed turn.
    static func printTurn(_ line: Data) {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: line), envelope.type == EventType.turn,
            let turn = try? JSONDecoder().decode(TurnEventLine.self, from: line).data
        else { return }
        let translated = turn.translatedText ?? "(untranslated: \(turn.error ?? "unknown error"))"
        let confidence = turn.confidence.map { String(format: "%.2f", $0) } ?? "-"
        print("[\(turn.speaker.rawValue) \(turn.sourceLang)] \(turn.sourceText)")
        print("[\(turn.speaker.other.rawValue) \(turn.targetLang)] \(translated)")
        if let ipa = turn.ipa { print("  /\(ipa)/") }
        print("  confidence \(confidence), recognition \(turn.timings.asrMs ?? -1) ms, translation \(turn.timings.mtMs ?? -1) ms, response \(turn.timings.responseMs ?? -1) ms")
        fflush(nil)
    }

    private struct TurnEventLine: Decodable {
        var data: TurnInfo
    }
}
