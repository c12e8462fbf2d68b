import Foundation
import GRDB
import ParleyTesting
import ParleyCore
import Testing
@testable import ParleyConversation
@testable import ParleyProtocol

#if canImport(Glibc)
import Glibc
#endif

/// parleyd as systemd runs it: readiness, status and watchdog notifications, journal lines,
/// SIGTERM in the middle of a turn, SIGHUP and `reload`, socket activation.
@Suite("parleyd under systemd", .serialized, .startsProcesses)
struct ServiceLifecycleTests {
    /// Runs parleyd with stderr marked as the journal's stream, as systemd does.
    static let asJournal = ["/bin/sh", "-c", #"JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec "$0" "$@""#]

    static func silence(in dir: URL) throws -> String {
        let url = dir.appendingPathComponent("silence.raw")
        try Data(count: 64_000).write(to: url)
        return url.path
    }

    static func call<Payload: Codable & Sendable>(_ socket: String, _ request: RawRequest, as: Payload.Type) throws -> Payload {
        let line = try ControlClient(path: socket).call(request)
        return try JSONDecoder().decode(ResultReply<Payload>.self, from: line).data
    }

    @Test func notifiesReadyStatusWatchdogAndStoppingAndFinishesTheTurnOnSIGTERM() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notify = try NotifySocket(name: dir.appendingPathComponent("notify").path)
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: try Self.silence(in: dir), played: "/dev/null",
            environment: ["NOTIFY_SOCKET": notify.name, "WATCHDOG_USEC": "400000"], command: Self.asJournal)
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        // READY=1 comes once the socket answers.
        let startup = notify.messages(timeout: 30) { $0.contains("READY=1") }
        let ready = try #require(startup.last, "no READY=1; parleyd said: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        #expect(ready.contains("READY=1"))
        #expect(ready.contains("STATUS=listening a (en)"), "\(ready)")
        let status = try Self.call(socket, RawRequest(type: "status"), as: StatusInfo.self)
        #expect(status.state == "listening")

        // The capture loop pings the watchdog: about every 200 ms for a 400 ms WatchdogSec.
        // (What arrived while status was asked is drained first: the window starts now.)
        _ = notify.messages(timeout: 0.01)
        let window = Date()
        let second = notify.messages(timeout: 1.2)
        let elapsed = Date().timeIntervalSince(window)
        let pings = second.filter { $0 == "WATCHDOG=1" }.count
        // At least one; never more than two per WatchdogSec (0.4 s), however slow the machine.
        #expect(pings >= 1 && pings <= Int(elapsed / 0.2) + 1, "\(pings) pings in \(elapsed) s")

