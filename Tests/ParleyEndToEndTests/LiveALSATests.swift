import Foundation
import ParleyTesting
import Testing
@testable import ParleyProtocol

/// parleyd live, through the real ALSA API: ALSA's file plugin feeds goforward.raw in as the
/// microphone and records what is played, so no sound card is needed.
@Suite("Live through ALSA, end to end", .serialized, .startsProcesses)
struct LiveALSATests {
    @Test func aRealUtteranceBecomesASpokenTranslationAndATurn() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let played = dir.appendingPathComponent("played.raw")
        let (daemon, daemonErr, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: "\(EndToEnd.testData)/goforward.raw", played: played.path)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        // Ask the daemon, through the CLI, until the turn is in its history.
        let parley = try EndToEnd.binary("parley")
        var turns: [TurnInfo] = []
        let deadline = Date(timeIntervalSinceNow: 60)
        while turns.isEmpty && Date() < deadline && daemon.isRunning {
            let result = try EndToEnd.run(parley, ["history", "--json", "--socket", socket], in: dir)
            if result.status == 0 {
                turns = try JSONDecoder().decode([TurnInfo].self, from: Data(result.stdout.utf8))
            }
            if turns.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
        }
        let log = (try? String(contentsOf: daemonErr, encoding: .utf8)) ?? ""
        let turn = try #require(turns.first, "no turn; parleyd said: \(log)")
        #expect(turn.sourceText.contains("go forward"))
        let translation = try #require(turn.translatedText)
        #expect(!translation.isEmpty)
        #expect(turn.timings.responseMs != nil)

        let status = try EndToEnd.run(parley, ["status", "--json", "--socket", socket], in: dir)
        #expect(status.status == 0)
        let info = try JSONDecoder().decode(StatusInfo.self, from: Data(status.stdout.utf8))
        #expect(info.turns == 1)
        #expect(info.a.hearable)

        // SIGTERM: a clean exit that removes the socket.
        kill(daemon.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon, timeout: 20))
        #expect(daemon.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: socket))

        // What went to the speaker is the translation, spoken.
        let bytes = try Data(contentsOf: played)
        let samples = WAVBytes.samples(bytes)
        EndToEnd.expectSpeechLike(samples, rate: 22_050)
        // What was played is the translation spoken, as long as espeak-ng's own rendering of it.
        try EndToEnd.expectSpokenTranslation(samples, text: translation, voice: "es", in: dir)
    }

    @Test func theCLISaysWhenNoDaemonIsThere() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try EndToEnd.run(try EndToEnd.binary("parley"), ["status", "--socket", dir.appendingPathComponent("none.sock").path], in: dir)
        #expect(result.status == 3)
        #expect(result.message.contains("is parleyd running"), "\(result.stderr)")
    }

    @Test func shellCompletionsKnowEverySubcommand() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for shell in ["bash", "zsh", "fish"] {
            let script = try EndToEnd.run(try EndToEnd.binary("parley"), ["--generate-completion-script", shell], in: dir)
            #expect(script.status == 0)
            for command in ["status", "say", "listen", "pause", "resume", "swap", "set", "history", "watch"] {
                #expect(script.stdout.contains(command), "\(shell) completion lacks \(command)")
            }
        }
    }

    @Test func theCLIRejectsBadUsageWithExitCode2() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try EndToEnd.run(try EndToEnd.binary("parley"), ["history", "--limit", "0"], in: dir)
        #expect(result.status == 2)
    }
}

/// Raw little-endian 16-bit samples, as ALSA's file plugin writes them.
enum WAVBytes {
    static func samples(_ data: Data) -> [Int16] {
        stride(from: data.startIndex, to: data.endIndex - 1, by: 2).map {
            Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)
        }
    }
}
