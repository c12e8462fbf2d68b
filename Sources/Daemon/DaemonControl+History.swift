import Foundation
import Logging
import ParleyControl
import ParleyConversation
import ParleyHistory
import ParleyProtocol
import ParleyRuntime

/// No turn or session with the id a client gave.
struct NotFound: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The history commands: search, favorites, delete, undo, clear, replay, sessions, export and import.
extension DaemonControl {
    static let historyCommands = [
        "favorite", "unfavorite", "history_delete", "history_clear", "undo", "replay", "session_new", "history_export",
        "history_import",
    ]

    static let changingHistory: Set<String> = [
        "favorite", "unfavorite", "history_delete", "history_clear", "undo", "replay", "session_new", "history_import",
    ]

    func historyReply(_ command: String, _ fields: Fields, id: JSONValue?) async throws -> ControlReply {
        switch command {
        case "favorite", "unfavorite":
            try fields.allowOnly(["id"])
            let turnID = try fields.turnID()
            guard let turn = try await history.setFavorite(id: turnID, command == "favorite") else {
                throw NotFound("no turn \(turnID); `parley history` lists the turns")
            }
            return .line(Replies.result(turn.info, id: id))
        case "history_delete":
            try fields.allowOnly(["id"])
            let turnID = try fields.turnID()
            guard let turn = try await history.deleteTurn(id: turnID) else {
                throw NotFound("no turn \(turnID); `parley history` lists the turns")
            }
            logger.notice("turn deleted", metadata: ["id": "\(turnID)"])
            return .line(Replies.result(turn.info, id: id))
        case "history_clear":
            try fields.allowOnly(["yes"])
            guard try fields.bool("yes") == true else {
                throw FieldError("history_clear deletes every turn, favorites too; send data.yes = true to confirm")
            }
            let deleted = try await history.clear(keepingSession: writer.currentSessionID)
            logger.notice("history cleared", metadata: ["turns": "\(deleted)"])
            return .line(Replies.result(ClearResult(deleted: deleted), id: id))
        case "undo":
            try fields.allowOnly([])
            guard let session = writer.currentSessionID, let turn = try await history.undoLastTurn(inSession: session) else {
                throw NotFound("no turn to undo in this session")
            }
            logger.notice("turn undone", metadata: ["id": "\(turn.id ?? 0)"])
            return .line(Replies.result(turn.info, id: id))
        case "replay":
            try fields.allowOnly(["id"])
            let turnID = try fields.turnID()
            guard let turn = try await history.turn(id: turnID) else {
                throw NotFound("no turn \(turnID); `parley history` lists the turns")
            }
            return .line(Replies.result(try await interpreter.replay(turn).info, id: id))
        case "session_new":
            try fields.allowOnly([])
            let settings = interpreter.snapshot.settings
            let session = try await writer.startSessionCommitted(speakerA: settings.speakerA, speakerB: settings.speakerB)
            logger.notice("new session", metadata: ["id": "\(session.id ?? 0)"])
            return .line(Replies.result(session.info, id: id))
        case "history_export":
            try fields.allowOnly(["since", "until"])
            let export = try await history.export(since: try fields.date("since"), until: try fields.date("until"))
            return .line(Replies.result(HistoryExportInfo(sessions: export.sessions.map(\.info), turns: export.turns.map(\.info)), id: id))
        case "history_import":
            try fields.allowOnly(["session", "turns"])
            let (session, turns) = try fields.importBatch()
            let imported = try await history.importSession(session, turns: turns)
            logger.notice("turns imported", metadata: ["imported": "\(imported)", "skipped": "\(turns.count - imported)"])
            return .line(Replies.result(ImportResult(imported: imported, skipped: turns.count - imported), id: id))
        default:
            return .line(Replies.error(.unknownCommand, "unknown command \"\(command)\"", id: id))
        }
    }

    /// `history`: the turns matching the request's filters, newest first.
    func search(_ fields: Fields) async throws -> [TurnRecord] {
        try fields.allowOnly(["limit", "offset", "search", "favorites", "speaker", "lang", "since", "until", "session"])
        var query = TurnQuery()
        query.limit = try fields.int("limit", in: 1...10_000) ?? 50
        query.offset = try fields.int("offset", in: 0...Int(Int32.max)) ?? 0
        query.text = try fields.string("search")
        query.favoritesOnly = try fields.bool("favorites") ?? false
        if fields.data["speaker"] != nil, fields.data["speaker"] != .null { query.speaker = try fields.speaker("speaker").rawValue }
        query.language = try fields.string("lang")
        query.since = try fields.date("since")
        query.until = try fields.date("until")
        query.sessionID = try fields.int("session", in: 1...Int(Int64(Int32.max))).map(Int64.init)
        return try await history.search(query)
    }

