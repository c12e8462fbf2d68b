import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// A Festival voice Debian ships, for one language.
public struct FestivalVoice: Sendable, Equatable {
    public let language: String
    /// Festival's name for it: `(voice_<name>)` selects it.
    public let name: String
    /// The Debian package that installs it.
    public let package: String
    /// Where that package puts it: it is installed when this folder exists.
    public let folder: String
    /// Its front end reads ISO-8859-1, not UTF-8: in UTF-8 an accented word is an error in the
    /// Italian voice's letter-to-sound rules, and the Catalan voice spells it letter by letter.
    public let latin1: Bool

    public init(language: String, name: String, package: String, folder: String, latin1: Bool = false) {
        self.language = language
        self.name = name
        self.package = package
        self.folder = folder
        self.latin1 = latin1
    }

    /// Debian's Festival voice for each language Parley speaks that has one.
    public static let table: [String: FestivalVoice] = [
        "en": FestivalVoice(
            language: "en", name: "cmu_us_slt_arctic_hts", package: "festvox-us-slt-hts",
            folder: "/usr/share/festival/voices/us/cmu_us_slt_arctic_hts"),
        "it": FestivalVoice(
            language: "it", name: "lp_diphone", package: "festvox-italp16k",
            folder: "/usr/share/festival/voices/italian/lp_diphone", latin1: true),
        "ca": FestivalVoice(
            language: "ca", name: "upc_ca_ona_hts", package: "festvox-ca-ona-hts",
            folder: "/usr/share/festival/voices/catalan/upc_ca_ona_hts", latin1: true),
    ]

    /// The languages `[voice] engine = "auto"` gives to Festival: where Whisper base heard its
    /// voice clearly better than espeak-ng's (docs/benchmarks.md, "Voices a listener
    /// understands"). Elsewhere espeak-ng speaks.
    public static let heardBetter: Set<String> = ["en", "it", "ca"]

    public var isInstalled: Bool { FileManager.default.fileExists(atPath: folder) }

    /// Whether the `festival` program is on PATH.
    public static var festivalInstalled: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/festival") }
    }
}

/// What Festival answered a sentence.
public enum FestivalAnswer: Sendable, Equatable {
    /// The sentence's audio, 16-bit mono at the rate asked for.
    case wave([Int16])
    /// Festival refused it (a Scheme error: most often the voice is not installed).
    case refused
}

/// Why Festival gave no answer.
public enum FestivalFailure: Error, CustomStringConvertible, Sendable {
    /// It did not answer within the limit (hung, or stopped).
    case timedOut(Int)
    /// It closed its output or its input: it exited, or was killed.
    case exited(how: String?)
    /// Something else went wrong (the pipes, a malformed answer, it could not start).
    case broken(String)

    public var description: String {
        switch self {
        case .timedOut(let milliseconds): "it did not answer within \(milliseconds) ms"
        case .exited(let how): "it exited" + (how.map { " (\($0))" } ?? "")
        case .broken(let problem): problem
        }
    }
}

/// What `FestivalSynthesizer` needs of Festival: a request out, an answer back within a time
/// limit. The real one is a child process (`FestivalProcess`); unit tests give an in-memory one.
public protocol FestivalLink: AnyObject {
    /// The process id (nil when it is no process).
    var process: pid_t? { get }
    /// Sends one request (Scheme, without its newline) and reads its answer.
    func exchange(_ request: [UInt8], timeoutMs: Int) throws(FestivalFailure) -> FestivalAnswer
    /// Ends it (killed if it runs) and reaps it.
    func stop()
}

/// The Scheme Parley speaks to Festival in: `parley.setup` once, then one `parley.say` per
/// sentence. The audio is written to /dev/stdout as a RIFF file (its header carries its length),
/// opened and closed each time so nothing waits in a buffer; a Scheme error answers one line,
/// `ERROR`. The voice is selected only when it changes (Festival keeps a loaded voice).
public enum FestivalScheme {
    public static func setup(sampleRate: Int, voices: [FestivalVoice]) -> String {
        let definitions = """
            (define (parley.answer line) (let ((f (fopen "/dev/stdout" "w"))) (format f "%s\\n" line) (fclose f)))
            (set! parley.voice nil)
            (define (parley.say voice text)
              (unwind-protect
                (begin
                  (if (not (equal? voice parley.voice)) (begin (eval (list voice)) (set! parley.voice voice)))
                  (let ((u (utt.synth (eval (list (quote Utterance) (quote Text) text)))))
                    (utt.wave.resample u \(sampleRate))
                    (utt.wave.rescale u 0.8 t)
                    (utt.save.wave u "/dev/stdout" (quote riff))))
                (parley.answer "ERROR")))

            """
        // Every voice is loaded now, while nothing waits for it (a voice not installed is an
        // error Festival writes to its standard error, and it goes on).
        return definitions + voices.map { "(voice_\($0.name))\n" }.joined()
    }

