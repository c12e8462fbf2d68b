import Foundation
import Logging
import ParleyConfig
import ParleyControl
import ParleyConversation
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
    let started: Date
    let logger: Logger
    let reloader: Reloader
    /// The caption page's server, when `[web]` is enabled; `web` says where it listens.
    var web: WebServer? = nil

    static let commands = [
        "status", "version", "subscribe", "history", "say", "listen", "stop", "pause", "resume", "swap", "set", "config", "reload", "web",
    ] + historyCommands
    /// Every command, those answered in extensions (DaemonControl+Translation.swift) included.
    static var allCommands: [String] { commands + translationCommands }

    /// Commands that change what the daemon does; they are logged with who sent them.
    static let changing: Set<String> = Set(["say", "listen", "stop", "pause", "resume", "swap", "set", "reload"]).union(changingHistory)

    func reply(to request: Request, from peer: Peer?) async -> ControlReply {
        let id = request.id
        if Self.changing.contains(request.type) || Self.changingTranslation.contains(request.type) {
            logger.notice("control command", metadata: ["command": "\(request.type)", "peer": "\(peer?.description ?? "unknown")"])
        }
        do {
            let fields = Fields(data: request.data ?? [:])
            switch request.type {
            case "status":
                return .line(Replies.result(status(), id: id))
            case "version":
                return .line(Replies.result(VersionInfo(version: ParleyVersion.string, protocolVersion: ParleyVersion.protocolVersion), id: id))
            case "retry":
                return .line(Replies.result(try await retry(fields), id: id))
            case "languages":
                try fields.allowOnly([])
                return .line(Replies.result(await languages(), id: id))
            case "subscribe":
                return .subscribe(Replies.result(Acknowledged(), id: id), events.subscribe())
            case "history":
                return .line(Replies.result(try await search(fields).map(\.info), id: id))
            case "say":
                try fields.allowOnly(["speaker", "text"])
                let speaker = try fields.speaker("speaker")
                guard let text = try fields.string("text"), !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                    throw FieldError("data.text must be the words to translate, and not empty")
                }
                let turn = try await interpreter.say(speaker, text: text)
                return .line(Replies.result(turn.info, id: id))
            case "listen":
                try fields.allowOnly(["speaker"])
                try interpreter.listen(try fields.speaker("speaker"))
                return .line(Replies.result(status(), id: id))
            case "stop":
                interpreter.stopTurn()
                return .line(Replies.result(status(), id: id))
            case "pause":
                interpreter.pause()
                return .line(Replies.result(status(), id: id))
            case "resume":
                interpreter.resume()
                return .line(Replies.result(status(), id: id))
            case "swap":
                return .line(Replies.result(interpreter.swapLanguages(), id: id))
            case "set":
                return .line(Replies.result(try interpreter.apply(try change(fields)), id: id))
            case "config":
                return .line(Replies.result(effectiveConfig(), id: id))
            case "web":
                try fields.allowOnly([])
                return .line(Replies.result(webInfo(), id: id))
            case "reload":
                try fields.allowOnly([])
                do {
                    return .line(Replies.result(try reloader.reload(), id: id))
                } catch let error as ConfigError {
                    return .line(Replies.error(.invalidConfig, "\(error) (the daemon runs on as before)", id: id))
                }
            case let command where Self.historyCommands.contains(command):
                return try await historyReply(command, fields, id: id)
            default:
                return .line(
                    Replies.error(
                        .unknownCommand,
                        "unknown command \"\(request.type)\"; known: \(Self.allCommands.joined(separator: ", "))", id: id))
            }
        } catch let error as FieldError {
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
                model: hearable ? config.recognizerModel(for: language)?.origin() : nil)
        }
        var status = StatusInfo(
            version: ParleyVersion.string, state: snapshot.state, speaker: snapshot.speaker?.rawValue,
            mode: snapshot.settings.mode.rawValue, a: side(.a), b: side(.b), turns: snapshot.turns, sessionID: writer.currentSessionID,
            uptimeSeconds: Date().timeIntervalSince(started), captureDevice: config.captureDevice,
            playbackDevice: config.playbackDevice)
        addHistoryHealth(to: &status)
        return status
    }

    private func change(_ fields: Fields) throws -> Interpreter.Change {
        try fields.allowOnly(["speaker_a", "speaker_b", "mode", "silence_ms", "echo_tail_ms", "min_confidence"])
        guard !fields.data.isEmpty else {
            throw FieldError("give at least one of speaker_a, speaker_b, mode, silence_ms, echo_tail_ms, min_confidence")
        }
        var change = Interpreter.Change()
        change.speakerA = try fields.string("speaker_a")
        change.speakerB = try fields.string("speaker_b")
        if let mode = try fields.string("mode") {
            guard let parsed = ConversationMode(rawValue: mode) else {
                throw FieldError("data.mode must be \"alternate\", \"one-way\" or \"manual\", not \"\(mode)\"")
            }
            change.mode = parsed
        }
        change.silenceMs = try fields.int("silence_ms", in: 50...10_000)
        change.echoTailMs = try fields.int("echo_tail_ms", in: 0...10_000)
        change.minConfidence = try fields.number("min_confidence", in: 0...1)
        return change
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

struct Acknowledged: Codable, Sendable {
    var ok = true
}

/// `config`: the settings in force, runtime changes included.
struct EffectiveConfig: Codable, Sendable {
    var settings: RuntimeSettings
    var captureDevice: String
    var playbackDevice: String
    var historyEnabled: Bool
    var historyPath: String?
    var controlSocket: String
    var repeatPrompt: Bool
    var recognizerFwdflat: Bool
    var recognizerMaxHMMsPerFrame: Int
    var translatorBackends: [String]
    var translatorDeadlineMs: Int
    var historyMaxTurns: Int
    var historyMaxAgeDays: Int?
    var sessionGapMinutes: Int

    enum CodingKeys: String, CodingKey {
        case settings
        case captureDevice = "capture_device", playbackDevice = "playback_device"
        case historyEnabled = "history_enabled", historyPath = "history_path"
        case controlSocket = "control_socket", repeatPrompt = "repeat_prompt"
        case recognizerFwdflat = "recognizer_fwdflat", recognizerMaxHMMsPerFrame = "recognizer_maxhmmpf"
        case translatorBackends = "translator_backends", translatorDeadlineMs = "translator_deadline_ms"
        case historyMaxTurns = "history_max_turns", historyMaxAgeDays = "history_max_age_days"
        case sessionGapMinutes = "session_gap_minutes"
    }
}

/// A field of a request that is missing, of the wrong type or out of range.
struct FieldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads `data` strictly.
struct Fields {
    let data: [String: JSONValue]

    func allowOnly(_ known: [String]) throws {
        for key in data.keys.sorted() where !known.contains(key) {
            throw FieldError(
                known.isEmpty
                    ? "data.\(key) is not a field of this command; it takes none"
                    : "data.\(key) is not a field of this command; use \(known.joined(separator: ", "))")
        }
    }

    func string(_ key: String) throws -> String? {
        switch data[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw FieldError("data.\(key) must be a string, not \(other.typeName)")
        }
    }

    func number(_ key: String, in range: ClosedRange<Double>) throws -> Double? {
        switch data[key] {
        case nil, .null?: return nil
        case .number(let value)? where range.contains(value): return value
        case .number(let value)?: throw FieldError("data.\(key) is \(value); use a number from \(range.lowerBound) to \(range.upperBound)")
        case let other?: throw FieldError("data.\(key) must be a number, not \(other.typeName)")
        }
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try number(key, in: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
        guard value == value.rounded() else { throw FieldError("data.\(key) must be a whole number") }
        return Int(value)
    }

    func speaker(_ key: String) throws -> Speaker {
        guard let raw = try string(key) else { throw FieldError("data.\(key) is required: \"a\" or \"b\"") }
        guard let speaker = Speaker(rawValue: raw) else { throw FieldError("data.\(key) must be \"a\" or \"b\", not \"\(raw)\"") }
        return speaker
    }
}
