import Foundation
import Testing

/// A private PulseAudio server with two null sinks, "mic" and "speaker": clips played into
/// "mic" reach parleyd through "mic.monitor" in real time, and what parleyd plays goes to
/// "speaker". With `echo`, the speaker is looped back into the mic, as in a room (through
/// PulseAudio's loopback, which resamples to keep its latency: the two ends on different clocks).
/// With `oneRoom`, there is one sink, "mic", that parleyd also plays into: the person's voice and
/// Parley's share it and its clock, as a microphone and a loudspeaker on one sound card do.
final class PulseAudioRig {
    let directory: URL
    let socket: String

    init(directory: URL) {
        self.directory = directory
        self.socket = directory.appendingPathComponent("pulse.sock").path
    }

    var environment: [String: String] {
        ["PULSE_SERVER": "unix:\(socket)", "XDG_RUNTIME_DIR": directory.appendingPathComponent("run").path, "HOME": directory.path]
    }

    /// The ALSA devices parleyd uses.
    static func asoundrc(oneRoom: Bool) -> String {
        """
        pcm.pmic { type pulse; device "mic.monitor" }
        pcm.pspk { type pulse; device "\(oneRoom ? "mic" : "speaker")" }
        """
    }

    /// Starts the server daemonized: as a child of the test process it would keep Foundation's
    /// `Process` from noticing when later children exit.
    func start(echo: Bool, oneRoom: Bool = false) throws {
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("run"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Self.asoundrc(oneRoom: oneRoom).write(to: directory.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
        var arguments = [
            "-n", "--daemonize=yes", "--exit-idle-time=-1", "--log-target=file:\(directory.path)/pulseaudio.log",
            "-L", "module-native-protocol-unix socket=\(socket) auth-anonymous=1",
            "-L", "module-null-sink sink_name=mic", "-L", "module-null-sink sink_name=speaker",
        ]
        if echo { arguments += ["-L", "module-loopback source=speaker.monitor sink=mic latency_msec=30"] }
        let started = try EndToEnd.run("/usr/bin/pulseaudio", arguments, in: directory, environment: environment, timeout: 30)
        try #require(started.status == 0, "PulseAudio did not start: \(started.stderr)")
        let deadline = Date(timeIntervalSinceNow: 15)
        while Date() < deadline {
            if let result = try? pactl(["list", "short", "sinks"]), result.contains("speaker") { return }
            usleep(100_000)
        }
        Issue.record("PulseAudio did not answer")
    }

    /// Kills the server, as if the sound device had gone.
    func stop() {
        let pidFile = directory.appendingPathComponent("run/pulse/pid")
        if let text = try? String(contentsOf: pidFile, encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
            while kill(pid, 0) == 0 { usleep(20_000) }
        }
        try? FileManager.default.removeItem(at: pidFile)
        try? FileManager.default.removeItem(atPath: socket)
    }

    deinit { stop() }

    func pactl(_ arguments: [String]) throws -> String {
        let result = try EndToEnd.run("/usr/bin/pactl", arguments, in: directory, environment: environment, timeout: 20)
        return result.stdout
    }

    /// How many recording streams are open (parleyd's capture is one while it listens).
    func recordingStreams() throws -> Int {
        try pactl(["list", "short", "source-outputs"]).split(separator: "\n").count
    }

    /// Waits up to `timeout` seconds for the number of recording streams to become `count`.
    func waitForRecordingStreams(_ count: Int, timeout: TimeInterval = 5) throws -> Int {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var seen = try recordingStreams()
        while seen != count && Date() < deadline {
            usleep(100_000)
            seen = try recordingStreams()
        }
        return seen
    }

    /// Plays a raw 16 kHz recording into the virtual microphone, in real time.
    func say(_ recording: String) throws {
        try microphone.say(recording)
    }

    /// The virtual microphone, for code that may not hold the rig (it is not Sendable).
    var microphone: RigMicrophone { RigMicrophone(directory: directory, environment: environment) }
}

/// Speaks into a `PulseAudioRig`'s virtual microphone.
struct RigMicrophone: Sendable {
    let directory: URL
    let environment: [String: String]

    /// Plays a raw 16 kHz recording into the virtual microphone, in real time.
    func say(_ recording: String) throws {
        let rawRecording = recording  // a .raw file is converted once; a .wav is played as it is
        let wav = recording.hasSuffix(".wav")
            ? URL(fileURLWithPath: recording)
            : directory.appendingPathComponent(((rawRecording as NSString).lastPathComponent as NSString).deletingPathExtension + ".wav")
        if !FileManager.default.fileExists(atPath: wav.path) {
            let sox = try EndToEnd.run(
                "/usr/bin/sox", ["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", rawRecording, wav.path], in: directory)
            try #require(sox.status == 0, "sox: \(sox.stderr)")
        }
        let played = try EndToEnd.run("/usr/bin/paplay", ["-d", "mic", wav.path], in: directory, environment: environment, timeout: 30)
        try #require(played.status == 0, "paplay: \(played.stderr)")
    }
}