    /// The request that says `text` with `voice`: a Scheme string, quotes and backslashes
    /// escaped, line breaks made spaces; in ISO-8859-1 for a voice that reads it.
    public static func say(_ text: String, voice: FestivalVoice) -> [UInt8] {
        var quoted = ""
        for character in text {
            switch character {
            case "\\": quoted += "\\\\"
            case "\"": quoted += "\\\""
            case "\n", "\r", "\r\n", "\t": quoted += " "
            default: quoted.append(character)
            }
        }
        let request = "(parley.say (quote voice_\(voice.name)) \"\(quoted)\")"
        guard voice.latin1 else { return Array(request.utf8) }
        return request.unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : UInt8(ascii: "?") }
    }

    /// The 16-bit mono samples of a RIFF file, or nil when it is not one.
    public static func samples(ofRIFF bytes: [UInt8]) -> [Int16]? {
        func word(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func long(_ at: Int) -> Int { word(at) | word(at + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else { return nil }
        var offset = 12
        var format: (channels: Int, bits: Int)?
        while offset + 8 <= bytes.count {
            let size = long(offset + 4)
            let body = offset + 8
            guard size >= 0, body + size <= bytes.count else { return nil }
            if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8), size >= 16 {
                format = (word(body + 2), word(body + 14))
            } else if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                guard let format, format.channels == 1, format.bits == 16 else { return nil }
                var samples = [Int16](repeating: 0, count: size / 2)
                for index in samples.indices {
                    samples[index] = Int16(bitPattern: UInt16(truncatingIfNeeded: word(body + 2 * index)))
                }
                return samples
            }
            offset = body + size + (size & 1)
        }
        return nil
    }
}

/// Festival (`festival --pipe`) as a child of parleyd: Scheme on its standard input, answers
/// on its standard output, read with `poll` and a deadline; its standard error goes to
/// /dev/null (what Parley logs says what to do). Spawned through `ProcessLauncher`.
public final class FestivalProcess: FestivalLink {
    public let process: pid_t?
    private let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var stopped = false
    private var reaped = false

    /// The longest answer read: a minute of audio is about 2.6 MB at 22,050 Hz.
    static let longestAnswer = 64 << 20

    /// Festival's Scheme heap, in cells: its default (10 million) alone keeps 320 MB resident;
    /// a million keeps 45-65 MB and still speaks a 1,100-character paragraph.
    public static let heap = 1_000_000

