import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyProtocol

/// parleyd live and in real time, through ALSA's pulse plugin and a private PulseAudio server:
/// real recordings spoken into a virtual microphone, Parley's speech looped back into it.
@Suite("Real time through PulseAudio", .serialized, .startsProcesses)
struct RealTimeTests {
    /// A running parleyd and a way to ask it things.
    struct Daemon {
        let process: Process
        let socket: String
        let log: URL

        func call<Payload: Codable & Sendable>(_ type: String, _ data: [String: JSONValue]? = nil, as _: Payload.Type) throws -> Payload {
            let line = try ControlClient(path: socket).call(RawRequest(type: type, data: data))
            return try JSONDecoder().decode(ResultReply<Payload>.self, from: line).data
        }

        func status() throws -> StatusInfo { try call("status", as: StatusInfo.self) }

        /// Polls until `condition` holds for the status, or fails after `timeout` seconds.
        func waitFor(_ what: String, timeout: TimeInterval = 30, _ condition: (StatusInfo) -> Bool) async throws {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while Date() < deadline {
                if let status = try? status(), condition(status) { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            let last = (try? status()).map { "\($0.state) \($0.speaker ?? "-") turns \($0.turns)" } ?? "no answer"
            // The log's last lines (at debug level: what was heard while Parley spoke, where each
            // turn ended, and no words), so a failure on CI says why.
            let lines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(80)
            Issue.record("timed out waiting for \(what); last status: \(last); the log's last lines:\n\(lines.joined(separator: "\n"))")
            throw CancellationError()
        }
    }

    private func startDaemon(in dir: URL, rig: PulseAudioRig, extra: String = "") throws -> Daemon {
        // Both people heard: English, and Spanish with the model Parley ships; auto mode. The log
        // at debug level, for a failure to say why.
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: """
                [audio]
                capture_device = "pmic"
                playback_device = "pspk"
                [log]
                level = "debug"
                """ + "\n" + EndToEnd.spanishRecognizer + "\n" + extra)
        let (process, _, log) = try EndToEnd.start(
            try EndToEnd.binary("parleyd"), ["--config", config.path], in: dir, environment: rig.environment, tag: "parleyd")
        return Daemon(process: process, socket: dir.appendingPathComponent("control.sock").path, log: log)
    }

    @Test func aConversationAlternatesAndParleyNeverHearsItself() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rig = PulseAudioRig(directory: dir)
        try rig.start(echo: true)
        defer { rig.stop() }
        let daemon = try startDaemon(in: dir, rig: rig)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        try await daemon.waitFor("listening to a") { $0.state == "listening" && $0.speaker == "a" }

        // Events, through the CLI, for the whole conversation.
        let (watcher, events, _) = try EndToEnd.start(
            try EndToEnd.binary("parley"), ["watch", "--quiet", "--json", "--socket", daemon.socket], in: dir, tag: "watch")
        defer { watcher.terminate() }
        // Not a terminal: the live view falls back to plain lines.
        let (plainWatcher, plain, _) = try EndToEnd.start(
            try EndToEnd.binary("parley"), ["watch", "--quiet", "--socket", daemon.socket], in: dir, tag: "watch-plain")
        defer { plainWatcher.terminate() }

        let data = EndToEnd.testData
        let clips = ["\(data)/goforward.raw", "\(EndToEnd.spanishRecordings)/es-0029.wav", "\(data)/something.raw"]
        for (index, clip) in clips.enumerated() {
            try rig.say(clip)
            let next = index % 2 == 0 ? "b" : "a"
            try await daemon.waitFor("turn \(index + 1), then listening to \(next)") {
                $0.turns == index + 1 && $0.state == "listening" && $0.speaker == next
            }
        }
        // Parley's own speech went back into the microphone; none of it became a turn: for 2 s
        // of captured audio after the last turn (50 level events at 25 Hz, counted on the
        // capture timeline, not the wall clock), nothing starts to be heard.
        let listener = try ControlClient(path: daemon.socket)
        try listener.send(RawRequest(type: "subscribe"))
        var levels = 0
        var heard = false
        while levels < 50, !heard, let line = try listener.readLine() {
            let type = try JSONDecoder().decode(Envelope.self, from: line).type
            if type == EventType.level { levels += 1 }
            heard = type == EventType.speechStart
        }
        #expect(levels == 50 && !heard, "Parley heard something after the last turn")
        let turns = try daemon.call("history", as: [TurnInfo].self).reversed()
        #expect(turns.map(\.speaker) == [.a, .b, .a])
        #expect(turns.map(\.sourceLang) == ["en", "es", "en"])
        #expect(turns.first?.sourceText.contains("go forward") == true)
        let spanish = try String(contentsOfFile: "\(EndToEnd.spanishRecordings)/es-0029.txt", encoding: .utf8)
        let spokenSpanish = turns.dropFirst().first?.sourceText ?? ""
        #expect(EndToEnd.wordRecall(spokenSpanish, reference: spanish) >= 0.6, "Spanish heard live as \"\(spokenSpanish)\"")
        #expect(turns.allSatisfy { $0.detection?.decidedBy == .audio }, "auto mode: the audio said who spoke")
        #expect(turns.allSatisfy { $0.translatedText?.isEmpty == false })
        #expect(turns.allSatisfy { ($0.timings.responseMs ?? .max) < 5_000 })

