import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// A Piper voice: an ONNX model, with its `.onnx.json` beside it, for one language.
public struct PiperVoice: Sendable, Equatable {
    public let language: String
    /// The model file (`en_US-joe-medium.onnx`).
    public let model: String
    /// Installed by a user (`parleyd model install-voice`), not by `make engines`: used for its
    /// language under `[voice] engine = "auto"`, whatever was measured for the shipped voices.
    public let userInstalled: Bool

    public init(language: String, model: String, userInstalled: Bool = false) {
        self.language = language
        self.model = model
        self.userInstalled = userInstalled
    }

    /// The model's name: its file name without `.onnx`.
    public var name: String {
        let file = (model as NSString).lastPathComponent
        return file.hasSuffix(".onnx") ? String(file.dropLast(5)) : file
    }

    /// Its configuration, which Piper reads beside the model.
    public var configFile: String { model + ".json" }

    public var isInstalled: Bool { [model, configFile].allSatisfy { FileManager.default.fileExists(atPath: $0) } }

    /// The voices `make engines` installs (engines/fetch.sh), per language: file names in the
    /// engines folder's `piper/voices/`.
    public static let shipped: [String: String] = ["en": "en_US-joe-medium.onnx"]

    /// The languages `[voice] engine = "auto"` gives to Piper's shipped voices: English. Joe,
    /// as `make engines` installs it (its encoder and flow in 8 bits), was heard back by Whisper
    /// base missing 6.5 % of the words of three sets of 120 sentences (8.3, 5.7, 5.6 %; 6.1 % with
    /// the published weights), where Festival's voice missed 7.0-8.1 %; its worker holds about
    /// 90 MiB, so an English-Spanish conversation stays under the 700 MiB the product allows
    /// (docs/benchmarks.md, "Piper's English voice with 8-bit weights"). `[voice.en] engine =
    /// "festival"` gives English back to Festival; a voice a user installed is taken under "auto"
    /// (`userInstalled`).
    public static let heardBetter: Set<String> = ["en"]
}

/// What the Piper worker answered: a piece of a sentence, or a refusal (no more comes for it).
public enum PiperAnswer: Sendable, Equatable {
    /// A piece's audio, 16-bit mono at the rate asked for; `last`: the sentence's last piece.
    case audio([Int16], last: Bool)
    /// It could not say the sentence (a voice it has not loaded, a failure in Piper).
    case refused(String)
}

/// What `PiperSynthesizer` needs of its worker: a request line out, the answers to it back
/// within a time limit. The real one is a child process (`PiperProcess`); unit tests give an
/// in-memory one.
public protocol PiperLink: AnyObject {
    /// The process id (nil when it is no process).
    var process: pid_t? { get }
    /// Sends one request (a JSON object, without its newline), not waiting for its answers.
    func send(_ request: [UInt8]) throws(ChildFailure)
    /// The next answer to request `id` (answers to other requests are skipped).
    func receive(id: Int, timeoutMs: Int) throws(ChildFailure) -> PiperAnswer
    /// Ends it (killed if it runs) and reaps it.
    func stop()
}

/// The worker's protocol (libexec/parley-piper; docs/protocol.md, "The voice worker"): JSON
/// lines in; out, JSON lines, each `audio` line followed by its samples as raw 16-bit
/// little-endian bytes.
public enum PiperWire {
    struct Say: Encodable {
        let type = "say"
        let id: Int
        let language: String
        let text: String
    }

    struct Header: Decodable {
        let type: String
        let id: Int?
        let samples: Int?
        let last: Bool?
        let error: String?
    }

    /// The request that says `text` in `language`, line breaks made spaces.
    public static func say(_ text: String, language: String, id: Int) -> [UInt8] {
        let flat = text.map { $0.isNewline || $0 == "\t" ? " " : String($0) }.joined()
        // Encoding a struct of strings and an integer cannot fail.
        return Array((try? JSONEncoder().encode(Say(id: id, language: language, text: flat))) ?? Data("{}".utf8))
    }

    /// The longest piece read: a minute of audio is about 2.6 MB at 22,050 Hz.
    static let longestAnswer = 64 << 20

