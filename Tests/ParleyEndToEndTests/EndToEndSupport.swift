import ParleyCore
import Foundation
import Testing
import ParleyProtocol
import ParleyTesting
import ParleySynthesis
import ParleyTranslation
@testable import ParleyAudio

/// Helpers for tests that run the real parleyd and parley binaries.
enum EndToEnd {
    static let testData = "/usr/share/pocketsphinx/test/data"

    /// Where `swift build` put the binaries: $PARLEY_BIN_DIR (set by `make test`), else .build/debug.
    static var binDirectory: String {
        if let dir = ProcessInfo.processInfo.environment["PARLEY_BIN_DIR"], !dir.isEmpty { return dir }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../.build/debug").standardizedFileURL.path
    }

    static func binary(_ name: String) throws -> String {
        let path = binDirectory + "/" + name
        try #require(FileManager.default.isExecutableFile(atPath: path), "build \(name) first (make test does)")
        return path
    }

    /// The repository (its models/ and Tests/data/).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL.path

    /// Human Spanish recordings (VoxForge, GPL-3.0: Tests/data/es/voxforge/LICENSE) and their transcripts.
    static let spanishRecordings = repository + "/Tests/data/es/voxforge"

    /// The config table of the Spanish model Parley ships (models/es).
    static var spanishRecognizer: String {
        """
        [recognizer.es]
        acoustic_model = "\(repository)/models/es/acoustic"
        language_model = "\(repository)/models/es/es.lm.bin"
        dictionary = "\(repository)/models/es/es.dict"
        """
    }

    /// Recordings one after the other, with `gap` seconds of silence after each, as one raw
    /// 16 kHz mono file in `directory`: a conversation.
    static func conversation(_ paths: [String], gap: Double = 3, in directory: URL) throws -> URL {
        var samples: [Int16] = []
        for path in paths {
            if path.hasSuffix(".raw") {
                samples += WAV.decodeSamples(try Data(contentsOf: URL(fileURLWithPath: path))[...])
            } else {
                let (clip, rate) = try wavSamples(URL(fileURLWithPath: path))
                try #require(rate == 16_000, "\(path) is not 16 kHz")
                samples += clip
            }
            samples += [Int16](repeating: 0, count: Int(gap * 16_000))
        }
        let url = directory.appendingPathComponent("conversation-\(UUID().uuidString.prefix(6)).raw")
        try WAV.encodeSamples(samples).write(to: url)
        return url
    }

