import Foundation
import ParleyTesting
import Testing

/// What people say stays out of the log unless `[log] transcripts = true`, and off the disk
/// altogether with `[history] enabled = false`: parleyd in file mode on a real recording.
@Suite("Transcripts stay out of logs", .serialized, .startsProcesses)
struct TranscriptPrivacyTests {
    /// The words of goforward.raw as heard, and of their translation, that a log could leak.
    static let heard = ["forward", "meters"]

    static func run(log: String, history: String = "") throws -> (output: EndToEnd.Output, dir: URL) {
        let dir = try EndToEnd.temporaryDirectory()
        let config = try EndToEnd.writeConfig(in: dir, extra: "[log]\nlevel = \"debug\"\n\(log)", history: history)
        let result = try EndToEnd.runFileMode(
            config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return (result, dir)
    }

    /// The translation's words, from what file mode printed ("[b es] ..."), lowercased.
    static func translatedWords(_ stdout: String) -> [String] {
        let line = stdout.split(separator: "\n").first { $0.hasPrefix("[b ") }.map(String.init) ?? ""
        return EndToEnd.words(line.split(separator: "]", maxSplits: 1).last.map(String.init) ?? "").filter { $0.count >= 5 }
    }

    @Test func nothingSaidIsLoggedByDefaultEvenAtDebug() throws {
        let (result, dir) = try Self.run(log: "")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Heard and translated: the turn happened.
        #expect(result.stdout.contains("go forward"), "\(result.stdout)")
        let translated = Self.translatedWords(result.stdout)
        #expect(!translated.isEmpty, "\(result.stdout)")
        let log = result.stderr.lowercased()
        for word in Self.heard + translated {
            #expect(!log.contains(word), "the log holds \"\(word)\":\n\(result.stderr)")
        }
        // The turn is still followed by its id.
        #expect(result.stderr.contains("turn id=1"), "\(result.stderr)")
    }

    @Test func transcriptsAreLoggedWhenSwitchedOn() throws {
        let (result, dir) = try Self.run(log: "transcripts = true")
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = result.stderr.lowercased()
        for word in Self.heard + Self.translatedWords(result.stdout) {
            #expect(log.contains(word), "the log lacks \"\(word)\":\n\(result.stderr)")
        }
    }

    /// `[history] enabled = false`: no file the daemon writes holds a word that was said (what
    /// the test itself captured from stdout, and the played audio, aside), and neither does the
    /// log, even with `transcripts = true`.
    @Test func withHistoryOffNothingSaidReachesTheDisk() throws {
        let (result, dir) = try Self.run(log: "transcripts = true", history: "enabled = false")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(result.stdout.contains("go forward"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("history.sqlite").path))
        let words = Self.heard + Self.translatedWords(result.stdout)
        let log = result.stderr.lowercased()
        for word in words { #expect(!log.contains(word), "the log holds \"\(word)\":\n\(result.stderr)") }
        let files = try FileManager.default.subpathsOfDirectory(atPath: dir.path).filter {
            !$0.hasSuffix(".out") && $0 != "out.wav" && $0 != "parley.toml"
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: dir.appendingPathComponent(file).path) else { continue }
            let text = String(decoding: data, as: UTF8.self).lowercased()
            for word in words { #expect(!text.contains(word), "\(file) holds \"\(word)\"") }
        }
    }
}
