import Foundation
import ParleyCore
import ParleyEndpoint
import ParleyRecognition
import TOMLKit

/// A configuration problem, said in one line that names the key or file and what to do.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Which engine speaks a language (`[voice] engine`, `[voice.xx] engine`).
public enum VoiceEngine: String, Sendable, CaseIterable {
    /// The engines' names, quoted, for an error.
    static var spelledOut: String { allCases.map { quoted($0.rawValue) }.joined(separator: ", ") }

    /// The voice heard best per language when installed (docs/benchmarks.md, "Voices a listener
    /// understands"): Piper for English and for a voice a user installed, Festival for Italian
    /// and Catalan (and English without Piper), espeak-ng elsewhere.
    case auto
    /// espeak-ng: every language, the fastest, the least understood.
    case espeak = "espeak-ng"
    /// Festival, for a language Debian has a Festival voice for (English, Italian, Catalan);
    /// espeak-ng for the others.
    case festival
    /// Piper (`make engines`), for a language it has a voice for (English; or one installed with
    /// `parleyd model install-voice`); Festival's or espeak-ng's choice for the others.
    case piper
}

/// How one language is spoken: its engine, an espeak-ng voice, words per minute, pitch (0-100), volume (0-200).
public struct VoiceConfig: Sendable, Equatable {
    /// The engine for this language; nil follows `[voice] engine`.
    public var engine: VoiceEngine?
    public var voice: String?
    /// 140 words a minute, not espeak-ng's 175 (`VoiceSettings.defaultRate`: heard better).
    public var rate = 140
    public var pitch = 50
    public var volume = 100

    public init() {}
}

