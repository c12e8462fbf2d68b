import Foundation
import GRDB
import ParleyCore
import Testing
@testable import ParleyHistory
import ParleyTesting

@Suite("History")
struct HistoryTests {
    private func turn(_ session: Int64, _ text: String, at seconds: TimeInterval) -> TurnRecord {
        TurnRecord(
            sessionID: session, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: text,
            translatedText: "«\(text)»", confidence: 0.5, status: .translated, createdAt: Date(timeIntervalSince1970: seconds),
            asrMs: 10, mtMs: 2, ttsMs: 5, responseMs: 20)
    }

    @Test func turnsComeBackNewestFirst() async throws {
        // Given a session with three turns
        let database = try AppDatabase.inMemory()
        let session = try await database.startSession(speakerA: "en", speakerB: "es")
        let id = try #require(session.id)
        for (index, text) in ["one", "two", "three"].enumerated() {
            _ = try await database.insert(turn(id, text, at: 1_000 + TimeInterval(index)))
        }
        // When reading the latest two
        let recent = try await database.recentTurns(limit: 2)
        // Then they are the newest, newest first, with every field intact
        #expect(recent.map(\.sourceText) == ["three", "two"])
        #expect(recent.first?.translatedText == "«three»")
        #expect(recent.first?.responseMs == 20)
        #expect(try await database.turnCount() == 3)
    }

