import Foundation
import ParleyTesting
import Testing
@testable import ParleyDaemon
@testable import ParleyHistory

/// Config and path errors each give one short line saying what to do (issue 16, item 15).
@Suite("Path errors", .startsProcesses)
struct PathErrorTests {
    /// One short line, with no NSError text in it.
    private func expectShortLine(_ message: String, saying words: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = message.split(separator: "\n")
        #expect(lines.count == 1, "\(message)", sourceLocation: sourceLocation)
        #expect(message.count < 300, "\(message.prefix(400))", sourceLocation: sourceLocation)
        for noise in ["NSCocoaErrorDomain", "Error Domain", "UserInfo", "NSFilePath", "The operation could not be completed"] {
            #expect(!message.contains(noise), "\(message)", sourceLocation: sourceLocation)
        }
        for word in words {
            #expect(message.contains(word), "\(message)", sourceLocation: sourceLocation)
        }
    }

    /// What parleyd says on stderr, and its exit code, for a config of `text`.
    private func start(with text: String) throws -> EndToEnd.Output {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("parley.toml")
        try text.write(to: config, atomically: true, encoding: .utf8)
        return try EndToEnd.run(try EndToEnd.binary("parleyd"), ["--config", config.path], in: dir, environment: ["HOME": dir.path], timeout: 60)
    }

    @Test func aSocketUnderProcSaysWhatToSet() throws {
        let output = try start(with: "[control]\nsocket = \"/proc/parley/control.sock\"\n[history]\nenabled = false\n")
        #expect(output.status == 2)
        expectShortLine(output.stderr.trimmingCharacters(in: .whitespacesAndNewlines), saying: "[control] socket", "/proc/parley", "set it to")
    }

    @Test func aSocketFolderNothingCanBeMadeInSaysSo() throws {
        #expect(throws: DaemonFailure.self) {
            try Daemon.prepareFolder(of: "/proc/control.sock", mode: 0o750, key: "[control] socket", fix: "a writable folder")
        }
        do {
            try Daemon.prepareFolder(of: "/proc/control.sock", mode: 0o750, key: "[control] socket", fix: "a writable folder")
        } catch {
            #expect(error.code == .config)
            expectShortLine(error.description, saying: "cannot make files in /proc", "set it to a writable folder")
        }
    }

    @Test func aBadHistoryPathSaysWhatToSet() throws {
        let output = try start(with: "[history]\npath = \"/proc/parley/history.sqlite\"\n")
        #expect(output.status == 2)
        expectShortLine(output.stderr.trimmingCharacters(in: .whitespacesAndNewlines), saying: "[history] path", "/proc/parley", "enabled = false")
    }

    @Test func aHistoryPathThatIsAFolderSaysSo() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            try Daemon.prepareFolder(of: dir.path, mode: 0o700, key: "[history] path", fix: "a file")
            Issue.record("a folder was taken as the history file")
        } catch {
            expectShortLine(error.description, saying: "is a folder")
        }
    }

    /// Opened directly (as a deleted history is made again), the history says why in words.
    @Test func openingAHistoryWhereNoFolderCanBeMadeGivesTheReasonNotTheNSError() {
        do {
            _ = try AppDatabase.open(path: "/proc/parley/history.sqlite")
            Issue.record("opened a history under /proc")
        } catch {
            expectShortLine(error.description, saying: "cannot make its folder /proc/parley", "enabled = false")
        }
    }

    @Test func aLongPathIsCutShort() {
        let long = "/proc/" + String(repeating: "p", count: 100_000) + "/history.sqlite"
        do {
            try Daemon.prepareFolder(of: long, mode: 0o700, key: "[history] path", fix: "a file")
            Issue.record("no error")
        } catch {
            expectShortLine(error.description, saying: "[history] path")
        }
    }
}
