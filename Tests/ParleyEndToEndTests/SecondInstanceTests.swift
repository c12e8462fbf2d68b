import Foundation
import ParleyTesting
import Testing
@testable import ParleyProtocol

#if canImport(Glibc)
import Glibc
#endif

/// One parleyd per control socket and history: a second one exits at once, naming the first,
/// and leaves its socket, microphone and database alone.
@Suite("A second parleyd", .serialized, .startsProcesses)
struct SecondInstanceTests {
    @Test func aSecondDaemonOnTheSameSocketAndHistoryExitsNamingTheFirstWhichKeepsServing() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (first, _, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: try ServiceLifecycleTests.silence(in: dir), played: "/dev/null")
        defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
        #expect(FileManager.default.fileExists(atPath: socket), "the first daemon is listening")

        let second = try EndToEnd.run(
            try EndToEnd.binary("parleyd"), ["--config", dir.appendingPathComponent("parley.toml").path], in: dir,
            environment: ["HOME": dir.path], timeout: 60)
        #expect(second.status == 4, "stderr: \(second.stderr)")
        let lines = second.stderr.split(separator: "\n").filter { $0.contains("already running") }
        #expect(lines.count == 1 && lines.first?.contains("pid \(first.processIdentifier)") == true, "\(second.stderr)")

        // The first one still has its socket and answers.
        #expect(first.isRunning)
        #expect(FileManager.default.fileExists(atPath: socket))
        let status = try ServiceLifecycleTests.call(socket, RawRequest(type: "status"), as: StatusInfo.self)
        #expect(status.state == "listening")

        // A file-mode run on the same history is refused too: it would write the same database.
        let recording = try EndToEnd.run(
            try EndToEnd.binary("parleyd"),
            ["--config", dir.appendingPathComponent("parley.toml").path, "--input", "\(EndToEnd.testData)/goforward.raw",
             "--output", dir.appendingPathComponent("o.wav").path], in: dir, environment: ["HOME": dir.path], timeout: 60)
        #expect(recording.status == 4 && recording.stderr.contains("history"), "stderr: \(recording.stderr)")

        // Once the first has gone (even killed), the next one starts.
        kill(first.processIdentifier, SIGKILL)
        #expect(EndToEnd.wait(first, timeout: 20))
        let (third, _, _) = try await EndToEnd.startLiveDaemon(in: dir, infile: try ServiceLifecycleTests.silence(in: dir), played: "/dev/null")
        defer { if third.isRunning { kill(third.processIdentifier, SIGKILL) } }
        // The killed daemon's socket file is still there: wait until the new one answers on it.
        var again: StatusInfo?
        for _ in 0..<300 where again == nil && third.isRunning {
            again = try? ServiceLifecycleTests.call(socket, RawRequest(type: "status"), as: StatusInfo.self)
            if again == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(again?.state == "listening" && third.isRunning)
    }
}
