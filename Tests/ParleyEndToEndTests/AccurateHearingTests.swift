import Foundation
import Logging
import ParleyConfig
import ParleyConversation
import ParleyCore
import ParleyDaemon
import ParleyHistory
import ParleyRecognition
import ParleyTesting
import Synchronization
import Testing

/// The accurate pass with the real engines (`make engines`): Moonshine tiny and Whisper base
/// hear speakers Parley was never tuned to (Tests/data/SPEECH-NOTICE.md). Skipped, visibly,
/// when the engines are not installed.
@Suite("The accurate pass, real engines", .enabled(if: AccurateEngines.installed, "run `make engines` first"), .startsProcesses)
struct AccurateHearingTests {
    let english = EndToEnd.repository + "/Tests/data/en"
    let spanish = EndToEnd.repository + "/Tests/data/es/fleurs"

    func reference(_ path: String) throws -> String {
        try String(contentsOfFile: (path as NSString).deletingPathExtension + ".txt", encoding: .utf8)
    }

    @Test func inAutoModeEachPersonIsToldRightAndTheirWordsHeardAndTranslated() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clips = [
            ("en", "\(english)/vctk-p238_165.wav"), ("es", "\(spanish)/fleurs-es-006.wav"), ("en", "\(english)/cathy-a0122.wav"),
            ("es", "\(spanish)/fleurs-es-008.wav"), ("en", "\(english)/vctk-p301_102.wav"),
        ]
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"auto\"\n" + EndToEnd.spanishRecognizer + "\n" + AccurateEngines.table)
        // Each person waits for Parley's spoken translation before speaking again.
        let input = try EndToEnd.conversation(clips.map(\.1), gap: 12, in: dir)
        let result = try EndToEnd.runFileMode(config: config, input: input.path, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.stderr.contains(" error "), "stderr: \(result.stderr)")
        let turns = Array(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20).reversed())
        try #require(turns.count == clips.count, "turns: \(turns.map(\.sourceText))")
        #expect(turns.map(\.sourceLang) == clips.map(\.0))
        #expect(turns.map(\.speaker) == [.a, .b, .a, .b, .a])
        for (turn, clip) in zip(turns, clips) {
            #expect(turn.status == .translated && turn.translatedText?.isEmpty == false)
            #expect(turn.detection?.decidedBy == .languageID, "\(clip.1): \(String(describing: turn.detection))")
            let recall = EndToEnd.wordRecall(turn.sourceText, reference: try reference(clip.1))
            #expect(recall >= 0.8, "\(clip.1): heard \"\(turn.sourceText)\" (\(Int(recall * 100)) % of the words)")
        }
    }

    @Test func aMissingEngineIsOneLineAndTheTurnIsHeardByTheNextOne() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Moonshine's folder is empty: English falls to Whisper.
        let engines = dir.appendingPathComponent("engines")
        try FileManager.default.createDirectory(at: engines.appendingPathComponent("moonshine"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: engines.appendingPathComponent("whisper").path, withDestinationPath: AccurateEngines.folder + "/whisper")
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"one-way\"\n[transcriber]\nengines = \"\(engines.path)\"\n[log]\nlevel = \"notice\"")
        let clip = "\(english)/cathy-a0122.wav"
        let result = try EndToEnd.runFileMode(config: config, input: clip, output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let said = result.stderr.split(separator: "\n").filter { $0.contains("Moonshine") }
        #expect(said.count == 1, "stderr: \(result.stderr)")
        #expect(said.first?.contains("Whisper or PocketSphinx hears it") == true, "stderr: \(result.stderr)")
        let turns = try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 5)
        let turn = try #require(turns.first)
        #expect(EndToEnd.wordRecall(turn.sourceText, reference: try reference(clip)) >= 0.8, "heard \"\(turn.sourceText)\"")
        #expect(turn.status == .translated)
    }

    @Test func noEnginesAtAllLeavesPocketSphinxHearingAndSaysSo() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(
            in: dir, extra: "[conversation]\nmode = \"one-way\"\n[transcriber]\nengines = \"\(dir.path)/nowhere\"\n[log]\nlevel = \"notice\"")
        let result = try EndToEnd.runFileMode(
            config: config, input: "\(EndToEnd.testData)/goforward.raw", output: dir.appendingPathComponent("out.wav").path, in: dir)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("Moonshine cannot hear English"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("Whisper is not installed"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("make engines"))
        #expect(result.stdout.contains("go forward"))
    }

    @Test func whisperKilledMidUtteranceIsStartedAgainAndTheUtteranceHeard() async throws {
        let whisper = try AccurateEngines.whisper()
        try whisper.warm()
        #expect(whisper.starts == 1)
        let clip = "\(spanish)/fleurs-es-008.wav"
        let first = try #require(whisper.workerProcess)
        // Killed while it hears: the kill lands once the utterance has been sent.
        let transcript = try killedWhileHearing(whisper, clip, language: "es", after: .milliseconds(150))
        #expect(whisper.starts == 2)
        #expect(whisper.workerProcess != first)
        #expect(transcript.engine == "whisper-base" && transcript.language == "es")
        #expect(EndToEnd.wordRecall(transcript.text, reference: try reference(clip)) >= 0.8, "heard \"\(transcript.text)\"")
    }

    @Test func aHungMoonshineInTheDaemonCostsOneTurnItsSpeedNotItsWords() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = try EndToEnd.writeConfig(in: dir, extra: "[conversation]\nmode = \"one-way\"\n" + AccurateEngines.table + "\n[log]\nlevel = \"notice\"")
        // 3 s of silence first: the worker is stopped before anybody speaks.
        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 3 * 16_000 * 2).write(to: silence)
        let clips = ["\(english)/cathy-a0122.wav", "\(english)/vctk-p301_102.wav"]
        // Each person waits for the spoken translation (the first one comes late) before speaking.
        let input = try EndToEnd.conversation([silence.path] + clips, gap: 12, in: dir)
        let (daemon, _, err) = try EndToEnd.start(
            try EndToEnd.binary("parleyd"),
            ["--config", config.path, "--input", input.path, "--output", dir.appendingPathComponent("out.wav").path, "--pace"], in: dir)
        // parleyd starts Moonshine's worker as it warms its engines; once it is ready, it is
        // stopped, as if hung.
        let log = { (try? String(contentsOf: err, encoding: .utf8)) ?? "" }
        let deadline = Date(timeIntervalSinceNow: 20)
        while !log().contains("moonshine-tiny is ready") && Date() < deadline && daemon.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        try #require(log().contains("moonshine-tiny is ready"), "Moonshine's worker did not start: \(log())")
        let worker = try #require(AccurateEngines.child(of: daemon.processIdentifier, running: "moonshine"), "no Moonshine worker")
        kill(worker, SIGSTOP)
        #expect(EndToEnd.wait(daemon, timeout: 90))
        let stderr = log()
        #expect(daemon.terminationStatus == 0, "stderr: \(stderr)")
        let hung = stderr.split(separator: "\n").filter { $0.contains("did not answer within") }
        #expect(hung.count == 1, "stderr: \(stderr)")
        #expect(hung.first?.contains("whisper-base hears it") == true, "stderr: \(stderr)")
        let turns = Array(try await AppDatabase.open(path: dir.appendingPathComponent("history.sqlite").path).recentTurns(limit: 20).reversed())
        try #require(turns.count == 2, "turns: \(turns.map(\.sourceText))")
        // The first turn: Whisper hears it in Moonshine's place; the second: a fresh Moonshine.
        #expect(turns.map(\.engine) == ["whisper-base", "moonshine-tiny"])
        for (turn, clip) in zip(turns, clips) {
            #expect(turn.status == .translated)
            #expect(EndToEnd.wordRecall(turn.sourceText, reference: try reference(clip)) >= 0.8, "\(clip): heard \"\(turn.sourceText)\"")
        }
    }

    /// What `engine` hears in `clip` when its worker is killed `after` the request starts.
    func killedWhileHearing(_ engine: WyomingTranscriber, _ clip: String, language: String, after delay: DispatchTimeInterval) throws -> Transcript {
        let (samples, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: clip))
        let worker = try #require(engine.workerProcess)
        // A thread of its own: the test's blocking call may hold the concurrency pool.
        let killed = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            kill(worker, SIGKILL)
            killed.signal()
        }
        defer { killed.wait() }
        return try engine.transcribe(samples, TranscriptionRequest(language: language))
    }

    @Test func whisperTellsTheLanguageAndStopsThereWhenAnotherEngineHearsIt() throws {
        let whisper = try AccurateEngines.whisper()
        let (english, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(self.english)/vctk-p238_165.wav"))
        let detected = try whisper.transcribe(english, TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en"]))
        #expect(detected.language == "en" && !detected.decoded && detected.text.isEmpty)
        #expect((detected.languageProbabilities["en"] ?? 0) > 0.9)
        let (spanish, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: "\(self.spanish)/fleurs-es-006.wav"))
        let heard = try whisper.transcribe(spanish, TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en"]))
        #expect(heard.language == "es" && heard.decoded)
        #expect(EndToEnd.wordRecall(heard.text, reference: try reference("\(self.spanish)/fleurs-es-006.wav")) >= 0.8, "heard \"\(heard.text)\"")
    }

    /// The opening of an utterance (its first `TurnLogic.openingMs`), asked for the language
    /// alone: the worker tells Spanish from English without the silence a decoding is given.
    @Test func whisperTellsTheLanguageFromTheOpeningAlone() throws {
        let whisper = try AccurateEngines.whisper()
        for (path, language) in [("\(self.english)/vctk-p301_102.wav", "en"), ("\(self.spanish)/fleurs-es-008.wav", "es")] {
            let (samples, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: path))
            let opening = Array(samples.prefix(TurnLogic.openingMs * captureSampleRate / 1000))
            let told = try whisper.transcribe(opening, TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en", "es"]))
            #expect(told.language == language && !told.decoded && told.text.isEmpty, "\(path): \(told)")
            #expect((told.languageProbabilities[language] ?? 0) > 0.9, "\(path): \(told.languageProbabilities)")
        }
    }

    /// A pass nobody wants any more (the person went on) is stopped: the worker answers that it
    /// stopped, the same worker hears the next utterance whole, and a stop asked while it hears
    /// nothing changes nothing.
    @Test func whisperStopsAnUtteranceNobodyWantsAndHearsTheNext() throws {
        let whisper = try AccurateEngines.whisper()
        try whisper.warm()
        let path = "\(spanish)/fleurs-es-009.wav"
        let (samples, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: path))
        let long = samples + samples
        final class Outcome: Sendable { let result = Mutex<Result<Transcript, RecognizerError>?>(nil) }
        let outcome = Outcome()
        let thread = Thread {
            let result = Result { () throws(RecognizerError) in try whisper.transcribe(long, TranscriptionRequest(language: "es")) }
            outcome.result.withLock { $0 = result }
        }
        thread.start()
        // Asked again and again until it answers: a stop before the utterance is sent is none.
        while outcome.result.withLock({ $0 == nil }) {
            whisper.stop()
            Thread.sleep(forTimeInterval: 0.02)
        }
        switch outcome.result.withLock({ $0 }) {
        case .failure(let error)?: #expect(error.stopped, "\(error)")
        case .success(let transcript)?: Issue.record("heard to its end: \(transcript.text)")
        case nil: Issue.record("no answer")
        }
        whisper.stop()
        let heard = try whisper.transcribe(samples, TranscriptionRequest(language: "es"))
        #expect(EndToEnd.wordRecall(heard.text, reference: try reference(path)) >= 0.8, "heard \"\(heard.text)\"")
        #expect(whisper.starts == 1, "the worker was not restarted")
    }

    /// `[transcriber] moonshine_one_thread` (shipped on): the worker the daemon starts hears on
    /// its own thread alone, as well as with ONNX Runtime's threads (one per core, which spin
    /// while they wait and take CPU the room's other engines need).
    @Test(.enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1, "one core: ONNX Runtime makes no thread of its own either way"))
    func moonshinesWorkerHearsOnOneThreadAsConfigured() throws {
        let shipped = try ParleyConfig.load(path: EndToEnd.repository + "/config/parley.toml")
        #expect(shipped.transcriber.moonshineOneThread)
        let clip = "\(english)/vctk-p301_102.wav"
        let (samples, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: clip))
        var threads: [Bool: Int] = [:]
        for oneThread in [true, false] {
            var config = shipped
            config.transcriber.moonshineOneThread = oneThread
            let command = Daemon.moonshineWorker(
                try EndToEnd.binary("parleyd"), library: AccurateEngines.folder + "/moonshine/moonshine_voice/libmoonshine.so",
                model: AccurateEngines.folder + "/moonshine/tiny-en", config: config)
            let moonshine = AccurateEngines.moonshine(command: command)
            let heard = try moonshine.transcribe(samples, TranscriptionRequest(language: "en"))
            #expect(EndToEnd.wordRecall(heard.text, reference: try reference(clip)) >= 0.8, "one thread: \(oneThread), heard \"\(heard.text)\"")
            let worker = try #require(moonshine.workerProcess)
            threads[oneThread] = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker)/task").count) ?? 0
        }
        #expect(threads[true] == 1, "threads: \(threads)")
        #expect((threads[false] ?? 0) > 1, "threads: \(threads)")
    }

    /// `[transcriber] threads` 0 (shipped): the daemon starts Whisper's worker with one thread per
    /// core but one, at least one, and with the shipped beam; a number given is taken as is.
    @Test func whispersWorkerIsGivenEveryCoreButOne() throws {
        let shipped = try ParleyConfig.load(path: EndToEnd.repository + "/config/parley.toml")
        func option(_ name: String, _ command: [String]) -> String? {
            command.firstIndex(of: name).flatMap { command.indices.contains($0 + 1) ? command[$0 + 1] : nil }
        }
        #expect(option("--threads", Daemon.whisperWorker(folder: AccurateEngines.folder, config: shipped, cores: 4)) == "3")
        #expect(option("--threads", Daemon.whisperWorker(folder: AccurateEngines.folder, config: shipped, cores: 1)) == "1")
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(option("--threads", Daemon.whisperWorker(folder: AccurateEngines.folder, config: shipped)) == String(max(1, cores - 1)))
        #expect(option("--beam-size", Daemon.whisperWorker(folder: AccurateEngines.folder, config: shipped)) == String(shipped.transcriber.beamSize))
        var told = shipped
        told.transcriber.threads = 2
        #expect(option("--threads", Daemon.whisperWorker(folder: AccurateEngines.folder, config: told, cores: 4)) == "2")
    }

    /// The same samples give the same words, whatever the worker heard before. With
    /// libmoonshine's own voice detection on, where it split an utterance into lines depended on
    /// the calls before (its detector's state is kept in the process), and so did the words: the
    /// first two sentences here, heard three times in a row through ctypes, gave "Oh, you're new,
    /// you're" twice and then a loop ("you're, you're, you're"), which is no words at all; in
    /// this test, the worker looped on them (an error) in 2 runs of 2.
    @Test func moonshineGivesTheSameWordsForTheSameSamplesWhateverItHeardBefore() throws {
        // No limit on speed: a busy machine may take its time over 12 s of audio.
        let moonshine = try AccurateEngines.moonshine(timeoutMs: 30_000)
        func samples(_ path: String) throws -> [Int16] { try EndToEnd.wavSamples(URL(fileURLWithPath: path)).0 }
        let sure = try samples("\(english)/vctk-p301_102.wav")
        let accented = try samples(EndToEnd.repository + "/Tests/data/en-nonnative/speechocean762-9600-096000003.wav")
        let years = try samples("\(english)/cathy-a0122.wav")
        let joined = [sure + [Int16](repeating: 0, count: 6_400) + accented, years + [Int16](repeating: 0, count: 14_400) + sure]
        var heard: [[String]] = [[], []]
        for _ in 0..<3 {
            for (index, utterance) in joined.enumerated() {
                heard[index].append(try moonshine.transcribe(utterance, TranscriptionRequest(language: "en")).text)
            }
        }
        for words in heard {
            #expect(Set(words).count == 1, "\(words)")
        }
        let first = try reference("\(english)/vctk-p301_102.wav")
        #expect(EndToEnd.wordRecall(heard[0].first ?? "", reference: first) >= 0.8, "heard \"\(heard[0])\"")
        let both = try reference("\(english)/cathy-a0122.wav") + " " + first
        #expect(EndToEnd.wordRecall(heard[1].first ?? "", reference: both) >= 0.8, "heard \"\(heard[1])\"")
        #expect(moonshine.starts == 1)
    }

    @Test func moonshineHearsEnglishInAWorkerOfItsOwn() throws {
        let moonshine = try AccurateEngines.moonshine()
        for name in ["vctk-p238_165", "cathy-a0122", "vctk-p301_102"] {
            let path = "\(english)/\(name).wav"
            let (samples, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: path))
            let heard = try moonshine.transcribe(samples, TranscriptionRequest(language: "en"))
            #expect(heard.engine == "moonshine-tiny" && heard.language == "en")
            #expect(EndToEnd.wordRecall(heard.text, reference: try reference(path)) >= 0.8, "\(name): heard \"\(heard.text)\"")
        }
        #expect(moonshine.starts == 1)
        // The .ort files' mapped pages were released once the session was made, and hearing
        // does not read them again (42 MiB of the worker's memory otherwise).
        let worker = try #require(moonshine.workerProcess)
        // Read to the end: /proc's files say they are empty, and smaps is long.
        let maps = FileHandle(forReadingAtPath: "/proc/\(worker)/smaps").map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) } ?? ""
        var resident = 0
        var inside = false
        for line in maps.split(separator: "\n") {
            if let range = line.split(separator: " ").first, range.contains("-"), range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inside = line.hasSuffix(".ort") && line.contains("/moonshine/tiny-en/")
            } else if inside, line.hasPrefix("Rss:") {
                resident += Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            }
        }
        #expect(maps.contains("tiny-en/decoder_model_merged.ort"))
        #expect(resident < 1024, "\(resident) kB of the .ort files resident")
    }

    @Test func moonshineKilledMidUtteranceIsStartedAgainAndTheUtteranceHeard() throws {
        let moonshine = try AccurateEngines.moonshine()
        try moonshine.warm()
        let first = try #require(moonshine.workerProcess)
        let clip = "\(english)/vctk-p301_102.wav"
        // Killed while it hears (Moonshine takes about 50 ms per second of audio here).
        let transcript = try killedWhileHearing(moonshine, clip, language: "en", after: .milliseconds(30))
        #expect(moonshine.starts == 2)
        #expect(moonshine.workerProcess != first)
        #expect(transcript.engine == "moonshine-tiny")
        #expect(EndToEnd.wordRecall(transcript.text, reference: try reference(clip)) >= 0.8, "heard \"\(transcript.text)\"")
    }

    @Test func aHungMoonshineFailsTheUtteranceInTimeAndAFreshWorkerHearsTheNext() throws {
        // A limit far above the work (Moonshine hears this clip in about 0.2 s here), so a
        // loaded machine or a Pi still hears the next utterance within it: the test asserts
        // that a hung worker is given up and replaced, not how fast the machine is.
        let limit = Duration.seconds(5)
        let moonshine = try AccurateEngines.moonshine(timeoutMs: 5_000, timeoutPerSecondMs: 1_000)
        try moonshine.warm()
        let hung = try #require(moonshine.workerProcess)
        // Stopped: it reads nothing and answers nothing, as a library caught in a loop.
        kill(hung, SIGSTOP)
        let clip = "\(english)/cathy-a0122.wav"
        let (samples, _) = try EndToEnd.wavSamples(URL(fileURLWithPath: clip))
        let started = ContinuousClock.now
        #expect(throws: RecognizerError.self) { try moonshine.transcribe(samples, TranscriptionRequest(language: "en")) }
        let waited = ContinuousClock.now - started
        // Given up at its limit (5 s, plus 1 s a second of audio), not waited for forever: the
        // bound is the limit and a minute of slack, so only a missing limit fails it.
        #expect(waited >= limit, "failed after \(waited), before its limit: a stopped worker cannot have answered")
        #expect(waited < limit + .seconds(60), "the utterance waited \(waited) for a hung worker")
        #expect(moonshine.starts == 1, "a hung worker is not asked twice")
        #expect(moonshine.workerProcess == nil)
        // Killed, not left stopped: the process is gone.
        #expect(kill(hung, 0) != 0)
        let heard = try moonshine.transcribe(samples, TranscriptionRequest(language: "en"))
        #expect(moonshine.starts == 2)
        #expect(EndToEnd.wordRecall(heard.text, reference: try reference(clip)) >= 0.8, "heard \"\(heard.text)\"")
    }
}

