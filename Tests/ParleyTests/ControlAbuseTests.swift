import Foundation
import Testing
@testable import ParleyProtocol

/// A live parleyd (silent microphone through ALSA's file plugin) against bad clients.
@Suite("Control socket under bad input", .serialized)
struct ControlAbuseTests {
    @Test func badRequestsGetClearErrorsAndTheDaemonKeepsServing() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 32_000).write(to: silence)
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(in: dir, infile: silence.path, played: "/dev/null")
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        struct Answer: Equatable {
            var type: String
            var code: String?
            var id: JSONValue?
        }
        func exchange(_ raw: String) throws -> Answer {
            let client = try ControlClient(path: socket)
            try client.sendRaw(Data((raw + "\n").utf8))
            let line = try #require(try client.readLine())
            let envelope = try JSONDecoder().decode(Envelope.self, from: line)
            let error = try? JSONDecoder().decode(ErrorReply.self, from: line)
            return Answer(type: envelope.type, code: error?.data.code, id: envelope.id)
        }
        #expect(try exchange("\u{01}\u{02} garbage") == Answer(type: "error", code: "bad_request"))
        #expect(try exchange("{not json") == Answer(type: "error", code: "bad_request"))
        #expect(try exchange("[1, 2, 3]") == Answer(type: "error", code: "bad_request"))
        #expect(try exchange(#"{"type":"dance","id":7}"#) == Answer(type: "error", code: "unknown_command", id: .number(7)))
        #expect(try exchange(#"{"type":"say","data":{"speaker":"a","text":"   "}}"#).code == "invalid_field")
        #expect(try exchange(#"{"type":"say","data":{"speaker":"c","text":"hi"}}"#).code == "invalid_field")
        #expect(try exchange(#"{"type":"set","data":{"silence_ms":"long"}}"#).code == "invalid_field")
        #expect(try exchange(#"{"type":"set","data":{"speaker_a":"xx"}}"#).code == "unavailable")
        #expect(try exchange(#"{"type":"history","data":{"limit":-1}}"#).code == "invalid_field")
        #expect(try exchange(#"{"type":"listen","data":{"speaker":"b"}}"#).code == "unavailable")
        #expect(try exchange(#"{"type":"status","id":"x"}"#) == Answer(type: "result", code: nil, id: .string("x")))

        // A line over 64 KiB is refused and the connection closed.
        let client = try ControlClient(path: socket)
        try client.sendRaw(Data(repeating: UInt8(ascii: "x"), count: 100_000))
        let refusal = try #require(try client.readLine())
        #expect(String(decoding: refusal, as: UTF8.self).contains("line_too_long"))
        #expect(try client.readLine() == nil)

        // Runtime settings: a change is applied and reported.
        let parley = try EndToEnd.binary("parley")
        let set = try EndToEnd.run(parley, ["set", "--silence-ms", "900", "--json", "--socket", socket], in: dir)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains(#""silence_ms" : 900"#))
        let refused = try EndToEnd.run(parley, ["set", "--speaker-b", "zz", "--socket", socket], in: dir)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("zz"))
        let swapped = try EndToEnd.run(parley, ["swap", "--json", "--socket", socket], in: dir)
        #expect(swapped.stdout.contains(#""speaker_a" : "es""#))
        // English is now B's and only English can be heard, so Parley listens to B.
        let line = try ControlClient(path: socket).call(Request(type: "status"))
        let status = try JSONDecoder().decode(ResultReply<StatusInfo>.self, from: line).data
        #expect(status.speaker == "b")
        #expect(status.b.hearable && !status.a.hearable)

        // State-changing commands are logged with who sent them.
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(logged.contains("command=set") && logged.contains("uid \(getuid())"))

        // 64 idle clients take every place; the next is told so and closed.
        var idle: [ControlClient] = []
        for _ in 0..<64 { idle.append(try ControlClient(path: socket)) }
        try await Task.sleep(for: .milliseconds(300))
        let extra = try ControlClient(path: socket)
        let refusedLine = try #require(try extra.readLine())
        #expect(String(decoding: refusedLine, as: UTF8.self).contains("too_many_clients"))
        #expect(try extra.readLine() == nil)
        // One leaves: a new client is served again.
        idle.removeLast()
        try await Task.sleep(for: .milliseconds(300))
        let started = Date()
        let answer = try ControlClient(path: socket).call(Request(type: "status"))
        #expect(try JSONDecoder().decode(Envelope.self, from: answer).type == "result")
        #expect(Date().timeIntervalSince(started) < 0.5)
        idle.removeAll()

        kill(daemon.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon, timeout: 20))
        #expect(daemon.terminationStatus == 0)
    }
}
