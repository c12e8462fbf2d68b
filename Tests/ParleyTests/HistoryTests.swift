import Foundation
import Testing
@testable import ParleyHistory

@Suite("History")
struct HistoryTests {
    private func turn(_ session: Int64, _ text: String, at seconds: TimeInterval) -> TurnRecord {
        TurnRecord(
            sessionID: session, speaker: "a", sourceLang: "en", targetLang: "es", sourceText: text,
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
}
