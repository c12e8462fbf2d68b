import Foundation
import ParleyCore
import ParleyHistory
import ParleyProtocol

// The history's records as the wire carries them, both ways, and nowhere else: a turn or a
// session as clients see it (`history`, `turn` events, `history_export`), and read back from
// the wire (`history_import`). Each direction undoes the other; HistoryWireTests fails when a
// field of `TurnRecord` or `TurnInfo` is not carried through.

extension TurnRecord {
    /// The turn as clients see it.
    public var info: TurnInfo {
        TurnInfo(
            id: id ?? 0, sessionID: sessionID, speaker: speaker, sourceLang: sourceLang, targetLang: targetLang,
            sourceText: sourceText, translatedText: translatedText, ipa: ipa, confidence: confidence, words: words,
            favorite: favorite, lowConfidence: lowConfidence, status: status, error: error,
            createdAt: HistoryTime.format(createdAt),
            timings: .init(
                asrMs: asrMs, mtMs: mtMs, ttsMs: ttsMs, responseMs: responseMs, pauseMs: pauseMs, endedBy: endedBy,
                speculated: speculated),
            detection: detection, engine: engine, streamingText: streamingText, route: route)
    }

    /// A turn as a client sent it, with the id and session it was sent with (an import gives it
    /// its own). A date that cannot be read is an error (a speaker or status that cannot is one
    /// already, where the turn is decoded).
    public init(_ info: TurnInfo) throws(HistoryWireError) {
        guard let created = HistoryTime.parse(info.createdAt) else {
            throw HistoryWireError("turn \(info.id): created_at \"\(info.createdAt)\" is not an ISO 8601 date")
        }
        let timings = info.timings
        self.init(
            id: info.id, sessionID: info.sessionID, speaker: info.speaker, sourceLang: info.sourceLang, targetLang: info.targetLang,
            sourceText: info.sourceText, translatedText: info.translatedText, ipa: info.ipa, confidence: info.confidence,
            words: info.words, status: info.status, error: info.error, favorite: info.favorite, lowConfidence: info.lowConfidence,
            createdAt: created, asrMs: timings.asrMs, mtMs: timings.mtMs, ttsMs: timings.ttsMs, responseMs: timings.responseMs,
            pauseMs: timings.pauseMs, endedBy: timings.endedBy, speculated: timings.speculated, detection: info.detection,
            engine: info.engine, streamingText: info.streamingText, route: info.route)
    }
}

extension SessionRecord {
    /// The session as clients see it.
    public var info: SessionInfo {
        SessionInfo(
            id: id ?? 0, startedAt: HistoryTime.format(startedAt), endedAt: endedAt.map(HistoryTime.format), speakerA: speakerA,
            speakerB: speakerB)
    }

    /// A session as a client sent it, with its id. A start that cannot be read is an error; an
    /// end that cannot be read is left out.
    public init(_ info: SessionInfo) throws(HistoryWireError) {
        guard let started = HistoryTime.parse(info.startedAt) else {
            throw HistoryWireError("session \(info.id): started_at \"\(info.startedAt)\" is not an ISO 8601 date")
        }
        self.init(
            id: info.id, startedAt: started, endedAt: info.endedAt.flatMap(HistoryTime.parse), speakerA: info.speakerA,
            speakerB: info.speakerB)
    }
}

extension HistoryExportInfo {
    /// `history_export`: the export's sessions and turns as clients see them.
    public init(_ export: HistoryExport) {
        self.init(sessions: export.sessions.map(\.info), turns: export.turns.map(\.info))
    }
}

extension HistoryBatch {
    /// `history_import`'s session and turns as history records.
    public func records() throws(HistoryWireError) -> (session: SessionRecord, turns: [TurnRecord]) {
        let record = try SessionRecord(session)
        var records: [TurnRecord] = []
        records.reserveCapacity(turns.count)
        for turn in turns { records.append(try TurnRecord(turn)) }
        return (record, records)
    }
}

/// A turn or session from the wire that cannot be stored: a date or status that cannot be read.
public struct HistoryWireError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