/// Everything parleyd reads from its TOML file (config/parley.toml documents every key).
public struct ParleyConfig: Sendable, Equatable {
    // [conversation]
    public var speakerA = "en"
    public var speakerB = "es"
    public var mode = ConversationMode.auto
    public var echoTailMs = 300
    /// Utterances recognized with less confidence are flagged (0 flags nothing). The confidence
    /// is calibrated (`ConfidenceCalibration`): at 0.5, about one clean sentence in ten is
    /// flagged and most noise, babble and other-language input is (docs/benchmarks.md).
    public var minConfidence = 0.5
    /// Whether a flagged utterance is answered with "please repeat" in the speaker's language.
    public var repeatPrompt = false
    // [audio]
    public var captureDevice = "default"
    public var playbackDevice = "default"
    /// Whether Parley's own voice is cancelled out of what the microphone hears, so a person who
    /// speaks while Parley speaks is heard once it has finished (`EchoCanceller`, `DoubleTalk`).
    public var echoCancel = true
    // [endpoint]
    public var endpoint = EndpointSettings()
    // [recognizer.<lang>]: explicitly configured models; see `recognizerModel(for:)`.
    public var recognizers: [String: RecognizerModel] = [:]
    /// Where models installed without a config table are looked for (`installedModel(for:)`),
    /// from the environment: see `modelDirectories(environment:)`.
    public var modelSearchPath: [String]
    /// PocketSphinx's flat-lexicon second search. Off: it costs about 150 ms at every endpoint
    /// and bought no accuracy (docs/benchmarks.md). The lattice pass (bestpath) always runs: the
    /// turn's confidence rests on its words' posteriors.
    public var fwdflat = DecoderSettings().fwdflat
    /// PocketSphinx's `-maxhmmpf`: at most this many HMMs are kept active per frame (-1: no
    /// limit). 4000 rather than PocketSphinx's 30000 halves recognition CPU with the same word
    /// error rate on pocketsphinx-testdata's recordings (docs/benchmarks.md).
    public var maxHMMsPerFrame = DecoderSettings().maxHMMsPerFrame
    /// Distinct words that may end in one frame of the first pass (`[recognizer] maxwpf`; -1:
    /// no limit). The limit keeps the word lattice small: a language decoding speech in the
    /// other language (auto mode) otherwise builds a lattice whose best path takes 0.5 s.
    public var maxWordsPerFrame = DecoderSettings().maxWordsPerFrame
    /// Where cut-down copies of the dictionaries are kept (only the words each language model
    /// can produce; see PrunedDictionary); nil loads the dictionaries whole.
    public var recognizerCacheDirectory: String?
    // [transcriber]: the accurate pass
    public var transcriber = TranscriberConfig()
    // [voice]: which engine speaks each language, unless its own table names one
    public var voiceEngine = VoiceEngine.auto
    // [voice.<lang>]: how each language is spoken
    public var voices: [String: VoiceConfig] = [:]
    // [translator]
    public var apertiumModesDirectory = "/usr/share/apertium/modes"
    public var translationTimeoutMs = 5_000
    /// The translation backends, tried in this order.
    public var translatorBackends: [TranslatorBackend] = [.apertium]
    /// How long each backend may take over a turn, retries included, before the next is tried.
    public var translationDeadlineMs = 5_000
    /// Keep Apertium's unknown-word marks (`*`, `#`, `@`) in translations, for debugging.
    public var keepUnknownMarks = false
    /// Tell the speaker, in their language, when their words could not be translated.
    public var failureNotice = true
    /// Recent translations kept (0 keeps none).
    public var translationCacheSize = 256
    /// Mozilla's Bergamot models in front of Apertium, on the routes where they measured better
    /// (`[translator] bergamot`); used when `[translator] backends` lists "apertium".
    public var bergamotEnabled = true
    /// Where `make engines` put Bergamot's models and worker (`[translator] engines`); nil
    /// looks in the installed places (`TranscriberConfig.searchPath`).
    public var translatorEngines: String?
    /// [translator.libretranslate]
    public var libreTranslate = HTTPBackendConfig(url: "http://127.0.0.1:5000")
    /// [translator.apertium-apy]
    public var apertiumApy = HTTPBackendConfig(url: "http://127.0.0.1:2737")
    // [history]
    public var historyEnabled = true
    public var historyPath: String
    /// Turns kept, favorites not counted; older ones are dropped.
    public var historyMaxTurns = 10_000
    /// Turns older than this many days are dropped (favorites kept); nil keeps them.
    public var historyMaxAgeDays: Int?
    /// Minutes without a turn after which the next turn starts a new session.
    public var sessionGapMinutes = 30
    // [control]
    public var controlSocket: String
    /// The group the control socket belongs to (mode 0660); its members may use `parley`.
    public var controlGroup = "parley"
    /// Seconds a control connection may stay idle (no request in flight, not subscribed) before
    /// it is closed, so idle clients cannot hold every place.
    public var controlIdleTimeoutSeconds = 30
    // [log]
    public var logLevel = "info"
    /// Whether what people said (recognized, typed and translated text) may be logged. Off: logs
    /// name turns by id only.
    public var logTranscripts = false
    // [web]
    public var web = WebConfig()

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        historyPath = Self.defaultHistoryPath(environment: environment)
        controlSocket = ControlSocketPath.defaultPath(environment: environment)
        recognizerCacheDirectory = Self.defaultCacheDirectory(environment: environment)
        modelSearchPath = Self.modelDirectories(environment: environment)
    }

    /// The model for `language`: the configured one (`[recognizer.xx]`), else one installed in
    /// the standard layout under `modelSearchPath` (`parleyd model install`), else Debian's for
    /// English; nil when none is known.
    public func recognizerModel(for language: String) -> RecognizerModel? {
        if let configured = recognizers[language] { return configured }
        if let installed = installedModel(for: language) { return installed }
        return language == "en" ? .debianEnglish : nil
    }

    /// The language a speaker talks.
    public func language(of speaker: Speaker) -> String {
        speaker == .a ? speakerA : speakerB
    }

    /// `$STATE_DIRECTORY/history.sqlite` under systemd, else `$XDG_STATE_HOME/parley/history.sqlite`
    /// (by default `~/.local/state/parley/history.sqlite`).
    public static func defaultHistoryPath(environment: [String: String]) -> String {
        if let state = environment["STATE_DIRECTORY"], !state.isEmpty {
            return (state.split(separator: ":").first.map(String.init) ?? state) + "/history.sqlite"
        }
        if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty {
            return xdg + "/parley/history.sqlite"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/parley/history.sqlite"
    }

    /// `$CACHE_DIRECTORY` under systemd, else `$XDG_CACHE_HOME/parley` (by default `~/.cache/parley`).
    public static func defaultCacheDirectory(environment: [String: String]) -> String {
        if let cache = environment["CACHE_DIRECTORY"], !cache.isEmpty {
            return cache.split(separator: ":").first.map(String.init) ?? cache
        }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return xdg + "/parley"
        }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/parley"
    }
}

