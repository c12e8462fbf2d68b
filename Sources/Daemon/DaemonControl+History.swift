import Foundation
import Logging
import ParleyControl
import ParleyCore
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
    func setFavorite(_ reference: TurnReference, _ favorite: Bool) async throws -> TurnInfo {
        guard let turn = try await history.setFavorite(id: reference.id, favorite) else {
            throw NotFound("no turn \(reference.id); `parley history` lists the turns")
        }
        return turn.info
    }

    func delete(_ reference: TurnReference) async throws -> TurnInfo {
        guard let turn = try await history.deleteTurn(id: reference.id) else {
            throw NotFound("no turn \(reference.id); `parley history` lists the turns")
        }
        logger.notice("turn deleted", metadata: ["id": "\(reference.id)"])
        return turn.info
    }

    func clear() async throws -> ClearResult {
        let deleted = try await history.clear(keepingSession: writer.currentSessionID)
        logger.notice("history cleared", metadata: ["turns": "\(deleted)"])
        return ClearResult(deleted: deleted)
    }

    func undo() async throws -> TurnInfo {
        guard let session = writer.currentSessionID, let turn = try await history.undoLastTurn(inSession: session) else {
            throw NotFound("no turn to undo in this session")
        }
        logger.notice("turn undone", metadata: ["id": "\(turn.id ?? 0)"])
        return turn.info
    }

    func replay(_ reference: TurnReference) async throws -> TurnInfo {
        guard let turn = try await history.turn(id: reference.id) else {
            throw NotFound("no turn \(reference.id); `parley history` lists the turns")
        }
        return try await interpreter.replay(turn).info
    }

    func newSession() async throws -> SessionInfo {
        let settings = interpreter.snapshot.settings
        let session = try await writer.startSessionCommitted(speakerA: settings.speakerA, speakerB: settings.speakerB)
        logger.notice("new session", metadata: ["id": "\(session.id ?? 0)"])
        return session.info
    }

    func export(_ range: HistoryRange) async throws -> HistoryExportInfo {
        HistoryExportInfo(try await history.export(since: range.since?.date, until: range.until?.date))
    }

    func importBatch(_ batch: HistoryBatch) async throws -> ImportResult {
        let records: (session: SessionRecord, turns: [TurnRecord])
        do {
            records = try batch.records()
        } catch {
            throw FieldRefusal(error.description)
        }
        let turns = records.turns
        let imported = try await history.importSession(records.session, turns: turns)
        logger.notice("turns imported", metadata: ["imported": "\(imported)", "skipped": "\(turns.count - imported)"])
        return ImportResult(imported: imported, skipped: turns.count - imported)
    }

    /// `history`: the turns matching the request's filters, newest first.
    func search(_ request: HistoryQuery) async throws -> [TurnRecord] {
        var query = TurnQuery()
        query.limit = request.limit ?? HistoryQuery.defaultLimit
        query.offset = request.offset ?? 0
        query.text = request.search
        query.favoritesOnly = request.favorites ?? false
        query.speaker = request.speaker?.rawValue
        query.language = request.lang
        query.since = request.since?.date
        query.until = request.until?.date
        query.sessionID = request.session
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