    @Test func unicodeRoundTrips() async throws {
        let database = try AppDatabase.inMemory()
        let session = try await database.startSession(speakerA: "en", speakerB: "es")
        let text = "漢字 · עברית · 👋🏽 café"
        let stored = try await database.insert(turn(try #require(session.id), text, at: 1))
        #expect(stored.id != nil)
        #expect(try await database.recentTurns(limit: 1).first?.sourceText == text)
    }

    @Test func fileDatabaseIsPrivate() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("sub/history.sqlite").path
        _ = try AppDatabase.open(path: path)
        let fileMode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        let folderMode = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(folderMode == 0o700)
    }

    @Test func reopeningKeepsTurns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("history.sqlite").path
        do {
            let database = try AppDatabase.open(path: path)
            let session = try await database.startSession(speakerA: "en", speakerB: "es")
            _ = try await database.insert(turn(try #require(session.id), "kept", at: 5))
        }
        let reopened = try AppDatabase.open(path: path)
        #expect(try await reopened.recentTurns(limit: 10).map(\.sourceText) == ["kept"])
    }

    private let words = [WordConfidence(text: "go", confidence: 0.998), WordConfidence(text: "forward", confidence: 0.31)]
    private let detection = SpeakerDetection(decidedBy: .turnOrder, scores: ["en": -3.5, "es": -6.25], rivalLanguage: "es", rivalText: "go for")

    @Test func wordsAndDetectionWrittenByEarlierVersionsStillRead() async throws {
        // Given a turn stored as parleyd wrote them before they were typed fields: JSON text
        // from a plain JSONEncoder, keys in their declared order.
        let database = try AppDatabase.inMemory()
        let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        let oldWords = #"[{"text":"go","confidence":0.998},{"text":"forward","confidence":0.31}]"#
        let oldDetection = #"{"scores":{"en":-3.5,"es":-6.25},"decided_by":"turn_order","rival_language":"es","rival_text":"go for"}"#
        try await database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO turns (session_id, speaker, source_lang, target_lang, source_text, status, created_at,
                                       word_confidence, detection)
                    VALUES (?, 'a', 'en', 'es', 'go forward', 'untranslated', '2026-11-22 05:19:17.975', ?, ?)
                    """,
                arguments: [session, oldWords, oldDetection])
        }
        // When it is read, then its words and detection are there.
        let turn = try #require(try await database.recentTurns(limit: 1).first)
        #expect(turn.words == words)
        #expect(turn.detection == detection)
    }

    @Test func aHistoryFromBeforeTheEngineWasKeptOpensAndItsTurnsHaveNone() async throws {
        // Given a history file as parleyd left it before v8: a turn of v7's columns
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("history.sqlite").path
        do {
            let old = try DatabaseQueue(path: path)
            try AppDatabase.migrator.migrate(old, upTo: "v7: speculation")
            try await old.write { db in
                #expect(try !db.columns(in: "turns").contains { $0.name == "engine" })
                try db.execute(sql: "INSERT INTO sessions (started_at, speaker_a, speaker_b) VALUES ('2026-11-22 05:19:00.000', 'en', 'es')")
                try db.execute(
                    sql: """
                        INSERT INTO turns (session_id, speaker, source_lang, target_lang, source_text, status, created_at,
                                           pause_ms, ended_by, speculated)
                        VALUES (1, 'a', 'en', 'es', 'go forward', 'untranslated', '2026-11-22 05:19:17.975', 260, 'silence', 0)
                        """)
            }
            try old.close()
        }
        // When parleyd opens it, then it is brought up to date and the old turn reads, with no
        // engine nor streaming words
        let database = try AppDatabase.open(path: path)
        let turn = try #require(try await database.recentTurns(limit: 1).first)
        #expect(turn.sourceText == "go forward" && turn.endedBy == "silence" && turn.speculated == false)
        #expect(turn.engine == nil && turn.streamingText == nil)
        // And a new turn keeps both
        var heard = self.turn(turn.sessionID, "go forward ten meters", at: 2_000_000_000)
        heard.engine = "moonshine-tiny"
        heard.streamingText = "go for word ten meters"
        _ = try await database.insert(heard)
        let newest = try #require(try await database.recentTurns(limit: 1).first)
        #expect(newest.engine == "moonshine-tiny" && newest.streamingText == "go for word ten meters")
        try database.close()
    }

    @Test func wordsAndDetectionAreStoredAsJSONText() async throws {
        let database = try AppDatabase.inMemory()
        let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        var stored = turn(session, "go forward", at: 1)
        stored.words = words
        stored.detection = detection
        _ = try await database.insert(stored)
        let row = try #require(
            try await database.writer.read { db in
                try Row.fetchOne(
                    db, sql: "SELECT typeof(word_confidence) AS wt, word_confidence, typeof(detection) AS dt, detection FROM turns")
            })
        // Text, as earlier versions wrote and read it, so an older parleyd still reads it too.
        #expect(row["wt"] as String? == "text" && row["dt"] as String? == "text")
        let wordsText: String = try #require(row["word_confidence"])
        let detectionText: String = try #require(row["detection"])
        #expect(try JSONDecoder().decode([WordConfidence].self, from: Data(wordsText.utf8)) == words)
        #expect(try JSONDecoder().decode(SpeakerDetection.self, from: Data(detectionText.utf8)) == detection)
    }
}

@Suite("History search and management")
struct HistorySearchTests {
    private func turn(
        _ session: Int64, _ text: String, _ translation: String? = nil, speaker: Speaker = .a, from: String = "en", to: String = "es",
        at seconds: TimeInterval, favorite: Bool = false
    ) -> TurnRecord {
        TurnRecord(
            sessionID: session, speaker: speaker, sourceLang: from, targetLang: to, sourceText: text, translatedText: translation,
            confidence: nil, status: translation == nil ? .untranslated : .translated, favorite: favorite,
            createdAt: Date(timeIntervalSince1970: seconds))
    }

    /// Given a history with one session and these turns (text, translation), one second apart.
    private func history(_ turns: [(String, String?)]) async throws -> (AppDatabase, Int64) {
        let database = try AppDatabase.inMemory()
        let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        for (index, (text, translation)) in turns.enumerated() {
            _ = try await database.insert(turn(session, text, translation, at: 1_000 + TimeInterval(index)))
        }
        return (database, session)
    }

    private func texts(_ database: AppDatabase, _ query: TurnQuery) async throws -> [String] {
        try await database.search(query).map(\.sourceText)
    }

    @Test func searchIgnoresCaseAndAccentsInBothTexts() async throws {
        let (database, _) = try await history([
            ("a coffee please", "un café por favor"), ("CAFÉ au lait", nil), ("tea", "té"), ("Ünïcödé here", "aquí"),
        ])
        #expect(try await texts(database, TurnQuery(text: "cafe")) == ["CAFÉ au lait", "a coffee please"])
        #expect(try await texts(database, TurnQuery(text: "CAFÉ")) == ["CAFÉ au lait", "a coffee please"])
        #expect(try await texts(database, TurnQuery(text: "unicode")) == ["Ünïcödé here"])
        #expect(try await texts(database, TurnQuery(text: "te")) == ["tea"])  // a prefix, and "té" folded
        #expect(try await texts(database, TurnQuery(text: "cafe lait")) == ["CAFÉ au lait"])  // every word
        #expect(try await texts(database, TurnQuery(text: "chocolate")).isEmpty)
        // FTS operators and quotes are words, not syntax.
        #expect(try await texts(database, TurnQuery(text: "\"tea OR")).isEmpty)
        #expect(try await texts(database, TurnQuery(text: "tea*")) == ["tea"])
    }

    @Test func searchFollowsEditsAndDeletes() async throws {
        let (database, _) = try await history([("the café", "el café")])
        let id = try #require(try await database.search(TurnQuery(text: "cafe")).first?.id)
        #expect(try await database.deleteTurn(id: id) != nil)
        #expect(try await texts(database, TurnQuery(text: "cafe")).isEmpty)
        #expect(try await database.deleteTurn(id: id) == nil)
    }

    @Test func filtersCombineAndPagesAreNewestFirst() async throws {
        let database = try AppDatabase.inMemory()
        let first = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        let second = try #require(try await database.startSession(speakerA: "en", speakerB: "fr").id)
        _ = try await database.insert(turn(first, "one", "uno", at: 100))
        _ = try await database.insert(turn(first, "dos", "two", speaker: .b, from: "es", to: "en", at: 200, favorite: true))
        _ = try await database.insert(turn(second, "three", "trois", to: "fr", at: 300))
        _ = try await database.insert(turn(second, "quatre", "four", speaker: .b, from: "fr", to: "en", at: 400, favorite: true))
        #expect(try await texts(database, TurnQuery()) == ["quatre", "three", "dos", "one"])
        #expect(try await texts(database, TurnQuery(favoritesOnly: true)) == ["quatre", "dos"])
        #expect(try await texts(database, TurnQuery(speaker: "b")) == ["quatre", "dos"])
        #expect(try await texts(database, TurnQuery(language: "fr")) == ["quatre", "three"])
        #expect(try await texts(database, TurnQuery(language: "es")) == ["dos", "one"])
        #expect(try await texts(database, TurnQuery(since: Date(timeIntervalSince1970: 200))) == ["quatre", "three", "dos"])
        #expect(try await texts(database, TurnQuery(until: Date(timeIntervalSince1970: 200))) == ["one"])
        #expect(try await texts(database, TurnQuery(sessionID: first)) == ["dos", "one"])
        #expect(try await texts(database, TurnQuery(favoritesOnly: true, sessionID: second)) == ["quatre"])
        // Paging: two pages of two, then nothing.
        #expect(try await texts(database, TurnQuery(limit: 2, offset: 0)) == ["quatre", "three"])
        #expect(try await texts(database, TurnQuery(limit: 2, offset: 2)) == ["dos", "one"])
        #expect(try await texts(database, TurnQuery(limit: 2, offset: 4)).isEmpty)
    }

    @Test func favoritesAreMarkedAndUnmarked() async throws {
        let (database, _) = try await history([("hello", "hola"), ("bye", "adiós")])
        let id = try #require(try await database.search(TurnQuery(text: "hello")).first?.id)
        #expect(try await database.setFavorite(id: id, true)?.favorite == true)
        #expect(try await texts(database, TurnQuery(favoritesOnly: true)) == ["hello"])
        #expect(try await database.setFavorite(id: id, false)?.favorite == false)
        #expect(try await texts(database, TurnQuery(favoritesOnly: true)).isEmpty)
        #expect(try await database.setFavorite(id: 999, true) == nil)
    }

    @Test func retentionKeepsTheNewestAndEveryFavorite() async throws {
        let database = try AppDatabase.inMemory()
        let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        // Given turns 0...9, of which 1 and 2 are favorites
        for index in 0..<10 {
            _ = try await database.insert(turn(session, "t\(index)", "x", at: TimeInterval(1_000 + index), favorite: [1, 2].contains(index)))
        }
        // When keeping at most 3 ordinary turns
        let dropped = try await database.applyRetention(Retention(maxTurns: 3, maxAgeDays: nil))
        // Then the 3 newest ordinary turns and both favorites are left
        #expect(dropped == 5)
        #expect(try await texts(database, TurnQuery()) == ["t9", "t8", "t7", "t2", "t1"])
        // Age: a day after t9, with a 1-day limit only favorites older than that survive.
        let now = Date(timeIntervalSince1970: 1_009 + 86_400)
        #expect(try await database.applyRetention(Retention(maxTurns: nil, maxAgeDays: 1), now: now) == 2)
        #expect(try await texts(database, TurnQuery()) == ["t9", "t2", "t1"])
    }

    @Test func recordAppliesRetentionAndSkipsARepeat() async throws {
        let database = try AppDatabase.inMemory()
        let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        let first = try await database.record(turn(session, "hello", "hola", at: 1), retention: .unlimited)
        // The same words again, right after: not stored twice; the stored turn comes back.
        let again = try await database.record(turn(session, "hello", "hola", at: 2), retention: .unlimited)
        #expect(again.id == first.id)
        #expect(try await database.turnCount() == 1)
        // Another speaker, or something in between, is a new turn.
        _ = try await database.record(turn(session, "hello", "hola", speaker: .b, at: 3), retention: .unlimited)
        _ = try await database.record(turn(session, "hello", "hola", at: 4), retention: .unlimited)
        #expect(try await database.turnCount() == 3)
        // Retention runs with every write.
        _ = try await database.record(turn(session, "new", "nuevo", at: 5), retention: Retention(maxTurns: 2))
        #expect(try await texts(database, TurnQuery()) == ["new", "hello"])
    }

    @Test func undoDeletesTheLastTurnOfTheSessionOnly() async throws {
        let database = try AppDatabase.inMemory()
        let old = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        _ = try await database.insert(turn(old, "old", "viejo", at: 1))
        let current = try #require(try await database.startSession(speakerA: "en", speakerB: "es", ending: old).id)
        #expect(try await database.undoLastTurn(inSession: current) == nil)
        _ = try await database.insert(turn(current, "one", "uno", at: 2))
        _ = try await database.insert(turn(current, "two", "dos", at: 3))
        #expect(try await database.undoLastTurn(inSession: current)?.sourceText == "two")
        #expect(try await texts(database, TurnQuery()) == ["one", "old"])
        #expect(try await database.export().sessions.first { $0.id == old }?.endedAt != nil)
    }

    @Test func clearDeletesEverythingButTheCurrentSession() async throws {
        let database = try AppDatabase.inMemory()
        let old = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        _ = try await database.insert(turn(old, "old", "viejo", at: 1, favorite: true))
        let current = try #require(try await database.startSession(speakerA: "en", speakerB: "es", ending: old).id)
        _ = try await database.insert(turn(current, "now", "ahora", at: 2))
        #expect(try await database.clear(keepingSession: current) == 2)
        #expect(try await database.turnCount() == 0)
        #expect(try await texts(database, TurnQuery(text: "old")).isEmpty)
        // The current session still takes turns.
        _ = try await database.insert(turn(current, "later", "luego", at: 3))
        #expect(try await texts(database, TurnQuery()) == ["later"])
    }

    @Test func exportImportRoundTripsUnicodeAndIsIdempotent() async throws {
        let samples = [
            ("漢字かな交じり文、中文简体", "日本語"), ("שלום עולם — مرحبا بالعالم", "‏RTL‏"), ("👋🏽 family 👨‍👩‍👧‍👦 flags 🇪🇸", "emoji ✓"),
            ("quote \" comma , newline\nend", nil),
        ]
        let (source, _) = try await history(samples)
        let export = try await source.export()
        #expect(export.turns.count == 4)
        // Into a fresh history, twice.
        let target = try AppDatabase.inMemory()
        let session = try #require(export.sessions.first)
        #expect(try await target.importSession(session, turns: export.turns) == 4)
        #expect(try await target.importSession(session, turns: export.turns) == 0)
        let copy = try await target.export()
        #expect(copy.sessions.count == 1)
        #expect(copy.turns.map(\.sourceText) == samples.map(\.0))
        #expect(copy.turns.map(\.translatedText) == samples.map(\.1))
        #expect(copy.turns.map(\.createdAt) == export.turns.map(\.createdAt))
        // And searchable there.
        #expect(try await texts(target, TurnQuery(text: "عالم")).isEmpty)  // a word is matched from its start
        #expect(try await texts(target, TurnQuery(text: "بالعالم")) == [samples[1].0])
        #expect(try await texts(target, TurnQuery(text: "שלום")) == [samples[1].0])
    }

    /// Issue 38: `history import` of a history's own turns added them again when they came
    /// without their session (`parley history --json`): the CLI makes one up, starting at the
    /// first turn, and the turns were looked for in that session only.
    @Test func turnsAlreadyThereAreSkippedWhateverSessionTheyComeWith() async throws {
        let (database, _) = try await history([("one", "uno"), ("two", "dos")])
        let export = try await database.export()
        let first = try #require(export.turns.first)
        let madeUp = SessionRecord(startedAt: first.createdAt, speakerA: "en", speakerB: "es")
        func sessions() async throws -> Int { try await database.writer.read { try SessionRecord.fetchCount($0) } }
        #expect(try await database.importSession(madeUp, turns: export.turns) == 0)
        #expect(try await database.turnCount() == 2)
        // No session is stored for turns that were all there.
        #expect(try await sessions() == 1)
        // A turn that is new goes into the session given (stored then).
        var new = first
        new.sourceText = "three"
        #expect(try await database.importSession(madeUp, turns: export.turns + [new]) == 1)
        #expect(try await sessions() == 2)
    }

    @Test func exportTakesAPeriod() async throws {
        let (database, _) = try await history([("one", "uno"), ("two", "dos"), ("three", "tres")])
        let middle = try await database.export(since: Date(timeIntervalSince1970: 1_001), until: Date(timeIntervalSince1970: 1_002))
        #expect(middle.turns.map(\.sourceText) == ["two"])
        #expect(middle.sessions.count == 1)
    }

    @Test func corruptFileIsMovedAsideAndANewHistoryStarted() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("history.sqlite").path
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let database = try AppDatabase.open(path: path, now: Date(timeIntervalSince1970: 1_795_000_000))
        let aside = try #require(database.movedAside)
        #expect(aside == path + ".corrupt-20261118T110640Z")
        #expect(try Data(contentsOf: URL(fileURLWithPath: aside)) == garbage)
        #expect(try await database.integrityCheck() == "ok")
        let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
        _ = try await database.insert(turn(session, "fresh", "nuevo", at: 1))
        #expect(try await database.turnCount() == 1)
        try database.close()
        // A sound file is left where it is.
        #expect(try AppDatabase.open(path: path).movedAside == nil)
    }

    @Test func corruptPagesInsideAValidFileAreCaught() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-history-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("history.sqlite").path
        do {
            let database = try AppDatabase.open(path: path)
            let session = try #require(try await database.startSession(speakerA: "en", speakerB: "es").id)
            for index in 0..<200 { _ = try await database.insert(turn(session, String(repeating: "words \(index) ", count: 20), "x", at: TimeInterval(index))) }
        }
        // Scribble over the middle of the file, keeping its header.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size / 2)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 8192))
        try handle.close()
        let reopened = try AppDatabase.open(path: path)
        #expect(reopened.movedAside != nil)
        #expect(try await reopened.turnCount() == 0)
    }
}