        let lines = (try? String(contentsOf: events, encoding: .utf8)) ?? ""
        for event in ["speech_start", "speech_end", "transcript", "translation", "speaking_start", "speaking_end", "turn", "state"] {
            #expect(lines.contains("\"type\":\"\(event)\""), "no \(event) event")
        }
        let plainLines = (try? String(contentsOf: plain, encoding: .utf8)) ?? ""
        #expect(plainLines.contains("heard a (en): go forward"))
        #expect(plainLines.contains("turn #1 a en: go forward"))
        #expect(!plainLines.contains("{\"data\""))

        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon.process, timeout: 20))
        #expect(daemon.process.terminationStatus == 0)
    }

    /// The accurate pass live: people Parley was never tuned to, English and Spanish, in the
    /// room (Parley's speech looped back into the microphone), heard by Moonshine and Whisper,
    /// the speaker told by Whisper's language identification, Silero finding the speech.
    @Test(.enabled(if: AccurateEngines.installed, "run `make engines` first"))
    func aBilingualConversationLiveIsHeardByTheAccurateEngines() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rig = PulseAudioRig(directory: dir)
        try rig.start(echo: true)
        defer { rig.stop() }
        let daemon = try startDaemon(in: dir, rig: rig, extra: AccurateEngines.table)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        // Warm: the Whisper worker answers before the first person speaks.
        try await daemon.waitFor("listening to a", timeout: 60) { $0.state == "listening" && $0.speaker == "a" }
        let data = EndToEnd.repository + "/Tests/data"
        let clips = [("en", "\(data)/en/vctk-p301_102.wav"), ("es", "\(data)/es/fleurs/fleurs-es-006.wav"), ("en", "\(data)/en/cathy-a0122.wav")]
        for (index, clip) in clips.enumerated() {
            try rig.say(clip.1)
            let next = index % 2 == 0 ? "b" : "a"
            try await daemon.waitFor("turn \(index + 1), then listening to \(next)", timeout: 60) {
                $0.turns == index + 1 && $0.state == "listening" && $0.speaker == next
            }
        }
        let turns = try daemon.call("history", as: [TurnInfo].self).reversed()
        #expect(turns.map(\.sourceLang) == clips.map(\.0))
        #expect(turns.allSatisfy { $0.detection?.decidedBy == .languageID }, "Whisper told who spoke")
        for (turn, clip) in zip(turns, clips) {
            let reference = try String(contentsOfFile: (clip.1 as NSString).deletingPathExtension + ".txt", encoding: .utf8)
            let recall = EndToEnd.wordRecall(turn.sourceText, reference: reference)
            #expect(recall >= 0.8, "\(clip.1): heard live as \"\(turn.sourceText)\" (\(Int(recall * 100)) % of the words)")
            #expect(turn.engine == (clip.0 == "en" ? "moonshine-tiny" : "whisper-base"))
            #expect(turn.translatedText?.isEmpty == false)
        }
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon.process, timeout: 20))
    }

    /// A person who speaks while Parley speaks (in one room: Parley plays into what the microphone
    /// hears, on the same clock) is heard once Parley has finished, every word, from where their
    /// voice began: the echo canceller takes Parley's own voice out, and none of it becomes a
    /// turn. The first reply lets the canceller learn the room.
    @Test(.enabled(if: AccurateEngines.installed, "run `make engines` first"))
    func aPersonWhoSpeaksWhileParleySpeaksIsHeardOnceItHasFinished() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rig = PulseAudioRig(directory: dir)
        try rig.start(echo: false, oneRoom: true)
        defer { rig.stop() }
        let daemon = try startDaemon(in: dir, rig: rig, extra: AccurateEngines.table)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        try await daemon.waitFor("listening to a", timeout: 60) { $0.state == "listening" && $0.speaker == "a" }
        let data = EndToEnd.repository + "/Tests/data"
        try rig.say("\(data)/en/vctk-p301_102.wav")
        try await daemon.waitFor("the first turn, then listening to b", timeout: 60) { $0.turns == 1 && $0.state == "listening" }
        try rig.say("\(data)/en/cathy-a0122.wav")
        try await daemon.waitFor("Parley speaking its second reply", timeout: 60) { $0.state == "speaking" }
        try await Task.sleep(for: .milliseconds(500))
        // The Spanish speaker answers before Parley has finished.
        let spanish = "\(data)/es/fleurs/fleurs-es-008.wav"
        try rig.say(spanish)
        try await daemon.waitFor("the answer said over Parley, as a turn", timeout: 90) { $0.turns >= 3 && $0.state == "listening" }
        // Nothing else comes: Parley's own voice did not become a turn.
        try await Task.sleep(for: .seconds(4))
        let turns = try daemon.call("history", as: [TurnInfo].self).reversed().map { $0 }
        #expect(turns.count == 3, "turns: \(turns.map(\.sourceText))")
        let reference = try String(contentsOfFile: (spanish as NSString).deletingPathExtension + ".txt", encoding: .utf8)
        let answer = turns.count > 2 ? turns[2] : nil
        #expect(answer?.sourceLang == "es")
        let recall = EndToEnd.wordRecall(answer?.sourceText ?? "", reference: reference)
        #expect(recall >= 0.7, "heard over Parley as \"\(answer?.sourceText ?? "")\" (\(Int(recall * 100)) % of the words)")
        let log = (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
        #expect(log.contains("someone spoke while Parley was speaking"), "the daemon tells that it heard someone over its voice")
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon.process, timeout: 20))
    }

    @Test func pauseReleasesTheMicrophoneAndALostDeviceComesBack() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rig = PulseAudioRig(directory: dir)
        try rig.start(echo: false)
        defer { rig.stop() }
        let daemon = try startDaemon(in: dir, rig: rig)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        try await daemon.waitFor("listening") { $0.state == "listening" }
        #expect(try rig.waitForRecordingStreams(1) == 1)

        // Pause: the capture stream is closed, so others can use the microphone.
        let paused = try EndToEnd.run(try EndToEnd.binary("parley"), ["pause", "--socket", daemon.socket], in: dir)
        #expect(paused.status == 0)
        try await daemon.waitFor("paused") { $0.state == "paused" }
        #expect(try rig.waitForRecordingStreams(0) == 0)

        // A typed turn still works while paused, and is acknowledged once stored.
        let typed = try EndToEnd.run(try EndToEnd.binary("parley"), ["say", "--speaker", "b", "--json", "--socket", daemon.socket, "el perro es grande"], in: dir)
        #expect(typed.status == 0, "\(typed.stderr)")
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(typed.stdout.utf8))
        #expect(turn.speaker == .b && turn.sourceLang == "es")
        #expect(turn.translatedText?.lowercased().contains("dog") == true)
        #expect(try daemon.status().state == "paused")

        _ = try EndToEnd.run(try EndToEnd.binary("parley"), ["resume", "--socket", daemon.socket], in: dir)
        try await daemon.waitFor("listening after resume") { $0.state == "listening" }
        #expect(try rig.waitForRecordingStreams(1) == 1)

        // The sound server dies: the daemon says device_lost, keeps serving, and recovers.
        rig.stop()
        try await daemon.waitFor("device_lost") { $0.state == "device_lost" }
        #expect(daemon.process.isRunning)
        try rig.start(echo: false)
        try await daemon.waitFor("listening again", timeout: 40) { $0.state == "listening" }
        try rig.say("\(EndToEnd.testData)/goforward.raw")
        try await daemon.waitFor("a turn after recovery") { $0.turns == 2 }

        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon.process, timeout: 20))
        #expect(daemon.process.terminationStatus == 0)
    }
}
