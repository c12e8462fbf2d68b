import Foundation
import ParleyConfig
import ParleyControl
import ParleyConversation
import ParleyHistory
import ParleyProtocol

/// Answers control requests from the daemon's state.
struct DaemonControl: ControlHandler {
    let interpreter: Interpreter
    let config: ParleyConfig
    let history: AppDatabase
    let sessionID: Int64
    let started: Date

    func reply(to request: Request) async -> Data {
        switch request.type {
        case "status":
            return Replies.result(status(), id: request.id)
        case "version":
            return Replies.result(
                VersionInfo(version: ParleyVersion.string, protocolVersion: ParleyVersion.protocolVersion), id: request.id)
        case "history":
            return await historyReply(request)
        default:
            return Replies.error(
                .unknownCommand, "unknown command \"\(request.type)\"; known: status, version, history", id: request.id)
        }
    }

    func status() -> StatusInfo {
        let (state, turns) = interpreter.snapshot
        func side(_ speaker: Speaker) -> StatusInfo.Side {
            let language = config.language(of: speaker)
            let hearable = interpreter.isHearable(speaker)
            return StatusInfo.Side(
                language: language, hearable: hearable,
                hint: hearable ? nil : Daemon.notHearableHint(language: language))
        }
        return StatusInfo(
            version: ParleyVersion.string, state: state.name, speaker: state.speaker?.rawValue, mode: config.mode.rawValue,
            a: side(.a), b: side(.b), turns: turns, sessionID: sessionID,
            uptimeSeconds: Date().timeIntervalSince(started), captureDevice: config.captureDevice,
            playbackDevice: config.playbackDevice)
    }

    private func historyReply(_ request: Request) async -> Data {
        var limit = 50
        switch request.data?["limit"] {
        case nil, .null?:
            break
        case .number(let value)? where value >= 1 && value <= 10_000 && value == value.rounded():
            limit = Int(value)
        case let other?:
            return Replies.error(
                .invalidField, "data.limit must be a whole number from 1 to 10000, not \(other.typeName)", id: request.id)
        }
        do {
            let turns = try await history.recentTurns(limit: limit)
            return Replies.result(turns.map(\.info), id: request.id)
        } catch {
            return Replies.error(.unavailable, "history cannot be read: \(error)", id: request.id)
        }
    }
}

extension TurnRecord {
    /// The turn as clients see it.
    var info: TurnInfo {
        TurnInfo(
            id: id ?? 0, sessionID: sessionID, speaker: speaker, sourceLang: sourceLang, targetLang: targetLang,
            sourceText: sourceText, translatedText: translatedText, confidence: confidence, favorite: favorite,
            status: status.rawValue, error: error, createdAt: Self.iso8601.string(from: createdAt),
            timings: .init(asrMs: asrMs, mtMs: mtMs, ttsMs: ttsMs, responseMs: responseMs))
    }

    nonisolated(unsafe) static let iso8601: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()
}