    func addHistoryHealth(to status: inout StatusInfo) {
        let health = writer.health
        status.historyDegraded = health.degraded
        status.historyPending = health.pending
        if let error = health.lastError {
            status.historyProblem = "writes failing, retrying: \(error)"
        } else if let aside = history.movedAside {
            status.historyProblem = "the history was corrupt; it was moved to \(aside) and a new one started"
        }
    }
}

extension Fields {
    func bool(_ key: String) throws -> Bool? {
        switch data[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw FieldError("data.\(key) must be true or false, not \(other.typeName)")
        }
    }

    func turnID() throws -> Int64 {
        guard let value = try int("id", in: 1...Int(Int32.max)) else { throw FieldError("data.id is required: the turn's id") }
        return Int64(value)
    }

    /// An ISO 8601 moment ("2026-11-22T08:00:00Z") or a day ("2026-11-22", midnight UTC).
    func date(_ key: String) throws -> Date? {
        guard let text = try string(key) else { return nil }
        guard let date = HistoryDates.parse(text) else {
            throw FieldError("data.\(key) \"\(text)\" is not a date; use ISO 8601 such as 2026-11-22 or 2026-11-22T08:00:00Z")
        }
        return date
    }

    /// `history_import`: one exported session and some of its turns.
    func importBatch() throws -> (SessionRecord, [TurnRecord]) {
        func decode<T: Decodable>(_ type: T.Type, _ key: String) throws -> T {
            guard let value = data[key] else { throw FieldError("data.\(key) is required") }
            do {
                return try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
            } catch {
                throw FieldError("data.\(key) is not what `parley history export --format json` writes: \(error)")
            }
        }
        let session = try decode(SessionInfo.self, "session")
        let turns = try decode([TurnInfo].self, "turns")
        guard let started = HistoryDates.parse(session.startedAt) else {
            throw FieldError("data.session.started_at \"\(session.startedAt)\" is not an ISO 8601 date")
        }
        let record = SessionRecord(
            startedAt: started, endedAt: session.endedAt.flatMap(HistoryDates.parse), speakerA: session.speakerA, speakerB: session.speakerB)
        let records = try turns.map { turn throws -> TurnRecord in
            guard let created = HistoryDates.parse(turn.createdAt) else {
                throw FieldError("turn \(turn.id): created_at \"\(turn.createdAt)\" is not an ISO 8601 date")
            }
            guard let status = TurnRecord.Status(rawValue: turn.status) else {
                throw FieldError("turn \(turn.id): status must be translated or untranslated, not \"\(turn.status)\"")
            }
            return TurnRecord(
                sessionID: 0, speaker: turn.speaker, sourceLang: turn.sourceLang, targetLang: turn.targetLang, sourceText: turn.sourceText,
                translatedText: turn.translatedText, ipa: turn.ipa, confidence: turn.confidence,
                wordConfidence: turn.words.flatMap { try? String(decoding: JSONEncoder().encode($0), as: UTF8.self) }, status: status, error: turn.error,
                favorite: turn.favorite, lowConfidence: turn.lowConfidence, createdAt: created, asrMs: turn.timings.asrMs,
                mtMs: turn.timings.mtMs, ttsMs: turn.timings.ttsMs, responseMs: turn.timings.responseMs)
        }
        return (record, records)
    }
}

/// ISO 8601 dates as the protocol writes them, and as people type them.
enum HistoryDates {
    static func parse(_ text: String) -> Date? {
        let full = ISO8601DateFormatter()
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        day.timeZone = TimeZone(identifier: "UTC")
        return day.date(from: text)
    }

    static func format(_ date: Date) -> String {
        TurnRecord.iso8601.string(from: date)
    }
}

extension SessionRecord {
    var info: SessionInfo {
        SessionInfo(
            id: id ?? 0, startedAt: HistoryDates.format(startedAt), endedAt: endedAt.map(HistoryDates.format), speakerA: speakerA,
            speakerB: speakerB)
    }
}
