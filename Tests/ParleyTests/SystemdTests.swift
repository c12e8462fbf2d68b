import Foundation
#if canImport(CDispatch)
// `stat` is attributed to CDispatch once Hummingbird (ParleyWeb) is among the imports.
import CDispatch
#endif
import Logging
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyConfig
@testable import ParleyConversation
@testable import ParleyDaemon
@testable import ParleyEndpoint
@testable import ParleyHistory
@testable import ParleyProtocol
import ParleyRecognition
@testable import ParleyRuntime
@testable import ParleySystemd

#if canImport(Glibc)
import Glibc
#endif


@Suite("systemd: notifications, log lines, reload plans")
struct SystemdUnitTests {
    @Test(arguments: ["path", "abstract"])
    func notificationsReachTheSocket(kind: String) throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let name = kind == "path" ? dir.appendingPathComponent("notify").path : "@parley-test-\(UUID().uuidString.prefix(8))"
        let socket = try NotifySocket(name: name)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": name], unsetEnvironment: false)
        #expect(notifier.isEnabled)
        notifier.ready(status: "listening to a (en)")
        let ready = try #require(socket.receive(timeout: 2))
        #expect(ready.split(separator: "\n").contains("READY=1"))
        #expect(ready.split(separator: "\n").contains("STATUS=listening to a (en)"))
        notifier.stopping()
        #expect(socket.receive(timeout: 2)?.hasPrefix("STOPPING=1") == true)
    }

    @Test func withoutSystemdNothingIsSent() {
        let notifier = SystemdNotifier(environment: [:], unsetEnvironment: false)
        #expect(!notifier.isEnabled)
        #expect(!notifier.notify("READY=1"))
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func watchdogPingsTwicePerIntervalHoweverOftenItIsCalled() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("notify").path
        let socket = try NotifySocket(name: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1000000"], unsetEnvironment: false)
        #expect(notifier.watchdogInterval == .seconds(1))
        let start = ContinuousClock.now
        // 100 calls over 1.98 s of (pretend) time, as the capture loop makes every 20 ms.
        for period in 0..<100 { notifier.watchdog(now: start + .milliseconds(20 * period)) }
        let pings = socket.messages(timeout: 0.5)
        #expect(pings.allSatisfy { $0 == "WATCHDOG=1" })
        #expect(pings.count == 4, "pings at 0, 0.5, 1.0 and 1.5 s; got \(pings.count)")
    }

    @Test func watchdogIsForAnotherProcessWhenWatchdogPidSaysSo() {
        let notifier = SystemdNotifier(
            environment: ["NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "\(getpid() + 1)"], unsetEnvironment: false)
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func journalLinesCarryTheirPriority() {
        func line(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) -> String {
            ParleyLogHandler.line(level: level, message: message, metadata: metadata, format: .journal, label: "parleyd")
        }
        #expect(line(.error, "boom") == "<3>boom")
        #expect(line(.critical, "boom") == "<3>boom")
        #expect(line(.warning, "careful") == "<4>careful")
        #expect(line(.notice, "note") == "<5>note")
        #expect(line(.info, "turn", ["id": "7", "speaker": "a"]) == "<6>turn id=7 speaker=a")
        #expect(line(.debug, "detail") == "<7>detail")
        #expect(line(.trace, "detail") == "<7>detail")
        // One event is one line, whatever the message holds.
        #expect(line(.error, "two\nlines", ["why": "a b"]) == "<3>two\\nlines why=\"a b\"")
        let plain = ParleyLogHandler.line(level: .info, message: "ready", metadata: [:], format: .plain, label: "parleyd")
        #expect(plain.hasSuffix(" info parleyd: ready"))
    }

    @Test func journalFormatOnlyWhenStderrIsTheJournalStream() throws {
        var info = stat()
        try #require(fstat(STDERR_FILENO, &info) == 0)
        #expect(ParleyLogHandler.detectFormat(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]) == .journal)
        #expect(ParleyLogHandler.detectFormat(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino &+ 1)"]) == .plain)
        #expect(ParleyLogHandler.detectFormat(environment: [:]) == .plain)
    }

    @Test func reloadPlanAppliesRuntimeKeysAndNamesTheRest() {
        let old = ParleyConfig(environment: ["HOME": "/home/x"])
        var new = old
        new.mode = .manual
        new.endpoint.silenceMs = 900
        new.logLevel = "debug"
        new.captureDevice = "hw:1"
        new.endpoint.maxSpeechMs = 10_000
        new.translationTimeoutMs = 1_000
        new.failureNotice = false
        let plan = Reloader.plan(from: old, to: new)
        #expect(plan.applied == ["conversation.mode", "endpoint.silence_ms", "log.level"])
        #expect(plan.change?.mode == .manual)
        #expect(plan.change?.silenceMs == 900)
        #expect(plan.change?.speakerA == nil, "unchanged keys keep their runtime values")
        #expect(plan.restartNeeded == ["audio.capture_device", "endpoint.max_speech_ms", "translator.timeout_ms", "translator.failure_notice"])

        // Reading the same file again still says the restart is needed: the daemon runs on
        // the devices it started with.
        let again = Reloader.plan(from: new, to: new, startup: old)
        #expect(again.applied.isEmpty && again.change == nil)
        #expect(again.restartNeeded == plan.restartNeeded)

        let nothing = Reloader.plan(from: old, to: old)
        #expect(nothing.change == nil && nothing.applied.isEmpty && nothing.restartNeeded.isEmpty)

        // `[log] transcripts` is applied at once; the idle timeout waits for a restart.
        var privacy = old
        privacy.logTranscripts = true
        privacy.controlIdleTimeoutSeconds = 5
        let switched = Reloader.plan(from: old, to: privacy)
        #expect(switched.applied == ["log.transcripts"] && switched.change == nil)
        #expect(switched.restartNeeded == ["control.idle_timeout_seconds"])
    }
}

@Suite("parleyd refuses to start without a speech model")
struct NoSpeechModelTests {
    @Test func noModelForEitherLanguageIsAConfigError() throws {
        var config = ParleyConfig(environment: ["HOME": "/home/x"])
        #expect(throws: Never.self) { try Daemon.requireSpeechModel(config) }
        config.recognizers["en"] = RecognizerModel(acousticModel: "/nope/am", languageModel: "/nope/lm", dictionary: "/nope/dict")
        let failure = #expect(throws: DaemonFailure.self) { try Daemon.requireSpeechModel(config) }
        #expect(failure?.code == .config)
        // The missing file is named, with what to do.
        #expect(failure?.description.contains("[recognizer.en] acoustic_model names /nope/am") == true, "\(failure?.description ?? "")")
        #expect(failure?.description.contains("parleyd model check") == true)
        #expect(Daemon.notHearableHint(language: "en").contains("pocketsphinx-en-us"))
    }
}

@Suite("The CLI finds the system service's socket")
struct ClientSocketPathTests {
    @Test func fallsBackToTheServiceSocketWhenTheUserHasNone() {
        let user = ["XDG_RUNTIME_DIR": "/run/user/1000"]
        let own = "/run/user/1000/parley/control.sock"
        #expect(ControlSocketPath.clientPath(environment: user) { $0 == ControlSocketPath.systemPath } == ControlSocketPath.systemPath)
        #expect(ControlSocketPath.clientPath(environment: user) { _ in true } == own, "a user's own daemon comes first")
        #expect(ControlSocketPath.clientPath(environment: user) { _ in false } == own, "errors name the user's own path")
    }
}
