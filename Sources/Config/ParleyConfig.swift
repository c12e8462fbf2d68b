import Foundation
import ParleyCore
import ParleyEndpoint
import ParleyProtocol  // ControlSocketPath, the default socket the CLI shares
import ParleyRecognition
import TOMLKit

/// A configuration problem, said in one line that names the key or file and what to do.
public struct ConfigError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Which engine speaks a language (`[voice] engine`, `[voice.xx] engine`).
public enum VoiceEngine: String, Sendable, CaseIterable {
    /// The voice heard best per language when installed (docs/benchmarks.md, "Voices a listener
    /// understands"): Festival for English, Italian and Catalan, Piper for a voice a user
    /// installed, espeak-ng elsewhere.
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
        try file.allowOnly(["conversation", "audio", "endpoint", "recognizer", "transcriber", "voice", "translator", "history", "control", "log", "web"])

        if let section = try file.section("conversation") {
            try section.allowOnly(["speaker_a", "speaker_b", "mode", "echo_tail_ms", "min_confidence", "repeat_prompt"])
            config.speakerA = try section.language("speaker_a") ?? config.speakerA
            config.speakerB = try section.language("speaker_b") ?? config.speakerB
            if let mode = try section.string("mode") {
                guard let parsed = ConversationMode(rawValue: mode) else {
                    throw section.error("mode", "is \(quoted(mode)); use \(ConversationMode.spelledOut)")
                }
                config.mode = parsed
            }
            config.echoTailMs = try section.int("echo_tail_ms", in: SettingBounds.echoTailMs) ?? config.echoTailMs
            config.minConfidence = Double(
                try section.float("min_confidence", in: Float(SettingBounds.minConfidence.lowerBound)...Float(SettingBounds.minConfidence.upperBound))
                    ?? Float(config.minConfidence))
            config.repeatPrompt = try section.bool("repeat_prompt") ?? config.repeatPrompt
        }
        guard config.speakerA != config.speakerB else {
            throw ConfigError("\(source): [conversation] speaker_a and speaker_b are both \"\(config.speakerA)\"; give the two speakers different languages")
        }
        if let section = try file.section("audio") {
            try section.allowOnly(["capture_device", "playback_device"])
            config.captureDevice = try section.string("capture_device") ?? config.captureDevice
            config.playbackDevice = try section.string("playback_device") ?? config.playbackDevice
        }
        if let section = try file.section("endpoint") {
            try section.allowOnly([
                "silence_ms", "likely_end_ms", "end_probability", "preroll_ms", "min_speech_ms", "max_speech_ms", "onset_ms", "margin_db",
                "background_below_db", "floor_min_db", "floor_rise_ms", "voice_detector", "speech_threshold", "speech_end_threshold",
            ])
            var endpoint = config.endpoint
            endpoint.silenceMs = try section.int("silence_ms", in: SettingBounds.silenceMs) ?? endpoint.silenceMs
            endpoint.likelyEndMs = try section.int("likely_end_ms", in: 0...10_000) ?? endpoint.likelyEndMs
            endpoint.endProbability = try section.float("end_probability", in: 0...1).map(Double.init) ?? endpoint.endProbability
            endpoint.prerollMs = try section.int("preroll_ms", in: 0...5_000) ?? endpoint.prerollMs
            endpoint.minSpeechMs = try section.int("min_speech_ms", in: 0...10_000) ?? endpoint.minSpeechMs
            endpoint.maxSpeechMs = try section.int("max_speech_ms", in: 500...120_000) ?? endpoint.maxSpeechMs
            endpoint.onsetMs = try section.int("onset_ms", in: 0...2_000) ?? endpoint.onsetMs
            endpoint.marginDB = try section.float("margin_db", in: 0...60) ?? endpoint.marginDB
            endpoint.backgroundBelowDB = try section.float("background_below_db", in: 0...60) ?? endpoint.backgroundBelowDB
            endpoint.floorMinDB = try section.float("floor_min_db", in: -96...0) ?? endpoint.floorMinDB
            endpoint.floorRiseMs = try section.int("floor_rise_ms", in: 100...60_000) ?? endpoint.floorRiseMs
            if let detector = try section.string("voice_detector") {
                guard let choice = VoiceDetectorChoice(rawValue: detector) else {
                    throw section.error("voice_detector", "is \(quoted(detector)); use \"silero\" (a trained detector beside the level) or \"level\" (the level alone)")
                }
                endpoint.voiceDetector = choice
            }
            endpoint.speechThreshold = try section.float("speech_threshold", in: 0...1) ?? endpoint.speechThreshold
            endpoint.speechEndThreshold = try section.float("speech_end_threshold", in: 0...1) ?? endpoint.speechEndThreshold
            guard endpoint.speechEndThreshold <= endpoint.speechThreshold else {
                throw section.error("speech_end_threshold", "is above speech_threshold (\(endpoint.speechThreshold)); speech must start at least as surely as it goes on")
            }
            config.endpoint = endpoint
        }
        if let section = try file.section("recognizer") {
            config.fwdflat = try section.bool("fwdflat") ?? config.fwdflat
            if let limit = try section.int("maxhmmpf", in: -1...1_000_000) {
                guard limit == -1 || limit >= 100 else {
                    throw section.error("maxhmmpf", "must be -1 (no limit) or at least 100; 4000 is the default")
                }
                config.maxHMMsPerFrame = limit
            }
            if let limit = try section.int("maxwpf", in: -1...100_000) {
                guard limit != 0 else { throw section.error("maxwpf", "must be -1 (no limit) or at least 1; 10 is the default") }
                config.maxWordsPerFrame = limit
            }
            for language in section.table.keys.sorted() where !["fwdflat", "maxhmmpf", "maxwpf"].contains(language) {
                guard let model = try section.section(language) else {
                    throw section.error(language, "must be a table [recognizer.\(language)] with acoustic_model, language_model and dictionary")
                }
                guard Section.isLanguageCode(language) else {
                    throw section.error(language, "is not a language code; name the table after a two-letter ISO 639-1 code, as in [recognizer.en]")
                }
                try model.allowOnly(["acoustic_model", "language_model", "dictionary", "vocabulary"])
                let defaults = language == "en" ? RecognizerModel.debianEnglish : nil
                func file(_ key: String, _ fallback: String?) throws(ConfigError) -> String {
                    if let path = try model.path(key) { return path }
                    if let fallback { return fallback }
                    throw model.error(key, "is missing; give the path of the model's \(key.replacingOccurrences(of: "_", with: " "))")
                }
                let languageModel = try file("language_model", defaults?.languageModel)
                // Debian's English language model keeps its likeliest words unless told; any
                // other model, all of them.
                let vocabulary = try model.int("vocabulary", in: 0...10_000_000)
                    ?? (languageModel == RecognizerModel.debianEnglish.languageModel ? RecognizerModel.debianEnglish.vocabulary ?? 0 : 0)
                guard vocabulary == 0 || vocabulary >= 100 else {
                    throw model.error("vocabulary", "must be 0 (every word of the language model) or at least 100; 20000 is English's default")
                }
                let resolved = RecognizerModel(
                    acousticModel: try file("acoustic_model", defaults?.acousticModel),
                    languageModel: languageModel,
                    dictionary: try file("dictionary", defaults?.dictionary),
                    vocabulary: vocabulary == 0 ? nil : vocabulary)
                // A missing file is not an error here: the daemon says so and runs with the
                // languages it has (RecognizerPool).
                config.recognizers[language] = resolved
            }
        }
        if let section = try file.section("transcriber") {
            try config.readTranscriber(section)
        }
        if let section = try file.section("voice") {
            config.voiceEngine = try section.voiceEngine("engine") ?? config.voiceEngine
            for language in section.table.keys.sorted() where language != "engine" {
                guard Section.isLanguageCode(language), let table = try section.section(language) else {
                    throw section.error(language, "must be engine or a table named after a language, as in [voice.es] with engine, voice, rate, pitch, volume")
                }
                try table.allowOnly(["engine", "voice", "rate", "pitch", "volume"])
                var voice = VoiceConfig()
                voice.engine = try table.voiceEngine("engine")
                voice.voice = try table.string("voice")
                voice.rate = try table.int("rate", in: 80...450) ?? voice.rate
                voice.pitch = try table.int("pitch", in: 0...100) ?? voice.pitch
                voice.volume = try table.int("volume", in: 0...200) ?? voice.volume
                config.voices[language] = voice
            }
        }
        if let section = try file.section("translator") {
            try config.readTranslator(section)
        }
        if let section = try file.section("history") {
            try section.allowOnly(["enabled", "path", "max_turns", "max_age_days", "session_gap_minutes"])
            config.historyEnabled = try section.bool("enabled") ?? config.historyEnabled
            config.historyPath = try section.path("path") ?? config.historyPath
            config.historyMaxTurns = try section.int("max_turns", in: 1...10_000_000) ?? config.historyMaxTurns
            config.historyMaxAgeDays = try section.int("max_age_days", in: 1...36_500) ?? config.historyMaxAgeDays
            config.sessionGapMinutes = try section.int("session_gap_minutes", in: 1...10_080) ?? config.sessionGapMinutes
        }
        if let section = try file.section("control") {
            try section.allowOnly(["socket", "group", "idle_timeout_seconds"])
            config.controlSocket = try section.path("socket") ?? config.controlSocket
            config.controlGroup = try section.string("group") ?? config.controlGroup
            config.controlIdleTimeoutSeconds = try section.int("idle_timeout_seconds", in: 1...86_400) ?? config.controlIdleTimeoutSeconds
            if config.controlSocket.utf8.count > maxSocketPathBytes {
                throw section.error(
                    "socket", "is \(config.controlSocket.utf8.count) bytes long; Unix sockets allow \(maxSocketPathBytes), so choose a shorter path")
            }
        }
        if let section = try file.section("log") {
            try section.allowOnly(["level", "transcripts"])
            config.logTranscripts = try section.bool("transcripts") ?? config.logTranscripts
            if let level = try section.string("level") {
                let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
                guard levels.contains(level) else {
                    throw section.error("level", "is \(quoted(level)); use one of \(levels.joined(separator: ", "))")
                }
                config.logLevel = level
            }
        }
        if let section = try file.section("web") {
            try config.readWeb(section)
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
        guard let value = value(key) else { return nil }
        let number: Double
        if let double = value.double {
            number = double
        } else if let int = value.int {
            number = Double(int)
        } else {
            throw wrongType(key, "a number", value)
        }
        guard range.contains(Float(number)) else {
            throw error(key, "is \(number); use a value from \(range.lowerBound) to \(range.upperBound)")
        }
        return Float(number)
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

    func voiceEngine(_ key: String) throws(ConfigError) -> VoiceEngine? {
        guard let name = try string(key) else { return nil }
        guard let engine = VoiceEngine(rawValue: name) else {
            throw error(key, "is \(quoted(name)); use \(VoiceEngine.allCases.map { quoted($0.rawValue) }.joined(separator: ", "))")
        }
        return engine
    }

    static func isLanguageCode(_ code: String) -> Bool {
        code.count == 2 && code.allSatisfy { $0.isASCII && $0.isLowercase }
    }
}