// MARK: - Loading

extension ParleyConfig {
    /// Reads and checks a config file (read whole, once it has stopped changing:
    /// `ConfigFile.read`). Relative paths inside it are taken from the file's folder.
    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> ParleyConfig {
        let text = try ConfigFile.read(path)
        let folder = (path as NSString).deletingLastPathComponent
        return try parse(text, source: path, baseDirectory: folder.isEmpty ? "." : folder, environment: environment)
    }

    /// Parses and checks TOML text. `source` names it in errors.
    public static func parse(
        _ text: String, source: String, baseDirectory: String = ".",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigError) -> ParleyConfig {
        try rejectUnparseable(text, source: source)
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            // One line, even when the parser quotes a line break it saw.
            let what = error.description.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
            throw ConfigError("\(source): line \(error.source.begin.line): \(what); fix the TOML syntax there")
        } catch {
            throw ConfigError("\(source): not valid TOML: \(error)")
        }
        var config = ParleyConfig(environment: environment)
        let file = Section(table: root, name: nil, source: source, baseDirectory: baseDirectory)
        try file.allowOnly(sections.map(\.name))
        for table in sections {
            if let section = try file.section(table.name) {
                try table.read(section, into: &config)
            }
        }
        return config
    }
}

/// The longest string value a config file may hold: a path's (PATH_MAX).
let maxValueBytes = 4096

/// A value for an error message: quoted, and cut to its first 40 characters when longer, so a
/// message stays one short line.
func quoted(_ value: String) -> String {
    "\"\(excerpt(value))\""
}

/// `value`, cut to its first 40 characters (and "...") when longer, line breaks shown as \n.
func excerpt(_ value: String) -> String {
    let cut = value.count > 40 ? String(value.prefix(40)) + "..." : value
    return cut.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
}

/// The longest path a Unix socket address holds (sun_path, less its terminating NUL).
public let maxSocketPathBytes = 107

/// One table of the config file, read strictly: every key known, every value of its type.
struct Section {
    let table: TOMLTable
    let name: String?
    let source: String
    let baseDirectory: String

    func error(_ key: String, _ problem: String) -> ConfigError {
        ConfigError("\(source): \(qualified(key)) \(problem)")
    }

    private func qualified(_ key: String) -> String {
        let key = excerpt(key)
        guard let name else { return "[\(key)]" }
        return "[\(excerpt(name))] \(key)"
    }

    func allowOnly(_ known: [String]) throws(ConfigError) {
        for key in table.keys.sorted() where !known.contains(key) {
            throw error(key, "is not a known key; remove it or use one of: \(known.joined(separator: ", "))")
        }
    }

    private func value(_ key: String) -> TOMLValue? {
        table[key]?.tomlValue
    }

    private func wrongType(_ key: String, _ expected: String, _ got: TOMLValue) -> ConfigError {
        error(key, "must be \(expected), not a \(got.type)")
    }

    /// Whether the key holds a table.
    func isTable(_ key: String) -> Bool { value(key)?.table != nil }

    /// The section's keys, sorted.
    var keys: [String] { table.keys.sorted() }

    func section(_ key: String) throws(ConfigError) -> Section? {
        guard let value = value(key) else { return nil }
        guard let inner = value.table else {
            throw wrongType(key, "a table", value)
        }
        let innerName = name.map { "\($0).\(key)" } ?? key
        return Section(table: inner, name: innerName, source: source, baseDirectory: baseDirectory)
    }