/// Where `make engines` put the accurate engines, and a config table that uses them.
enum AccurateEngines {
    static let folder = EndToEnd.repository + "/.build/engines"

    static var installed: Bool {
        FileManager.default.fileExists(atPath: folder + "/.complete") && FileManager.default.fileExists(atPath: folder + "/whisper/parley-whisper")
    }

    static var table: String { "[transcriber]\nengines = \"\(folder)\"" }

    /// The child of `parent` whose command line has `worker` and `engine`.
    static func child(of parent: pid_t, running engine: String) -> pid_t? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // stat: pid (comm) state ppid ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, pid_t(fields[1]) == parent else { continue }
            let command = FileHandle(forReadingAtPath: "/proc/\(entry)/cmdline").map { $0.readDataToEndOfFile() } ?? Data()
            let arguments = command.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            if arguments.contains("worker") && arguments.contains(engine) { return pid }
        }
        return nil
    }

    /// A Moonshine worker of its own, as the daemon starts it (`parleyd worker moonshine`).
    static func moonshine(timeoutMs: Int = 3_000, timeoutPerSecondMs: Int = 0) throws -> WyomingTranscriber {
        moonshine(
            command: [
                try EndToEnd.binary("parleyd"), "worker", "moonshine", "--library", folder + "/moonshine/moonshine_voice/libmoonshine.so",
                "--model", folder + "/moonshine/tiny-en",
            ], timeoutMs: timeoutMs, timeoutPerSecondMs: timeoutPerSecondMs)
    }

    /// A Moonshine worker started by `command`.
    static func moonshine(command: [String], timeoutMs: Int = 3_000, timeoutPerSecondMs: Int = 0) -> WyomingTranscriber {
        WyomingTranscriber(
            name: "moonshine-tiny",
            endpoint: .child(command),
            languages: ["en"], detectsLanguage: false, holdsUpInNoise: false, timeoutMs: timeoutMs, timeoutPerSecondMs: timeoutPerSecondMs,
            startTimeoutMs: 10_000,
            logger: Logger(label: "test"))
    }

    /// A Whisper worker of its own, as the daemon starts it with the shipped config
    /// (`Daemon.whisperWorker`).
    static func whisper() throws -> WyomingTranscriber {
        let shipped = try ParleyConfig.load(path: EndToEnd.repository + "/config/parley.toml")
        return WyomingTranscriber(
            name: "whisper-base", endpoint: .child(Daemon.whisperWorker(folder: folder, config: shipped)),
            languages: whisperLanguages, stopsOnSignal: true, logger: Logger(label: "test"))
    }
}