        // A typed turn, long enough to be still speaking when SIGTERM arrives (about 30 s of
        // speech: 485 characters, as many as a `say` takes).
        // A deadline: if no speech comes (the translation failed), the test fails rather than hangs.
        let subscriber = try ControlClient(path: socket, timeout: .seconds(60))
        try subscriber.send(RawRequest(type: "subscribe"))
        let text = Array(repeating: "The weather is very good today and we are going to the market to buy some bread.", count: 6)
            .joined(separator: " ")
        let sayer = Thread.detachedResult {
            try? ControlClient(path: socket).call(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string(text)]))
        }
        var sawSpeaking = false
        var sawTurnBeforeSignal = false
        while !sawSpeaking, let line = try subscriber.readLine() {
            let type = try JSONDecoder().decode(Envelope.self, from: line).type
            if type == EventType.turn { sawTurnBeforeSignal = true }
            sawSpeaking = type == EventType.speakingStart
        }
        try #require(sawSpeaking)
        kill(daemon.processIdentifier, SIGTERM)
        let stopping = notify.messages(timeout: 20) { $0.contains("STOPPING=1") }
        #expect(stopping.contains { $0.contains("STOPPING=1") })
        #expect(EndToEnd.wait(daemon, timeout: 20), "parleyd did not exit within TimeoutStopSec")
        #expect(daemon.terminationStatus == 0)
        #expect(!sawTurnBeforeSignal, "the turn ended before SIGTERM; make the text longer")
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket was left behind")

        // The turn in flight was finished: answered, and in history.
        let reply = try #require(sayer.value(timeout: 20) ?? nil, "say got no answer")
        let turn = try JSONDecoder().decode(ResultReply<TurnInfo>.self, from: reply).data
        #expect(turn.translatedText?.isEmpty == false)
        let database = try DatabaseQueue(path: dir.appendingPathComponent("history.sqlite").path)
        let stored = try await database.read { db in
            try String.fetchAll(db, sql: "SELECT translated_text FROM turns WHERE source_text = ?", arguments: [text])
        }
        #expect(stored == [turn.translatedText])

        // Every log line carries a journal priority.
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>ready") })
        // It says why it stopped (issue 28).
        #expect(lines.contains { $0.hasPrefix("<5>stopping: asked to stop (SIGTERM or SIGINT)") }, "\(lines)")
        #expect(lines.allSatisfy { $0.range(of: #"^<[3-7]>"#, options: .regularExpression) != nil }, "\(lines.filter { !$0.hasPrefix("<") })")
    }

    @Test func configShowsTheRecognizerTranslatorAndHistorySettingsInForce() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (daemon, _, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: try Self.silence(in: dir), played: "/dev/null",
            extraConfig: "[recognizer]\nmaxhmmpf = 5000\n[translator]\ndeadline_ms = 7000")
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        guard case .object(let config) = try Self.call(socket, RawRequest(type: "config"), as: JSONValue.self) else {
            Issue.record("config did not answer an object")
            return
        }
        #expect(config["recognizer_maxhmmpf"] == .number(5000))
        #expect(config["recognizer_fwdflat"] == .bool(false))
        #expect(config["translator_backends"] == .array([.string("apertium")]))
        #expect(config["translator_deadline_ms"] == .number(7000))
        #expect(config["history_max_turns"] == .number(10_000))
        #expect(config["session_gap_minutes"] == .number(30))
        #expect(config["history_max_age_days"] == nil, "no age limit")
        kill(daemon.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon, timeout: 10))
    }

    @Test func sighupAndReloadReadTheConfigAgainAndAnInvalidOneChangesNothing() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(in: dir, infile: try Self.silence(in: dir), played: "/dev/null")
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        let config = dir.appendingPathComponent("parley.toml")
        let original = try String(contentsOf: config, encoding: .utf8)
        func rewrite(_ extra: String) throws {
            try (original.replacingOccurrences(of: EndToEnd.liveAudio, with: "") + "\n" + extra)
                .write(to: config, atomically: true, encoding: .utf8)
        }
        func settings() throws -> RuntimeSettings {
            try Self.call(socket, RawRequest(type: "config"), as: EffectiveSettingsOnly.self).settings
        }
        func logText() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        #expect(try settings().mode == .auto)

        // SIGHUP: mode and silence_ms apply at once; the capture device needs a restart.
        try rewrite(EndToEnd.liveAudio.replacingOccurrences(of: "parleyin", with: "hw:9") + "\n[conversation]\nmode = \"manual\"\n[endpoint]\nsilence_ms = 950")
        kill(daemon.processIdentifier, SIGHUP)
        let deadline = Date(timeIntervalSinceNow: 10)
        while try settings().mode != .manual && Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try settings().mode == .manual)
        #expect(try settings().silenceMs == 950)
        #expect(logText().contains("restart_needed=audio.capture_device"), "\(logText())")

        // An invalid file: logged, nothing changes, the daemon serves on.
        try rewrite(EndToEnd.liveAudio + "\n[conversation]\nmode = \"sideways\"")
        kill(daemon.processIdentifier, SIGHUP)
        let logged = Date(timeIntervalSinceNow: 10)
        while !logText().contains("config not reloaded") && Date() < logged { try await Task.sleep(for: .milliseconds(100)) }
        #expect(logText().contains("config not reloaded"))
        #expect(daemon.isRunning)
        #expect(try settings().mode == .manual)

        // The same through `parley reload`: exit 1 and the reason.
        let parley = try EndToEnd.binary("parley")
        let refused = try EndToEnd.run(parley, ["reload", "--socket", socket], in: dir)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("sideways"), "\(refused.stderr)")

        // A language without a translation is refused as a whole: mode stays as it was too.
        try rewrite(EndToEnd.liveAudio + "\n[conversation]\nmode = \"one-way\"\nspeaker_b = \"fi\"")
        let noPair = try EndToEnd.run(parley, ["reload", "--socket", socket], in: dir)
        #expect(noPair.status == 1)
        #expect(try settings().mode == .manual)

        // A valid file through the CLI: what was applied.
        try rewrite(EndToEnd.liveAudio + "\n[conversation]\nmode = \"one-way\"")
        let applied = try EndToEnd.run(parley, ["reload", "--json", "--socket", socket], in: dir)
        #expect(applied.status == 0, "\(applied.stderr)")
        let info = try JSONDecoder().decode(ReloadInfo.self, from: Data(applied.stdout.utf8))
        #expect(info.applied.contains("conversation.mode"))
        #expect(info.settings.mode == .oneWay)
        #expect(try settings().mode == .oneWay)
        #expect(daemon.isRunning)
    }

    @Test func withoutASoundCardItFailsWithOneJournalLine() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[audio]\ncapture_device = \"hw:99\"")
        let result = try EndToEnd.run(
            Self.asJournal[0], Array(Self.asJournal.dropFirst()) + [try EndToEnd.binary("parleyd"), "--config", config.path], in: dir)
        #expect(result.status == 3)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.hasPrefix("<3>") == true)
        #expect(lines.first?.contains("audio.capture_device") == true)
    }

    @Test func takesTheControlSocketFromSystemd() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("control.sock").path
        // systemd-socket-activate binds the socket, then starts parleyd with it as fd 3 (LISTEN_FDS).
        let (daemon, log, _) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: try Self.silence(in: dir), played: "/dev/null",
            command: ["/usr/bin/systemd-socket-activate", "-l", socket])
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        var status: StatusInfo?
        let deadline = Date(timeIntervalSinceNow: 30)
        while status == nil && Date() < deadline && daemon.isRunning {
            status = try? Self.call(socket, RawRequest(type: "status"), as: StatusInfo.self)
            if status == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(status?.state == "listening", "\(text)")
        #expect(text.contains("handed over by systemd"), "\(text)")
        kill(daemon.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon, timeout: 20))
        #expect(daemon.terminationStatus == 0, "\((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }
}

/// The part of `config`'s answer these tests read.
private struct EffectiveSettingsOnly: Codable, Sendable {
    var settings: RuntimeSettings
}

extension Thread {
    /// Runs `work` on a thread of its own; `value(timeout:)` waits for its result.
    static func detachedResult<T: Sendable>(_ work: @escaping @Sendable () -> T) -> ThreadResult<T> {
        let result = ThreadResult<T>()
        Thread.detachNewThread { result.set(work()) }
        return result
    }
}

final class ThreadResult<T: Sendable>: Sendable {
    private let stored = Gate<T?>(nil)

    func set(_ value: T) { stored.withLock { $0 = value } }

    func value(timeout: TimeInterval) -> T? {
        stored.wait(for: { $0 }, until: Date(timeIntervalSinceNow: timeout))
    }
}