    /// Writing to a Festival that died must be an error here, not the end of parleyd.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.process = pid
        self.input = input
        self.output = output
    }

    deinit { stop() }

    /// Starts `arguments` (default: festival on PATH) and sends it `setup`.
    public static func start(
        setup: String, arguments: [String] = ["festival", "--pipe", "--heap", String(heap)]
    ) throws(FestivalFailure) -> FestivalProcess {
        _ = ignoreBrokenPipes
        guard let program = arguments.first else { throw .broken("no Festival program given") }
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        let result: Result<pid_t, FestivalFailure> = ProcessLauncher.withLock {
            guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
                return .failure(.broken("cannot start \(program): no pipe (\(String(cString: strerror(errno))))"))
            }
            for end in toChild + fromChild { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return ProcessLauncher.spawn(arguments, stdin: toChild[0], stdout: fromChild[1], stderrToNull: true)
                .mapError { .broken("cannot start \(program): \($0)") }
        }
        if toChild[0] >= 0 { close(toChild[0]) }
        if fromChild[1] >= 0 { close(fromChild[1]) }
        switch result {
        case .success(let pid):
            let festival = FestivalProcess(pid: pid, input: fromChild[0], output: toChild[1])
            try festival.write(Array(setup.utf8), deadline: festival.deadline(10_000), timeoutMs: 10_000)
            return festival
        case .failure(let error):
            for end in [toChild[1], fromChild[0]] where end >= 0 { close(end) }
            throw error
        }
    }

    private func deadline(_ timeoutMs: Int) -> UInt64 {
        DispatchTime.now().uptimeNanoseconds + UInt64(max(timeoutMs, 1)) * 1_000_000
    }

    public func exchange(_ request: [UInt8], timeoutMs: Int) throws(FestivalFailure) -> FestivalAnswer {
        guard !stopped else { throw .broken("it was stopped") }
        let deadline = deadline(timeoutMs)
        try write(request + [UInt8(ascii: "\n")], deadline: deadline, timeoutMs: timeoutMs)
        while true {
            if let answer = try takeAnswer() { return answer }
            try fill(deadline: deadline, timeoutMs: timeoutMs)
        }
    }

    /// An answer from the buffer when a whole one is there: a RIFF file, or a line.
    private func takeAnswer() throws(FestivalFailure) -> FestivalAnswer? {
        if buffer.count >= 4, buffer[0..<4].elementsEqual("RIFF".utf8) {
            guard buffer.count >= 8 else { return nil }
            let size = Int(buffer[4]) | Int(buffer[5]) << 8 | Int(buffer[6]) << 16 | Int(buffer[7]) << 24
            guard size <= Self.longestAnswer else { throw .broken("it sent an answer longer than \(Self.longestAnswer >> 20) MiB") }
            guard buffer.count >= 8 + size else { return nil }
            let file = Array(buffer[..<(8 + size)])
            buffer.removeSubrange(..<(8 + size))
            guard let samples = FestivalScheme.samples(ofRIFF: file) else { throw .broken("it sent audio that is not 16-bit mono") }
            return .wave(samples)
        }
        guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.count > 4096 { throw .broken("it sent neither audio nor a line") }
            return nil
        }
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        // Anything else it prints is not an answer: skipped.
        return line == "ERROR" ? .refused : nil
    }

    private func fill(deadline: UInt64, timeoutMs: Int) throws(FestivalFailure) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard now < deadline else { throw .timedOut(timeoutMs) }
        var entry = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
        if ready < 0 {
            if errno == EINTR { return }
            throw .broken("cannot wait for it: \(String(cString: strerror(errno)))")
        }
        guard ready > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
        guard count > 0 else { throw .exited(how: exitStatus()) }
        buffer.append(contentsOf: chunk[0..<count])
    }

    /// Writes all of `bytes`, reading what Festival says meanwhile so neither side waits on a
    /// full pipe.
    private func write(_ bytes: [UInt8], deadline: UInt64, timeoutMs: Int) throws(FestivalFailure) {
        var offset = 0
        while offset < bytes.count {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw .timedOut(timeoutMs) }
            var entries = [pollfd(fd: output, events: Int16(POLLOUT), revents: 0), pollfd(fd: input, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .broken("cannot wait for it: \(String(cString: strerror(errno)))")
            }
            if entries[1].revents != 0 { try fill(deadline: deadline, timeoutMs: timeoutMs) }
            guard entries[0].revents != 0 else { continue }
            // At most a pipe's atomic size, so a write never blocks once poll says it may.
            let length = min(bytes.count - offset, Int(PIPE_BUF))
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let start = buffer.baseAddress else { return 0 }
                return Glibc.write(output, start + offset, length)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == EPIPE { throw .exited(how: exitStatus()) }
                throw .broken("cannot write to it: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// How it ended ("killed by signal 9"), once it has; nil while it runs.
    private func exitStatus() -> String? {
        guard !reaped else { return nil }
        var status: Int32 = 0
        for _ in 0..<50 {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                reaped = true
                let signal = status & 0x7f
                return signal != 0 ? "killed by signal \(signal)" : "exit status \((status >> 8) & 0xff)"
            }
            if result < 0 { return nil }
            usleep(10_000)
        }
        return nil
    }

    public func stop() {
        guard !stopped else { return }
        stopped = true
        close(input)
        close(output)
        guard !reaped else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }
}

/// Speaks each language with the voice chosen for it: Festival's for the languages in
/// `festivalVoices`, espeak-ng's for the others.
///
/// Festival runs as one warm child process (`FestivalLink`), started at `prepare()` with every
/// voice loaded, and asked sentence by sentence with a deadline. When it crashes, hangs or
/// refuses (its voice is missing), espeak-ng says the rest of that text, `report` gets one line
/// that says what to do, and a fresh process is started for the next text. An instance is used
/// from one worker at a time, like the synthesizers it holds.
public final class FestivalSynthesizer: SpeechSynthesizer {
    public var sampleRate: Int { espeak.sampleRate }
    /// The languages Festival speaks, with its voice for each.
    public let festivalVoices: [String: FestivalVoice]
    private let espeak: any SpeechSynthesizer
    private let start: () throws(FestivalFailure) -> any FestivalLink
    private let report: @Sendable (String) -> Void
    private var link: (any FestivalLink)?
    /// Audio is handed on in chunks of this many samples (50 ms), so a stop cuts it between two.
    private var chunkSamples: Int { max(1, sampleRate / 20) }

    /// `start` starts Festival with `setup` sent (the real one: `FestivalProcess.start`).
    public init(
        espeak: any SpeechSynthesizer, festivalVoices: [String: FestivalVoice],
        start: @escaping () throws(FestivalFailure) -> any FestivalLink,
        report: @escaping @Sendable (String) -> Void
    ) {
        self.espeak = espeak
        self.festivalVoices = festivalVoices
        self.start = start
        self.report = report
    }

    /// With the real Festival: a warm `festival --pipe` with `festivalVoices` loaded.
    public convenience init(espeak: any SpeechSynthesizer, festivalVoices: [String: FestivalVoice], report: @escaping @Sendable (String) -> Void) {
        let setup = FestivalScheme.setup(sampleRate: espeak.sampleRate, voices: festivalVoices.values.sorted { $0.language < $1.language })
        self.init(espeak: espeak, festivalVoices: festivalVoices, start: { () throws(FestivalFailure) -> any FestivalLink in
            try FestivalProcess.start(setup: setup)
        }, report: report)
    }

    deinit { link?.stop() }

    /// Festival's process id while one runs.
    public var festivalProcess: pid_t? { link?.process }

    /// Starts Festival now (it loads its voices while nothing waits), unless it runs or no
    /// language uses it. A failure is reported, and the first sentence tries again.
    public func prepare() {
        guard link == nil, !festivalVoices.isEmpty else { return }
        do {
            link = try start()
        } catch {
            report("Festival could not start (\(error)); espeak-ng speaks until it does: install festival (make deps)")
        }
    }

    /// How long Festival may take over `sentence`: far above its work (a short sentence takes
    /// 0.1 s here and loading every voice 0.4 s; a Pi 4 is 3-4 times slower), so only a hang
    /// runs it out.
    static func timeoutMs(_ sentence: String) -> Int {
        min(60_000, 5_000 + 50 * sentence.count)
    }

    public func hasVoice(for language: String) -> Bool {
        espeak.hasVoice(for: language) || festivalVoices[language] != nil
    }

    public func ipa(_ text: String, language: String) -> String? {
        espeak.ipa(text, language: language)
    }

    @discardableResult
    public func synthesize(_ text: String, language: String, chunk: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        guard let voice = festivalVoices[language] else {
            return try espeak.synthesize(text, language: language, chunk: chunk)
        }
        var produced = 0
        var festivalWorks = true
        for sentence in Self.sentences(text) {
            if festivalWorks, let samples = festival(sentence, voice: voice) {
                do {
                    var start = 0
                    while start < samples.count {
                        let end = min(samples.count, start + chunkSamples)
                        try chunk(Array(samples[start..<end]))
                        start = end
                    }
                } catch {
                    throw SynthesisError("speech output failed: \(error)")
                }
                produced += samples.count
            } else {
                // The rest of this text is espeak-ng's; the next text tries Festival again.
                festivalWorks = false
                produced += try espeak.synthesize(sentence, language: language, chunk: chunk)
            }
        }
        return produced
    }

    /// Festival's audio for `sentence`, or nil (said in one line) when it gave none: its process
    /// is then replaced.
    private func festival(_ sentence: String, voice: FestivalVoice) -> [Int16]? {
        if link == nil {
            do {
                link = try start()
            } catch {
                report("Festival could not start (\(error)): install festival and \(voice.package) (make deps); espeak-ng spoke this sentence")
                return nil
            }
        }
        guard let festival = link else { return nil }
        let timeout = Self.timeoutMs(sentence)
        do {
            switch try festival.exchange(FestivalScheme.say(sentence, voice: voice), timeoutMs: timeout) {
            case .wave(let samples):
                return samples
            case .refused:
                report("Festival could not speak \(voice.language) with voice_\(voice.name): install \(voice.package) (make deps); espeak-ng spoke this sentence")
                return nil
            }
        } catch {
            report("Festival failed (\(error)); espeak-ng spoke this sentence and a fresh Festival is started. If this repeats, reinstall festival and \(voice.package), or set [voice.\(voice.language)] engine = \"espeak-ng\"")
            festival.stop()
            link = nil
            prepare()
            return nil
        }
    }

    /// `text` cut after each sentence's end (., ?, ! or … before a space): Festival answers a
    /// sentence at a time, so the first is heard while the next is made.
    static func sentences(_ text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        var ended = false
        for character in text {
            if ended, character.isWhitespace {
                let sentence = current.trimmingCharacters(in: .whitespaces)
                if !sentence.isEmpty { sentences.append(sentence) }
                current = ""
                ended = false
                continue
            }
            current.append(character)
            ended = ".?!…".contains(character)
        }
        let last = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { sentences.append(last) }
        return sentences.isEmpty ? [text] : sentences
    }
}
