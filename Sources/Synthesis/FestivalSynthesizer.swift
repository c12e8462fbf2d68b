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
public typealias FestivalFailure = ChildFailure

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
    private let child: ChildPipes
    public var process: pid_t? { child.pid }

    /// The longest answer read: a minute of audio is about 2.6 MB at 22,050 Hz.
    static let longestAnswer = 64 << 20

    /// Festival's Scheme heap, in cells: its default (10 million) alone keeps 320 MB resident;
    /// a million keeps 45-65 MB and still speaks a 1,100-character paragraph.
    public static let heap = 1_000_000

    private init(child: ChildPipes) { self.child = child }

    /// Starts `arguments` (default: festival on PATH) and sends it `setup`.
    public static func start(
        setup: String, arguments: [String] = ["festival", "--pipe", "--heap", String(heap)]
    ) throws(FestivalFailure) -> FestivalProcess {
        let festival = FestivalProcess(child: try ChildPipes.spawn(arguments, stderrToNull: true))
        try festival.child.send(Array(setup.utf8), timeoutMs: 10_000)
        return festival
    }

    public func exchange(_ request: [UInt8], timeoutMs: Int) throws(FestivalFailure) -> FestivalAnswer {
        try child.exchange(request + [UInt8(ascii: "\n")], timeoutMs: timeoutMs) { (said: inout [UInt8]) throws(ChildFailure) in
            try Self.takeAnswer(from: &said)
        }
    }

    /// An answer from what Festival said when a whole one is there: a RIFF file, or a line.
    static func takeAnswer(from buffer: inout [UInt8]) throws(FestivalFailure) -> FestivalAnswer? {
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

    public func stop() { child.stop() }
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
        for sentence in SentenceSpeech.sentences(text) {
            if festivalWorks, let samples = festival(sentence, voice: voice) {
                try SentenceSpeech.handOn(samples, size: chunkSamples, to: chunk)
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
}
