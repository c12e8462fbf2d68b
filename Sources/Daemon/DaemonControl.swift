import Foundation
import Logging
import ParleyConfig
import ParleyControl
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRuntime
internal import ParleyWeb

/// Answers control requests from the daemon's state. Bad input gets an error reply that says
/// what to send instead; nothing a client sends can stop the conversation.
struct DaemonControl: ControlHandler {
    let interpreter: Interpreter
    let config: ParleyConfig
    let history: AppDatabase
    let events: EventBus
    /// The history write queue; it knows the current session.
    let writer: HistoryWriter
    /// When the daemon started, on its clock (`interpreter.clock`).
    let started: ParleyClock.Instant
    let logger: Logger
    let reloader: Reloader
    /// The caption page's server, when `[web]` is enabled; `web` says where it listens.
    var web: WebServer? = nil

    /// Every command is answered here, in one exhaustive switch: a command added to the protocol
    /// does not compile until it is answered.
    func reply(to request: Request, from peer: Peer?) async -> ControlReply {
        let id = request.id
        if request.command.name.changesState {
            logger.notice("control command", metadata: ["command": "\(request.command.name.rawValue)", "peer": "\(peer?.description ?? "unknown")"])
        }
        do {
            switch request.command {
            case .status:
                return .line(Replies.result(status(), id: id))
            case .version:
                return .line(Replies.result(VersionInfo(version: ParleyVersion.string, protocolVersion: ParleyVersion.protocolVersion), id: id))
            case .subscribe:
                return .subscribe(Replies.result(Acknowledged(), id: id), events.subscribe())
            case .history(let query):
                return .line(Replies.result(try await search(query).map(\.info), id: id))
            case .say(let say):
                let turn = try await interpreter.say(say.speaker, text: say.text)
                return .line(Replies.result(turn.info, id: id))
            case .listen(let speaker):
                try interpreter.listen(speaker)
                return .line(Replies.result(status(), id: id))
            case .stop:
                let stopped = interpreter.stopTurn()
                var answer = status()
                answer.stopped = stopped
                return .line(Replies.result(answer, id: id))
            case .pause:
                interpreter.pause()
                return .line(Replies.result(status(), id: id))
            case .resume:
                interpreter.resume()
                return .line(Replies.result(status(), id: id))
            case .swap:
                return .line(Replies.result(interpreter.swapLanguages(), id: id))
            case .set(let change):
                return .line(Replies.result(try interpreter.apply(change), id: id))
            case .config:
                return .line(Replies.result(effectiveConfig(), id: id))
            case .web:
                return .line(Replies.result(webInfo(), id: id))
            case .reload:
                do {
                    return .line(Replies.result(try reloader.reload(), id: id))
                } catch let error as ConfigError {
                    return .line(Replies.error(.invalidConfig, "\(error) (the daemon runs on as before)", id: id))
                }
            case .favorite(let turn):
                return .line(Replies.result(try await setFavorite(turn, true), id: id))
            case .unfavorite(let turn):
                return .line(Replies.result(try await setFavorite(turn, false), id: id))
            case .historyDelete(let turn):
                return .line(Replies.result(try await delete(turn), id: id))
            case .historyClear:
                return .line(Replies.result(try await clear(), id: id))
            case .undo:
                return .line(Replies.result(try await undo(), id: id))
            case .replay(let turn):
                return .line(Replies.result(try await replay(turn), id: id))
            case .sessionNew:
                return .line(Replies.result(try await newSession(), id: id))
            case .historyExport(let range):
                return .line(Replies.result(try await export(range), id: id))
            case .historyImport(let batch):
                return .line(Replies.result(try await importBatch(batch), id: id))
            case .retry(let turn):
                return .line(Replies.result(try await retry(turn), id: id))
            case .languages:
                return .line(Replies.result(await languages(), id: id))
            }
        } catch let error as FieldRefusal {
            return .line(Replies.error(.invalidField, error.description, id: id))
        } catch let refusal as ConversationRefusal {
            return .line(Replies.error(.unavailable, refusal.description, id: id))
        } catch let missing as NotFound {
            return .line(Replies.error(.notFound, missing.description, id: id))
        } catch {
            return .line(Replies.error(.unavailable, "\(error)", id: id))
        }
    }

    func status() -> StatusInfo {
        let snapshot = interpreter.snapshot
        func side(_ speaker: Speaker) -> StatusInfo.Side {
            let language = snapshot.settings.language(of: speaker)
            let hearable = interpreter.isHearable(speaker)
            return StatusInfo.Side(
                language: language, hearable: hearable,
                hint: hearable ? nil : Daemon.notHearableHint(language: language),
                model: hearable ? config.recognizerModel(for: language)?.origin() : nil, engine: interpreter.engine(for: language))
        }
        var status = StatusInfo(
            version: ParleyVersion.string, state: snapshot.state, speaker: snapshot.speaker?.rawValue,
            mode: snapshot.settings.mode.rawValue, a: side(.a), b: side(.b), turns: snapshot.turns, sessionID: writer.currentSessionID,
            uptimeSeconds: (interpreter.clock.now - started).timeInterval, captureDevice: config.captureDevice,
            playbackDevice: config.playbackDevice)
        status.decided = snapshot.decided
        addHistoryHealth(to: &status)
        return status
    }

    /// `web`: where the caption page listens and its pairing code (the socket's members may see it).
    func webInfo() -> WebInfo {
        if let web { return web.info() }
        return WebInfo(
            enabled: false, listen: config.web.listen, port: nil, pairing: config.web.pairing.rawValue, code: nil,
            maxConnections: 0, maxMessageBytes: 0)
    }

    private func effectiveConfig() -> EffectiveConfig {
        EffectiveConfig(
            settings: interpreter.snapshot.settings, captureDevice: config.captureDevice, playbackDevice: config.playbackDevice,
            historyEnabled: config.historyEnabled, historyPath: config.historyEnabled ? config.historyPath : nil,
            controlSocket: config.controlSocket, repeatPrompt: config.repeatPrompt,
            recognizerFwdflat: config.fwdflat, recognizerMaxHMMsPerFrame: config.maxHMMsPerFrame,
            translatorBackends: config.translatorBackends.map(\.rawValue), translatorDeadlineMs: config.translationDeadlineMs,
            historyMaxTurns: config.historyMaxTurns, historyMaxAgeDays: config.historyMaxAgeDays,
            sessionGapMinutes: config.sessionGapMinutes)
    }
}

/// A request that is well formed but names something that does not fit (a turn already
/// translated, an import whose dates cannot be read): `invalid_field`. (ParleyProtocol's
/// `FieldError` is the other case of that code: a field that cannot be read at all.)
struct FieldRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