    /// The words of a transcript, lowercased, without punctuation.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" }.map(String.init)
    }

    /// The share of `reference`'s words that `heard` has (a bag-of-words recall, 0-1).
    static func wordRecall(_ heard: String, reference: String) -> Double {
        var pool = words(heard)
        let expected = words(reference)
        guard !expected.isEmpty else { return 0 }
        var found = 0
        for word in expected {
            if let index = pool.firstIndex(of: word) {
                pool.remove(at: index)
                found += 1
            }
        }
        return Double(found) / Double(expected.count)
    }

    /// The cache folder of the daemons the tests start (see PrunedDictionary).
    static let sharedCache = FileManager.default.temporaryDirectory.appendingPathComponent("parley-test-cache").path

    /// A fresh folder for one test.
    static func temporaryDirectory() throws -> URL { try TestFiles.temporaryDirectory() }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String

        /// stderr with parley's messages unwrapped: it breaks them at 80 columns and indents the
        /// lines that go on by two, so a message is one line here.
        var message: String {
            stderr.replacingOccurrences(of: "\n  ", with: " ").trimmingCharacters(in: .newlines)
        }
    }

    /// Starts a process with its output going to files in `directory`.
    static func start(_ executable: String, _ arguments: [String], in directory: URL, environment: [String: String] = [:], tag: String = UUID().uuidString) throws -> (Process, URL, URL) {
        // Its test waits for the process, blocking its thread, and loads the machine with it.
        if Test.current != nil && BlocksThreads.current?.startsProcesses != true {
            Issue.record("this test starts processes: give its suite the .startsProcesses trait")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        // One cache for every daemon the tests start: the cut-down dictionary is made once.
        env["XDG_CACHE_HOME"] = sharedCache
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = directory.appendingPathComponent("\(tag).out")
        let err = directory.appendingPathComponent("\(tag).err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try launch(process)
        return (process, out, err)
    }

    /// Starts `process` as a shell would, with no signal blocked. The tests run on libdispatch's
    /// threads, which block every asynchronous signal, and a child inherits the mask of the
    /// thread that spawns it: a `parley watch` started from a test outlived `terminate()`, and a
    /// parleyd got SIGTERM and SIGHUP only because its own handling does not need them unblocked.
    static func launch(_ process: Process) throws {
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_UNBLOCK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try ProcessLauncher.run(process)
    }

    /// Waits for `process` to exit, killing it after `timeout` seconds.
    static func wait(_ process: Process, timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            // Not waitUntilExit: if Foundation missed the exit it would wait forever.
            let killed = Date(timeIntervalSinceNow: 10)
            while process.isRunning && Date() < killed { usleep(20_000) }
            return false
        }
        return true
    }

    /// Runs a command to the end and returns what it printed.
    static func run(_ executable: String, _ arguments: [String], in directory: URL, environment: [String: String] = [:], timeout: TimeInterval = 120) throws -> Output {
        let tag = UUID().uuidString
        let (process, out, err) = try start(executable, arguments, in: directory, environment: environment, tag: tag)
        let finished = wait(process, timeout: timeout)
        try #require(finished, "\(executable) did not finish within \(timeout) s")
        return Output(
            status: process.terminationStatus, stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Runs parleyd in file mode on `input`, writing what it would play to `output`.
    static func runFileMode(config: URL, input: String, output: String, in directory: URL) throws -> Output {
        try run(try binary("parleyd"), ["--config", config.path, "--input", input, "--output", output], in: directory)
    }

    /// Writes a config file whose history and socket live in `directory`; `history` and
    /// `control` are more keys of those tables.
    static func writeConfig(
        in directory: URL, extra: String = "", history: String = "", historyPath: String? = nil, control: String = ""
    ) throws -> URL {
        let url = directory.appendingPathComponent("parley.toml")
        let text = """
            [history]
            path = "\(historyPath ?? "\(directory.path)/history.sqlite")"
            \(history)
            [control]
            socket = "\(directory.path)/control.sock"
            \(control)
            \(extra)
            """
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// The [audio] section of a live daemon on ALSA's file plugin (see `startLiveDaemon`).
    static let liveAudio = "[audio]\ncapture_device = \"parleyin\"\nplayback_device = \"parleyout\""

    /// Starts parleyd live on ALSA's file plugin: `infile` is the microphone (read faster than
    /// real time, then silence in real time: `PacedMicrophone`) and `played` receives what is
    /// played. Waits for the socket. Each start in `dir` has a log of its own.
    static func startLiveDaemon(
        in dir: URL, infile: String, played: String, extraConfig: String = "", historyConfig: String = "", historyPath: String? = nil,
        controlConfig: String = "", environment: [String: String] = [:], command: [String] = []
    ) async throws -> (process: Process, log: URL, socket: String) {
        let microphone = try PacedMicrophone.make(in: dir, playing: infile)
        let asoundrc = """
            pcm.parleyin { type file; slave.pcm "null"; infile "\(microphone)"; file "/dev/null"; format "raw" }
            pcm.parleyout { type file; slave.pcm "null"; file "\(played)"; format "raw" }
            """
        try asoundrc.write(to: dir.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
        let config = try writeConfig(
            in: dir, extra: liveAudio + "\n" + extraConfig, history: historyConfig, historyPath: historyPath, control: controlConfig)
        let socket = dir.appendingPathComponent("control.sock").path
        // `command` runs parleyd through a wrapper (systemd-socket-activate, say).
        let daemon = try binary("parleyd")
        let (process, _, log) = try start(
            command.first ?? daemon, Array(command.dropFirst()) + (command.isEmpty ? [] : [daemon]) + ["--config", config.path], in: dir,
            environment: ["HOME": dir.path].merging(environment) { _, new in new }, tag: "parleyd-\(UUID().uuidString.prefix(4))")
        let deadline = Date(timeIntervalSinceNow: 30)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline && process.isRunning {
            try await Task.sleep(for: .milliseconds(50))
        }
        // Its own socket: until it answers (the file exists a moment before the daemon listens,
        // and a connection then is refused). A wrapper's socket listens already.
        while command.isEmpty, (try? ControlClient(path: socket).call(RawRequest(type: "version"))) == nil, Date() < deadline,
            process.isRunning
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        return (process, log, socket)
    }

    /// Reads 16-bit mono samples from a WAV file.
    static func wavSamples(_ url: URL) throws -> (samples: [Int16], rate: Int) {
        try WAV.decode(try Data(contentsOf: url), path: url.path)
    }

    /// Speech, as opposed to silence, a click or a steady tone: loud enough, and with the level
    /// varying between syllables and pauses.
    static func expectSpeechLike(_ samples: [Int16], rate: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let frame = rate / 50
        let levels = stride(from: 0, to: samples.count - frame, by: frame).map {
            Levels(measuring: samples[$0..<($0 + frame)]).rmsDB
        }
        let seconds = Double(samples.count) / Double(rate)
        #expect(seconds > 0.5, "only \(seconds) s of audio", sourceLocation: sourceLocation)
        let loud = levels.filter { $0 > -35 }.count
        let quiet = levels.filter { $0 < -50 }.count
        #expect(Double(loud) / Double(max(1, levels.count)) > 0.3, "too little loud audio", sourceLocation: sourceLocation)
        #expect(quiet > 0 || levels.contains { $0 < (levels.max() ?? 0) - 20 }, "no pauses: not speech", sourceLocation: sourceLocation)
    }

    /// The samples between the first and last that rise above about -40 dBFS.
    static func trimmingSilence(_ samples: [Int16]) -> ArraySlice<Int16> {
        let loud: (Int16) -> Bool = { abs(Int32($0)) > 330 }
        guard let first = samples.firstIndex(where: loud), let last = samples.lastIndex(where: loud) else { return [] }
        return samples[first...last]
    }

    /// Checks that `played` is `text` spoken: its speech lasts as long as the same voice's own
    /// rendering (Festival's where parleyd's default config gives it the language, else espeak-ng's).
    static func expectSpokenTranslation(_ played: [Int16], text: String, voice: String, in directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reference = trimmingSilence(try spokenReference(text, language: voice, in: directory))
        let speech = trimmingSilence(played)
        let ratio = Double(speech.count) / Double(max(1, reference.count))
        #expect(ratio > 0.95 && ratio < 1.05, "played \(speech.count) samples of speech, espeak-ng makes \(reference.count)", sourceLocation: sourceLocation)
    }

    /// What espeak-ng's own command line makes of `text`, for comparing with what Parley played.
    /// `text` as parleyd's default voice settings say it in `language`: Festival where `auto`
    /// gives it the language and it is installed, else espeak-ng at Parley's rate.
    static func spokenReference(_ text: String, language: String, in directory: URL) throws -> [Int16] {
        guard FestivalVoice.heardBetter.contains(language), FestivalVoice.festivalInstalled,
            let voice = FestivalVoice.table[language], voice.isInstalled
        else { return try espeakReference(text, voice: language, rate: VoiceSettings.defaultRate, in: directory) }
        let synthesizer = FestivalSynthesizer(espeak: try EspeakSynthesizer(), festivalVoices: [language: voice], report: { _ in })
        var samples: [Int16] = []
        try synthesizer.synthesize(text, language: language) { samples += $0 }
        return samples
    }

    /// `text` by the espeak-ng program (`rate`: its own default, 175, when nil).
    static func espeakReference(_ text: String, voice: String, rate: Int? = nil, in directory: URL) throws -> [Int16] {
        let wav = directory.appendingPathComponent("reference.wav")
        let result = try run("/usr/bin/espeak-ng", ["-v", voice, "-w", wav.path] + (rate.map { ["-s", String($0)] } ?? []) + [text], in: directory)
        try #require(result.status == 0, "espeak-ng failed: \(result.stderr)")
        return try wavSamples(wav).samples
    }
}

extension Thread {
    /// Runs blocking `body` on a new thread; the task finishes with what it returns.
    static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> Task<T, Never> {
        Task {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { continuation.resume(returning: body()) }
            }
        }
    }
}

/// A microphone for ALSA's `file` plugin that keeps to real time once the recording is heard.
///
/// The plugin reads its `infile` as fast as the daemon asks, and past the file's end returns at
/// once: a live daemon on it spins a core for as long as it runs, which starves the other
/// processes of a test (and of the tests after it) on a small machine. Here `infile` is a FIFO
/// fed by a thread: the recording and `fastSilence` of zeros go in as fast as they are read (so
/// a turn is heard and ended faster than real time, as before), then 20 ms of zeros every 20 ms,
/// so the daemon waits in `read` like on a real microphone. The thread ends when the FIFO is
/// removed (with the test's folder) or after an hour.
enum PacedMicrophone {
    static let fastSilence = 5.0
    /// One capture period's bytes (20 ms of 16 kHz mono s16).
    static let period = 640

    /// Makes a FIFO `microphone-UUID.fifo` in `dir`, fed with `recording` (raw 16 kHz mono s16);
    /// its path.
    static func make(in dir: URL, playing recording: String) throws -> String {
        // A name of its own: a daemon restarted in the same folder gets a new feeder, and the
        // old one ends when its FIFO is gone with the folder.
        let path = dir.appendingPathComponent("microphone-\(UUID().uuidString).fifo").path
        guard mkfifo(path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        // Read and write: opening never waits for the daemon, and writes never fail when it has
        // not opened the FIFO yet or has closed it to reopen the device.
        let fd = open(path, O_RDWR | O_NONBLOCK)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        // Whole periods of 320 frames (640 bytes), each written at once (a write of at most
        // PIPE_BUF bytes to a FIFO is atomic): the FIFO always holds whole periods, so the
        // plugin never gets a short read in the middle of one.
        let recorded = try Data(contentsOf: URL(fileURLWithPath: recording)) + Data(count: Int(fastSilence * 32_000))
        let head = recorded + Data(count: (Self.period - recorded.count % Self.period) % Self.period)
        Thread.detachNewThread {
            defer { close(fd) }
            let started = Date()
            var stillThere: Bool { access(path, F_OK) == 0 && Date().timeIntervalSince(started) < 3600 }
            var offset = 0
            while offset < head.count, stillThere {
                let written = head[offset..<(offset + Self.period)].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if written == Self.period { offset += written } else { usleep(2_000) }
            }
            let period = [UInt8](repeating: 0, count: Self.period)
            while stillThere {
                _ = period.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                usleep(20_000)
            }
        }
        return path
    }
}