    func string(_ key: String) throws(ConfigError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.string else { throw wrongType(key, "a string", value) }
        try checkLength(key, string)
        return string
    }

    /// No setting is longer than a path: a longer value is a mistake, refused without being
    /// echoed.
    private func checkLength(_ key: String, _ string: String) throws(ConfigError) {
        guard string.utf8.count <= maxValueBytes else {
            throw error(key, "is a \(string.utf8.count)-byte value starting \(quoted(string)); no setting is that long, so check that line")
        }
    }

    func strings(_ key: String) throws(ConfigError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard let array = value.array else { throw wrongType(key, "a list of strings", value) }
        var strings: [String] = []
        for element in array {
            guard let string = element.tomlValue.string else { throw error(key, "must list strings only") }
            try checkLength(key, string)
            strings.append(string)
        }
        return strings
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.bool else { throw wrongType(key, "true or false", value) }
        return bool
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let int = value.int else { throw wrongType(key, "a whole number", value) }
        guard range.contains(int) else {
            throw error(key, "is \(int); use a value from \(range.lowerBound) to \(range.upperBound)")
        }
        return int
    }

    func float(_ key: String, in range: ClosedRange<Float>) throws(ConfigError) -> Float? {
        try double(key, in: Double(range.lowerBound)...Double(range.upperBound)).map(Float.init)
    }

    /// A number (a whole number is one too), read as written: 0.05 stays 0.05.
    func double(_ key: String, in range: ClosedRange<Double>) throws(ConfigError) -> Double? {
        guard let value = value(key) else { return nil }
        let number: Double
        if let double = value.double {
            number = double
        } else if let int = value.int {
            number = Double(int)
        } else {
            throw wrongType(key, "a number", value)
        }
        guard range.contains(number) else {
            throw error(key, "is \(number); use a value from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A path; `~/` is the home folder and a relative path is taken from the config file's folder.
    func path(_ key: String) throws(ConfigError) -> String? {
        guard let raw = try string(key) else { return nil }
        guard !raw.isEmpty else { throw error(key, "is empty; give a path") }
        let expanded = (raw as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return expanded }
        return (baseDirectory as NSString).appendingPathComponent(expanded)
    }

    func language(_ key: String) throws(ConfigError) -> String? {
        guard let code = try string(key) else { return nil }
        guard Self.isLanguageCode(code) else {
            throw error(key, "is \(quoted(code)); use a two-letter ISO 639-1 code such as \"en\" or \"es\"")
        }
        return code
    }

    /// A whole number in `range` but outside `excluded`, which `problem` explains.
    func int(_ key: String, in range: ClosedRange<Int>, except excluded: Range<Int>, _ problem: String) throws(ConfigError) -> Int? {
        guard let value = try int(key, in: range) else { return nil }
        guard !excluded.contains(value) else { throw error(key, problem) }
        return value
    }

    /// One of `choices`.
    func oneOf(_ key: String, _ choices: [String]) throws(ConfigError) -> String? {
        guard let value = try string(key) else { return nil }
        guard choices.contains(value) else { throw error(key, "is \(quoted(value)); use one of \(choices.joined(separator: ", "))") }
        return value
    }

    /// A path a Unix socket can be bound to.
    func socketPath(_ key: String) throws(ConfigError) -> String? {
        guard let path = try path(key) else { return nil }
        guard path.utf8.count <= maxSocketPathBytes else {
            throw error(key, "is \(path.utf8.count) bytes long; Unix sockets allow \(maxSocketPathBytes), so choose a shorter path")
        }
        return path
    }

    /// An IP address, v4 or v6.
    func ipAddress(_ key: String) throws(ConfigError) -> String? {
        guard let address = try string(key) else { return nil }
        guard !address.isEmpty, address.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "." || $0 == ":") }) else {
            throw error(key, "is \(quoted(address)); give an IP address such as \"127.0.0.1\", \"0.0.0.0\" or \"::\"")
        }
        return address
    }

    static func isLanguageCode(_ code: String) -> Bool {
        code.count == 2 && code.allSatisfy { $0.isASCII && $0.isLowercase }
    }
}
