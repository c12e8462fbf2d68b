import Foundation
import ParleyControl
import ParleyCore
import Testing
@testable import ParleyHistory
import ParleyProtocol
import ParleyRuntime
import ParleyTesting

/// A history's turns through the wire (issue 27): `history_export`, then the file read back and
/// sent as `history_import` requests, carries every field of every turn. The fixture must fill
/// every field of `TurnRecord` and `TurnInfo` (checked by reflection), so a field added to
/// either and not carried through by the mapping (Sources/Runtime/HistoryWire.swift) fails here.
@Suite("History over the wire")
struct HistoryWireTests {
    /// Given a history whose turns, between them, fill every field (and set every flag): two
    /// sessions, ids that a fresh history would not give (a session and a turn deleted first).
    private func filledHistory() async throws -> AppDatabase {
        let database = try AppDatabase.inMemory()
        _ = try await database.startSession(speakerA: "fr", speakerB: "de", at: Date(timeIntervalSince1970: 900))
        let first = try #require(try await database.startSession(speakerA: "en", speakerB: "es", at: Date(timeIntervalSince1970: 1_000.5)).id)
        let gone = try await database.insert(TurnRecord(
            sessionID: first, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: "gone", translatedText: nil,
            confidence: nil, status: .untranslated, createdAt: Date(timeIntervalSince1970: 1_000.75)))
        _ = try await database.deleteTurn(id: try #require(gone.id))
        _ = try await database.insert(TurnRecord(
            sessionID: first, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: "go forward ten meters",
            translatedText: "avanza diez metros", ipa: "aβˈanθa ðjeθ ˈmetɾos", confidence: 0.42,
            words: [
                WordConfidence(text: "go", confidence: 0.998), WordConfidence(text: "forward", confidence: 0.996),
                WordConfidence(text: "ten", confidence: 0.125), WordConfidence(text: "meters", confidence: 0.778),
            ],
            status: .translated, error: "low confidence (0.42 < 0.50)", favorite: true, lowConfidence: true,
            createdAt: Date(timeIntervalSince1970: 1_001.25), asrMs: 12, mtMs: 3, ttsMs: 4, responseMs: 16, pauseMs: 260,
            endedBy: "language_model", speculated: true,
            detection: SpeakerDetection(decidedBy: .audio, scores: ["en": -3.25, "es": -5.5], rivalLanguage: "es", rivalText: "go fue"),
            engine: "moonshine-tiny", streamingText: "go for word ten meters", route: "apertium"))
        _ = try await database.insert(TurnRecord(
            sessionID: first, speaker: .b, sourceLang: "es", targetLang: "en", sourceText: "sí", translatedText: "yes",
            confidence: 0.9, words: [WordConfidence(text: "sí", confidence: 0.9)], status: .translated,
            createdAt: Date(timeIntervalSince1970: 1_002), asrMs: 0, mtMs: 1, ttsMs: 2, responseMs: 5, pauseMs: 900, endedBy: "silence",
            speculated: false,
            detection: SpeakerDetection(decidedBy: .turnOrder, scores: ["en": -4.5, "es": -4.25], rivalLanguage: "en", rivalText: "see"),
            engine: "whisper@asr.example:10300", streamingText: "si", route: "apertium via es"))
        try await database.endSession(id: first, at: Date(timeIntervalSince1970: 1_010.125))
        let second = try #require(try await database.startSession(speakerA: "en", speakerB: "fr", at: Date(timeIntervalSince1970: 2_000)).id)
        // A typed turn: no words, timings, detection nor engine; its empty fields must stay empty.
        _ = try await database.insert(TurnRecord(
            sessionID: second, speaker: .b, sourceLang: "fr", targetLang: "en", sourceText: "« bonjour »", translatedText: nil,
            confidence: nil, status: .untranslated, error: "no translator for fr-en", createdAt: Date(timeIntervalSince1970: 2_000.5)))
        return database
    }

    @Test func exportThenImportKeepsEveryFieldOfEveryTurn() async throws {
        let source = try await filledHistory()
        let export = try await source.export()
        #expect(export.turns.count == 3 && export.sessions.count == 2)
        #expect(unfilled(export.turns).isEmpty, "the fixture leaves fields of TurnRecord empty: \(unfilled(export.turns))")
        #expect(unfilled(export.sessions).isEmpty, "the fixture leaves fields of SessionRecord empty: \(unfilled(export.sessions))")
        let sent = HistoryExportInfo(export)
        #expect(unfilled(sent.turns).isEmpty, "the fixture leaves fields of TurnInfo empty: \(unfilled(sent.turns))")

        // The reply as the daemon writes it, read as `parley history export` reads it; the file
        // it writes read back by `parley history import`, which sends a request per session.
        let reply = try JSONDecoder().decode(ResultReply<HistoryExportInfo>.self, from: Replies.result(sent, id: nil))
        let file = try JSONDecoder().decode(HistoryExportInfo.self, from: try JSONEncoder().encode(reply.data))
        let target = try AppDatabase.inMemory()
        for session in file.sessions {
            let batch = HistoryBatch(session: session, turns: file.turns.filter { $0.sessionID == session.id })
            guard case .historyImport(let received) = try Request(line: try JSONEncoder().encode(Request(.historyImport(batch)))).command
            else {
                Issue.record("the request was not read as history_import")
                return
            }
            let (record, turns) = try received.records()
            #expect(try await target.importSession(record, turns: turns) == batch.turns.count)
        }

        // Then the history's export is what was sent, but for the ids the new history gave.
        let back = HistoryExportInfo(try await target.export())
        #expect(back.turns.map(\.id) != sent.turns.map(\.id), "the ids are new: the comparison below must not rely on them")
        let expected = renumbered(sent)
        let imported = renumbered(back)
        #expect(imported == expected)
        // The same as the wire has it (a field outside Equatable or Codable would show here).
        let expectedJSON = try json(expected)
        let importedJSON = try json(imported)
        #expect(importedJSON == expectedJSON)
    }

    @Test func aRecordThroughTheWireIsTheSameRecord() async throws {
        let export = try await filledHistory().export()
        for turn in export.turns { #expect(try TurnRecord(turn.info) == turn) }
        for session in export.sessions { #expect(try SessionRecord(session.info) == session) }
    }

    @Test func aDateOrStatusThatCannotBeReadIsRefused() async throws {
        let export = HistoryExportInfo(try await filledHistory().export())
        let session = try #require(export.sessions.first)
        var turn = try #require(export.turns.first)
        // A status or a speaker that cannot be read: the turn itself does not decode.
        let json = try #require(String(data: try JSONEncoder().encode(turn), encoding: .utf8))
        for (field, value) in [("status", turn.status.rawValue), ("speaker", turn.speaker.rawValue)] {
            let lost = json.replacingOccurrences(of: "\"\(field)\":\"\(value)\"", with: "\"\(field)\":\"lost\"")
            #expect(lost != json, "\(field) is in \(json)")
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(TurnInfo.self, from: Data(lost.utf8)) }
        }
        turn.createdAt = "yesterday"
        #expect(throws: HistoryWireError.self) { try HistoryBatch(session: session, turns: [turn]).records() }
        var unreadable = session
        unreadable.startedAt = "2026-13-45"
        #expect(throws: HistoryWireError.self) { try HistoryBatch(session: unreadable, turns: []).records() }
    }

    @Test func aTurnWithoutEngineLeavesItOutAndOneFromBeforeItWasKeptStillReads() throws {
        // A turn as `history`, the `turn` event and exports carried it before the engine was
        // kept (the example of docs/protocol.md, less some fields)...
        let old = #"""
            {"id":1,"session_id":1,"speaker":"a","source_lang":"en","target_lang":"es","source_text":"go forward ten meters",
             "translated_text":"Va de frente diez metros","confidence":0.87,"low_confidence":false,"favorite":false,
             "status":"translated","created_at":"2026-11-22T05:19:17.975Z","timings":{"asr_ms":12,"pause_ms":260,"ended_by":"silence"}}
            """#
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(old.utf8))
        // ...reads with no engine, and is written back without the keys (an older client, or
        // an older parleyd importing it, sees what it always saw).
        #expect(turn.engine == nil && turn.streamingText == nil)
        let written = try json(turn)
        #expect(!written.contains("\"engine\"") && !written.contains("\"streaming_text\""))
        #expect(try TurnRecord(turn).engine == nil)
        // A turn with both has them under their wire names.
        var heard = turn
        heard.engine = "whisper-base"
        heard.streamingText = "go for word ten meters"
        let keys = try JSONSerialization.jsonObject(with: JSONEncoder().encode(heard)) as? [String: Any]
        #expect(keys?["engine"] as? String == "whisper-base" && keys?["streaming_text"] as? String == "go for word ten meters")
    }

    /// `export` with each session's id and each turn's id replaced by its position (from 1),
    /// and each turn's session id by its session's position.
    private func renumbered(_ export: HistoryExportInfo) -> HistoryExportInfo {
        var copy = export
        let position = Dictionary(uniqueKeysWithValues: export.sessions.enumerated().map { ($1.id, Int64($0 + 1)) })
        for index in copy.sessions.indices { copy.sessions[index].id = Int64(index + 1) }
        for index in copy.turns.indices {
            copy.turns[index].id = Int64(index + 1)
            copy.turns[index].sessionID = position[copy.turns[index].sessionID] ?? -1
        }
        return copy
    }

    private func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The fields (nested structs' as `outer.inner`) that no value of `values` fills: nil in all
    /// of them, or, for a flag, false in all of them.
    private func unfilled(_ values: [Any]) -> [String] {
        var filled: [String: Bool] = [:]
        for value in values {
            for (name, field) in fields(value) {
                filled[name, default: false] = filled[name, default: false] || field.map { ($0 as? Bool) ?? true } ?? false
            }
        }
        return filled.filter { !$0.value }.map(\.key).sorted()
    }

    /// Every field of `value`, with a nested struct's fields (not a date's) listed after it.
    private func fields(_ value: Any, _ prefix: String = "") -> [(String, Any?)] {
        Mirror(reflecting: value).children.flatMap { child -> [(String, Any?)] in
            let name = prefix + (child.label ?? "")
            var field: Any? = child.value
            let mirror = Mirror(reflecting: child.value)
            if mirror.displayStyle == .optional { field = mirror.children.first?.value }
            guard let field else { return [(name, nil)] }
            if Mirror(reflecting: field).displayStyle == .struct, !(field is Date) { return [(name, field)] + fields(field, name + ".") }
            return [(name, field)]
        }
    }
}