    /// An answer to request `id` from what the worker said, when a whole one is there. What is
    /// no answer to `id` (an answer to an earlier request cut short, its `info`) is taken and
    /// skipped (nil, with `said` shorter).
    public static func takeAnswer(for id: Int, from said: inout [UInt8]) throws(ChildFailure) -> PiperAnswer? {
        guard let newline = said.firstIndex(of: UInt8(ascii: "\n")) else {
            if said.count > 4096 { throw .broken("it sent no answer line") }
            return nil
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(said[..<newline])) else {
            throw .broken("it sent a line that is not its protocol")
        }
        let body = newline + 1
        var length = 0
        if header.type == "audio" {
            guard let samples = header.samples, samples >= 0, samples * 2 <= longestAnswer else {
                throw .broken("it sent audio of no length it could have")
            }
            length = samples * 2
            guard said.count >= body + length else { return nil }
        }
        let bytes = Array(said[body..<body + length])
        said.removeSubrange(..<(body + length))
        guard header.id == id else { return nil }
        switch header.type {
        case "audio":
            var samples = [Int16](repeating: 0, count: length / 2)
            for index in samples.indices {
                samples[index] = Int16(bitPattern: UInt16(bytes[2 * index]) | UInt16(bytes[2 * index + 1]) << 8)
            }
            return .audio(samples, last: header.last ?? true)
        case "error":
            return .refused(header.error ?? "no reason given")
        default:
            return nil
        }
    }
}

/// The Piper worker (`libexec/parley-piper`, Python, piper-tts and ONNX Runtime) as a child of
/// parleyd (`ChildPipes`): piper-tts is GPL-3.0, so it runs in a process of its own, never in
/// parleyd. Its standard error is parleyd's, so what it says about a voice that will not load
/// reaches the journal. It loads its voices as it starts: the first answer may take that long
/// more.
public final class PiperProcess: PiperLink {
    private let child: ChildPipes
    private var loaded = false
    public var process: pid_t? { child.pid }

    /// How long loading the voices may take, over an answer's own time: 0.6 s here, an
    /// estimated 2-3 s on a Pi 4.
    static let loadMs = 30_000

    private init(child: ChildPipes) { self.child = child }

    /// Starts `arguments` (the first is the program) as the worker.
    public static func start(_ arguments: [String]) throws(ChildFailure) -> PiperProcess {
        PiperProcess(child: try ChildPipes.spawn(arguments, stderrToNull: false))
    }

    public func send(_ request: [UInt8]) throws(ChildFailure) {
        try child.send(request + [UInt8(ascii: "\n")], timeoutMs: 5_000)
    }

    public func receive(id: Int, timeoutMs: Int) throws(ChildFailure) -> PiperAnswer {
        let answer = try child.exchange([], timeoutMs: timeoutMs + (loaded ? 0 : Self.loadMs)) { (said: inout [UInt8]) throws(ChildFailure) in
            try PiperWire.takeAnswer(for: id, from: &said)
        }
        loaded = true
        return answer
    }

    public func stop() { child.stop() }
}

/// Speaks the languages in `piperVoices` with Piper, and hands the others to `fallback`
/// (Festival's synthesizer, or espeak-ng), which also says what Piper could not.
///
/// Piper runs as one warm worker (`PiperLink`), started at `prepare()` with every voice loaded,
/// and asked sentence by sentence with a deadline; it answers a long sentence in pieces (cut
/// after its commas), each handed on as it comes, and the next sentence is asked for before the
/// last piece of this one is handed on, so it is made while this one plays. When the worker
/// crashes, hangs or refuses, `fallback` (espeak-ng: Festival is not given Piper's languages) says that
/// sentence and the rest of the text, `report` gets one line that says what to do, and a fresh
/// worker is started for the next text. An instance is used from one worker at a time.
public final class PiperSynthesizer: SpeechSynthesizer {
    public var sampleRate: Int { fallback.sampleRate }
    /// The languages Piper speaks, with its voice for each.
    public let piperVoices: [String: PiperVoice]
    private let fallback: any SpeechSynthesizer
    private let start: () throws(ChildFailure) -> any PiperLink
    private let report: @Sendable (String) -> Void
    private var link: (any PiperLink)?
    private var nextID = 0
    private var chunkSamples: Int { max(1, sampleRate / 20) }

    /// `start` starts the worker (the real one: `PiperProcess.start` with `arguments`).
    public init(
        fallback: any SpeechSynthesizer, piperVoices: [String: PiperVoice], start: @escaping () throws(ChildFailure) -> any PiperLink,
        report: @escaping @Sendable (String) -> Void
    ) {
        self.fallback = fallback
        self.piperVoices = piperVoices
        self.start = start
        self.report = report
    }

    /// With the real worker: `folder/parley-piper` run by `python`, piper and onnxruntime in
    /// `folder/python`, answering at `fallback`'s rate.
    public convenience init(
        fallback: any SpeechSynthesizer, piperVoices: [String: PiperVoice], folder: String, python: String,
        report: @escaping @Sendable (String) -> Void
    ) {
        let arguments = Self.arguments(folder: folder, python: python, voices: piperVoices, rate: fallback.sampleRate)
        self.init(fallback: fallback, piperVoices: piperVoices, start: { () throws(ChildFailure) -> any PiperLink in
            try PiperProcess.start(arguments)
        }, report: report)
    }

