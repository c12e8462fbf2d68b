import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// A Piper voice a user adds: a model checked, copied where parleyd looks (`parleyd model
/// install-voice`), then loaded by the worker and measured.
public enum PiperVoiceInstall {
    /// Why a voice cannot be used: one line that says what to do.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// A voice's two files and what its configuration says.
    public struct Found: Sendable, Equatable {
        public var language: String
        public var model: String
        public var config: String
        public var sampleRate: Int
    }

    /// What the worker reads of a voice's .onnx.json.
    struct Config: Decodable {
        struct Audio: Decodable { let sample_rate: Int? }
        struct Espeak: Decodable { let voice: String? }
        struct Language: Decodable { let code: String? }
        let audio: Audio?
        let espeak: Espeak?
        let language: Language?
        let phoneme_type: String?
        let num_symbols: Int?
        let phoneme_id_map: [String: [Int]]?
    }

    /// The phonemizers the installed piper-tts runs without more packages or downloads.
    static let phonemizers: Set<String> = ["espeak", "text"]

    /// The voice `model` (a .onnx file, its .onnx.json beside it), for `language` (ISO 639-1), or
    /// for the language its configuration names when nil.
    public static func find(model: String, language: String?) throws(Problem) -> Found {
        let manager = FileManager.default
        guard model.hasSuffix(".onnx") else { throw Problem("\(model) is not a .onnx file; give a Piper voice's MODEL.onnx (its MODEL.onnx.json beside it)") }
        guard manager.fileExists(atPath: model) else { throw Problem("\(model) does not exist") }
        let configPath = model + ".json"
        guard let data = manager.contents(atPath: configPath) else {
            throw Problem("\(configPath) is missing: a Piper voice comes as MODEL.onnx and MODEL.onnx.json; put both in one folder")
        }
        guard let config = try? JSONDecoder().decode(Config.self, from: data) else { throw Problem("\(configPath) is not a Piper voice's configuration (not JSON of its shape)") }
        guard let rate = config.audio?.sample_rate, (8_000...48_000).contains(rate), config.num_symbols != nil, config.phoneme_id_map != nil else {
            throw Problem("\(configPath) lacks audio.sample_rate, num_symbols or phoneme_id_map: not a Piper voice's configuration")
        }
        let phonemes = config.phoneme_type ?? "espeak"
        guard phonemizers.contains(phonemes) else {
            throw Problem("\(configPath): its phoneme_type is \"\(phonemes)\", which needs packages Parley does not install; only espeak and text voices can be used")
        }
        let named = (config.language?.code ?? config.espeak?.voice).map { String($0.prefix(2)).lowercased() }
        guard let code = language ?? named, code.count == 2, code.allSatisfy({ $0.isASCII && $0.isLowercase }) else {
            throw Problem("\(configPath) names no language; give it with --language (a two-letter ISO 639-1 code)")
        }
        return Found(language: code, model: model, config: configPath, sampleRate: rate)
    }

    /// Copies the voice to `folder/xx/` (xx: its language), which must not hold a voice unless
    /// `replace`; returns the installed model's path. The copy is made beside it and moved into
    /// place, so a failed install leaves nothing half-copied.
    public static func install(_ found: Found, into folder: String, replace: Bool = false) throws(Problem) -> String {
        let manager = FileManager.default
        let base = URL(fileURLWithPath: folder).standardizedFileURL.path
        let target = base + "/" + found.language
        if manager.fileExists(atPath: target) && !replace { throw Problem("\(target) already exists; remove it, or pass --force to replace it") }
        let staging = base + "/.\(found.language).installing"
        do {
            try manager.createDirectory(atPath: base, withIntermediateDirectories: true)
            try? manager.removeItem(atPath: staging)
            try manager.createDirectory(atPath: staging, withIntermediateDirectories: true)
        } catch {
            throw Problem("\(folder) cannot be written (\(error.localizedDescription)); choose another folder with --into")
        }
        defer { try? manager.removeItem(atPath: staging) }
        let name = (found.model as NSString).lastPathComponent
        for (path, copy) in [(found.model, name), (found.config, name + ".json")] {
            do {
                try manager.copyItem(atPath: URL(fileURLWithPath: path).resolvingSymlinksInPath().path, toPath: staging + "/" + copy)
            } catch {
                throw Problem("\(path) cannot be copied (\(error.localizedDescription)); check the disk and its permissions")
            }
        }
        do {
            if manager.fileExists(atPath: target) { try manager.removeItem(atPath: target) }
            try manager.moveItem(atPath: staging, toPath: target)
        } catch {
            throw Problem("\(target) cannot be replaced (\(error.localizedDescription)); check its permissions")
        }
        return target + "/" + name
    }