    /// The worker's command line.
    public static func arguments(folder: String, python: String, voices: [String: PiperVoice], rate: Int) -> [String] {
        [python, folder + "/parley-piper", "--python-path", folder + "/python", "--rate", String(rate)]
            + voices.keys.sorted().flatMap { ["--voice", "\($0)=\(voices[$0]?.model ?? "")"] }
    }

    deinit { link?.stop() }

    /// The worker's process id while one runs.
    public var piperProcess: pid_t? { link?.process }

    /// Starts the worker now (it loads its voices while nothing waits), unless it runs or no
    /// language uses it. A failure is reported, and the first sentence tries again.
    public func prepare() {
        guard link == nil, !piperVoices.isEmpty else { return }
        do {
            link = try start()
        } catch {
            report("Piper could not start (\(error)); espeak-ng speaks until it does: run `make engines` (or install the parley package)")
        }
    }

    /// How long Piper may take over a sentence: far above its work (0.1 s of CPU a second of
    /// speech here, an estimated 0.4 on a Pi 4), so only a hang runs it out.
    static func timeoutMs(_ sentence: String) -> Int { FestivalSynthesizer.timeoutMs(sentence) }

    public func hasVoice(for language: String) -> Bool {
        fallback.hasVoice(for: language) || piperVoices[language] != nil
    }

    public func ipa(_ text: String, language: String) -> String? {
        fallback.ipa(text, language: language)
    }

    @discardableResult
    public func synthesize(_ text: String, language: String, chunk: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        guard let voice = piperVoices[language] else {
            return try fallback.synthesize(text, language: language, chunk: chunk)
        }
        let sentences = SentenceSpeech.sentences(text)
        var produced = 0
        var asked = ask(sentences[0], voice: voice)
        for index in sentences.indices {
            if let id = asked {
                let next = index + 1 < sentences.count ? sentences[index + 1] : nil
                if let said = try speak(id, sentences[index], voice: voice, next: next, asked: &asked, chunk: chunk) {
                    produced += said
                    continue
                }
            }
            // The rest of this text is the fallback's; the next text tries Piper again.
            asked = nil
            produced += try fallback.synthesize(sentences[index], language: language, chunk: chunk)
        }
        return produced
    }

    /// Asks the worker for `sentence` (started first if none runs); its request id, or nil (said
    /// in one line) when it cannot be asked.
    private func ask(_ sentence: String, voice: PiperVoice) -> Int? {
        if link == nil {
            do {
                link = try start()
            } catch {
                report("Piper could not start (\(error)): run `make engines` (or install the parley package); espeak-ng spoke this sentence")
                return nil
            }
        }
        guard let piper = link else { return nil }
        nextID += 1
        do {
            try piper.send(PiperWire.say(sentence, language: voice.language, id: nextID))
            return nextID
        } catch {
            failed(error, voice: voice)
            return nil
        }
    }

    /// Hands on the pieces of request `id` as they come; asks for `next` before the last is
    /// handed on (`asked`: its id). The samples handed on, or nil when the worker gave none: its
    /// process is then replaced (a failure after a piece came says the sentence again whole).
    private func speak(
        _ id: Int, _ sentence: String, voice: PiperVoice, next: String?, asked: inout Int?, chunk: ([Int16]) throws -> Void
    ) throws(SynthesisError) -> Int? {
        asked = nil
        guard let piper = link else { return nil }
        var produced = 0
        while true {
            let answer: PiperAnswer
            do {
                answer = try piper.receive(id: id, timeoutMs: Self.timeoutMs(sentence))
            } catch {
                failed(error, voice: voice)
                return nil
            }
            switch answer {
            case .audio(let samples, let last):
                if last, let next { asked = ask(next, voice: voice) }
                try SentenceSpeech.handOn(samples, size: chunkSamples, to: chunk)
                produced += samples.count
                if last { return produced }
            case .refused(let reason):
                report("Piper could not speak \(voice.language) with \(voice.name) (\(reason)): check \(voice.model) and its .json, or set [voice.\(voice.language)] engine = \"festival\"; espeak-ng spoke this sentence")
                return nil
            }
        }
    }

    private func failed(_ error: ChildFailure, voice: PiperVoice) {
        report("Piper failed (\(error)); espeak-ng spoke this sentence and a fresh Piper is started. If this repeats, run `make engines` again, or set [voice.\(voice.language)] engine = \"festival\"")
        link?.stop()
        link = nil
        prepare()
    }
}