    /// The voice installed for each language in `folders` (searched in order: the first folder
    /// with a voice for a language gives it): `folder/xx/NAME.onnx` with its .onnx.json.
    public static func installed(in folders: [String]) -> [String: PiperVoice] {
        var voices: [String: PiperVoice] = [:]
        let manager = FileManager.default
        for folder in folders {
            for language in ((try? manager.contentsOfDirectory(atPath: folder)) ?? []).sorted() where voices[language] == nil {
                guard language.count == 2, language.allSatisfy({ $0.isASCII && $0.isLowercase }) else { continue }
                let names = ((try? manager.contentsOfDirectory(atPath: folder + "/" + language)) ?? []).sorted()
                if let model = names.first(where: { $0.hasSuffix(".onnx") && names.contains($0 + ".json") }) {
                    voices[language] = PiperVoice(language: language, model: folder + "/" + language + "/" + model, userInstalled: true)
                }
            }
        }
        return voices
    }

    /// What the worker made of an installed voice.
    public struct Measure: Sendable {
        /// From starting the worker until it had said a first short sentence (loading, warming).
        public var loadMs: Int
        /// CPU seconds of the worker per second of speech, over `sentence` said 3 times.
        public var realTimeFactor: Double
        /// From asking for `sentence` until its first piece came (the median of 3).
        public var firstSoundMs: Int
        public var speechSeconds: Double
        /// The worker's resident and proportional memory after that, in MiB.
        public var rssMiB: Int?
        public var pssMiB: Int?
    }

    /// Starts the worker of Piper's folder `engine` with `voice` alone, has it say "Hello." and
    /// then `sentence` 3 times, and measures it. Throws what went wrong when it says nothing.
    public static func measure(_ voice: PiperVoice, sentence: String, engine: String, python: String = "/usr/bin/python3") throws(Problem) -> Measure {
        let arguments = PiperSynthesizer.arguments(folder: engine, python: python, voices: [voice.language: voice], rate: 22_050)
        let clock = ContinuousClock()
        let started = clock.now
        do {
            let worker = try PiperProcess.start(arguments)
            defer { worker.stop() }
            var id = 0
            func say(_ text: String) throws(ChildFailure) -> (samples: Int, firstMs: Int) {
                id += 1
                let asked = clock.now
                try worker.send(PiperWire.say(text, language: voice.language, id: id))
                var samples = 0
                var first: Int?
                while true {
                    switch try worker.receive(id: id, timeoutMs: PiperSynthesizer.timeoutMs(text)) {
                    case .audio(let piece, let last):
                        first = first ?? Int((clock.now - asked).milliseconds)
                        samples += piece.count
                        if last { return (samples, first ?? 0) }
                    case .refused(let reason):
                        throw .broken(reason)
                    }
                }
            }
            _ = try say("Hello.")
            let loadMs = Int((clock.now - started).milliseconds)
            let cpu = cpuSeconds(worker.process)
            var samples = 0
            var firsts: [Int] = []
            for _ in 0..<3 {
                let said = try say(sentence)
                samples += said.samples
                firsts.append(said.firstMs)
            }
            let seconds = Double(samples) / 22_050
            let used = (cpuSeconds(worker.process) ?? 0) - (cpu ?? 0)
            let memory: (rss: Int?, pss: Int?) = worker.process.map(Self.memory) ?? (nil, nil)
            return Measure(
                loadMs: loadMs, realTimeFactor: seconds > 0 ? used / seconds : 0, firstSoundMs: firsts.sorted()[1], speechSeconds: seconds / 3,
                rssMiB: memory.rss, pssMiB: memory.pss)
        } catch {
            throw Problem("\(error)")
        }
    }

    /// A process's user and system CPU time in seconds (Linux's /proc).
    static func cpuSeconds(_ pid: pid_t?) -> Double? {
        guard let pid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A process's RSS and PSS in MiB (Linux's /proc/PID/smaps_rollup).
    static func memory(_ pid: pid_t) -> (rss: Int?, pss: Int?) {
        guard let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return (nil, nil) }
        func value(_ key: String) -> Int? {
            rollup.split(separator: "\n").first { $0.hasPrefix(key + ":") }?.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 / 1024 }
        }
        return (value("Rss"), value("Pss"))
    }
}
