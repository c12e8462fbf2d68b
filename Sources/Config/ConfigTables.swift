import Foundation
import ParleyCore
import ParleyEndpoint
import ParleyRecognition

/// Every key of the config file, one line each, table by table: name, field (whose initial value
/// is the default), bounds, and whether a reload applies it at once. config/parley.toml documents
/// each beside its default; a test checks that the two name the same keys.
extension ParleyConfig {
    public static let sections: [ConfigTable<ParleyConfig>] = [
        ConfigTable("conversation", [
            .language("speaker_a", \.speakerA, .set(\.speakerA)),
            .language("speaker_b", \.speakerB, .set(\.speakerB)),
            .choice("mode", \.mode, use: ConversationMode.spelledOut, .set(\.mode)),
            .int("echo_tail_ms", \.echoTailMs, in: SettingBounds.echoTailMs, .set(\.echoTailMs)),
            .double("min_confidence", \.minConfidence, in: SettingBounds.minConfidence, .set(\.minConfidence)),
            .bool("repeat_prompt", \.repeatPrompt),
        ], check: { section, config throws(ConfigError) in
            guard config.speakerA != config.speakerB else {
                throw ConfigError(
                    "\(section.source): [conversation] speaker_a and speaker_b are both \"\(config.speakerA)\"; give the two speakers different languages")
            }
        }),
        ConfigTable("audio", [
            .string("capture_device", \.captureDevice),
            .string("playback_device", \.playbackDevice),
            .bool("echo_cancel", \.echoCancel),
        ]),
        ConfigTable("endpoint", [
            .int("silence_ms", \.endpoint.silenceMs, in: SettingBounds.silenceMs, .set(\.silenceMs)),
            .int("likely_end_ms", \.endpoint.likelyEndMs, in: 0...10_000),
            .key("answer_after_ms", \.endpoint.answerAfterMs) { section, key throws(ConfigError) in
                guard let waits = try section.section(key) else { return nil }
                var answerAfterMs: [String: Int] = [:]
                for language in waits.keys {
                    guard Section.isLanguageCode(language) else {
                        throw waits.error(language, "is not a language code; name each language by its two-letter ISO 639-1 code, as in { es = 800 }")
                    }
                    answerAfterMs[language] = try waits.int(language, in: 0...SettingBounds.silenceMs.upperBound)
                }
                return answerAfterMs
            },
            .double("end_probability", \.endpoint.endProbability, in: 0...1),
            .double("slow_speech_below", \.endpoint.slowSpeechBelow, in: 0...20),
            .int("preroll_ms", \.endpoint.prerollMs, in: 0...5_000),
            .int("min_speech_ms", \.endpoint.minSpeechMs, in: 0...10_000),
            .int("max_speech_ms", \.endpoint.maxSpeechMs, in: 500...120_000),
            .int("onset_ms", \.endpoint.onsetMs, in: 0...2_000),
            .float("margin_db", \.endpoint.marginDB, in: 0...60),
            .float("background_below_db", \.endpoint.backgroundBelowDB, in: 0...60),
            .float("floor_min_db", \.endpoint.floorMinDB, in: -96...0),
            .int("floor_rise_ms", \.endpoint.floorRiseMs, in: 100...60_000),
            .choice("voice_detector", \.endpoint.voiceDetector, use: "\"silero\" (a trained detector beside the level) or \"level\" (the level alone)"),
            .float("speech_threshold", \.endpoint.speechThreshold, in: 0...1),
            .float("speech_end_threshold", \.endpoint.speechEndThreshold, in: 0...1),
        ], check: { section, config throws(ConfigError) in
            guard config.endpoint.speechEndThreshold <= config.endpoint.speechThreshold else {
                throw section.error(
                    "speech_end_threshold", "is above speech_threshold (\(config.endpoint.speechThreshold)); speech must start at least as surely as it goes on")
            }
        }),
        ConfigTable("recognizer", [
            .bool("fwdflat", \.fwdflat),
            .key("maxhmmpf", \.maxHMMsPerFrame) { section, key throws(ConfigError) in
                try section.int(key, in: -1...1_000_000, except: 0..<100, "must be -1 (no limit) or at least 100; 4000 is the default")
            },
            .key("maxwpf", \.maxWordsPerFrame) { section, key throws(ConfigError) in
                try section.int(key, in: -1...100_000, except: 0..<1, "must be -1 (no limit) or at least 1; 10 is the default")
            },
            .languageTables(
                \.recognizers, recognizerModelTable, make: { ModelFiles(language: $0) },
                finish: { section, files throws(ConfigError) in try files.resolved(section) }),
        ]),
        ConfigTable("transcriber", [
            .bool("enabled", \.transcriber.enabled),
            .path("engines", \.transcriber.engines),
            .key("server", \.transcriber.server) { section, key throws(ConfigError) in
                guard let server = try section.string(key), !server.isEmpty else { return nil }
                guard TranscriberConfig.address(of: server) != nil else {
                    throw section.error(key, "is \(quoted(server)); give a Wyoming server as \"tcp://HOST:PORT\", or \"\" for the local worker")
                }
                return .some(server)
            },
            .int("beam_size", \.transcriber.beamSize, in: 1...10),
            .int("threads", \.transcriber.threads, in: 0...64),
            .bool("moonshine_one_thread", \.transcriber.moonshineOneThread),
            .int("timeout_ms", \.transcriber.timeoutMs, in: 1_000...600_000),
            .path("python", \.transcriber.python),
        ]),
        ConfigTable("voice", [
            .choice("engine", \.voiceEngine, use: VoiceEngine.spelledOut),
            .languageTables(\.voices, voiceTable, make: { _ in VoiceConfig() }),
        ]),
        ConfigTable("translator", [
            .key("backends", \.translatorBackends) { section, key throws(ConfigError) in try section.backends(key) },
            .path("apertium_modes", \.apertiumModesDirectory),
            .int("timeout_ms", \.translationTimeoutMs, in: 100...120_000),
            .int("deadline_ms", \.translationDeadlineMs, in: 100...120_000),
            .bool("keep_unknown_marks", \.keepUnknownMarks),
            .bool("failure_notice", \.failureNotice),
            .int("cache_size", \.translationCacheSize, in: 0...100_000),
            .bool("bergamot", \.bergamotEnabled),
            .path("engines", \.translatorEngines),
            .table(TranslatorBackend.libreTranslate.rawValue, \.libreTranslate, httpBackendTable),
            .table(TranslatorBackend.apertiumApy.rawValue, \.apertiumApy, httpBackendTable),
        ]),
        ConfigTable("history", [
            .bool("enabled", \.historyEnabled),
            .path("path", \.historyPath),
            .int("max_turns", \.historyMaxTurns, in: 1...10_000_000),
            .int("max_age_days", \.historyMaxAgeDays, in: 1...36_500),
            .int("session_gap_minutes", \.sessionGapMinutes, in: 1...10_080),
        ]),
        ConfigTable("control", [
            .key("socket", \.controlSocket) { section, key throws(ConfigError) in try section.socketPath(key) },
            .string("group", \.controlGroup),
            .int("idle_timeout_seconds", \.controlIdleTimeoutSeconds, in: 1...86_400),
        ]),
        ConfigTable("log", [
            .key("level", \.logLevel, .atOnce) { section, key throws(ConfigError) in try section.oneOf(key, logLevels) },
            .bool("transcripts", \.logTranscripts, .atOnce),
        ]),
        ConfigTable("web", [
            .bool("enabled", \.web.enabled),
            .key("listen", \.web.listen) { section, key throws(ConfigError) in try section.ipAddress(key) },
            .int("port", \.web.port, in: 0...65_535),
            .choice("pairing", \.web.pairing, use: "\"code\" or \"read-only\""),
        ]),
    ]

    /// `[voice.<lang>]`: how one language is spoken.
    static let voiceTable = ConfigTable<VoiceConfig>("voice.<lang>", [
        .choice("engine", \.engine, use: VoiceEngine.spelledOut),
        .string("voice", \.voice),
        .int("rate", \.rate, in: 80...450),
        .int("pitch", \.pitch, in: 0...100),
        .int("volume", \.volume, in: 0...200),
    ])

    /// `[recognizer.<lang>]`: a PocketSphinx model's files.
    static let recognizerModelTable = ConfigTable<ModelFiles>("recognizer.<lang>", [
        .path("acoustic_model", \.acousticModel),
        .path("language_model", \.languageModel),
        .path("dictionary", \.dictionary),
        .int("vocabulary", \.vocabulary, in: 0...10_000_000),
    ])

    /// `[translator.libretranslate]`, `[translator.apertium-apy]`.
    static let httpBackendTable = ConfigTable<HTTPBackendConfig>("translator.<backend>", [
        .key("url", \.url) { section, key throws(ConfigError) in try section.httpURL(key) },
        .int("timeout_ms", \.timeoutMs, in: 100...120_000),
        .key("api_key_file", \.apiKey) { section, key throws(ConfigError) in try section.path(key).map { .some(.file($0)) } },
        .key("api_key_credential", \.apiKey) { section, key throws(ConfigError) in try section.credential(key).map { .some(.credential($0)) } },
    ], check: { section, backend throws(ConfigError) in
        if try section.path("api_key_file") != nil, try section.string("api_key_credential") != nil {
            throw section.error("api_key_file", "and api_key_credential are both set; keep one")
        }
    })

    static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
}

/// `[recognizer.<lang>]` as written: the files, before the language's defaults fill what is left out.
struct ModelFiles: Sendable {
    let language: String
    var acousticModel, languageModel, dictionary: String?
    var vocabulary: Int?

    init(language: String) { self.language = language }

    /// The model, English's files standing in for the ones an `[recognizer.en]` leaves out.
    /// A missing file is not an error here: the daemon says so and runs with the languages it
    /// has (RecognizerPool).
    func resolved(_ table: Section) throws(ConfigError) -> RecognizerModel {
        let defaults = language == "en" ? RecognizerModel.debianEnglish : nil
        func file(_ key: String, _ value: String?, _ fallback: String?) throws(ConfigError) -> String {
            if let path = value ?? fallback { return path }
            throw table.error(key, "is missing; give the path of the model's \(key.replacingOccurrences(of: "_", with: " "))")
        }
        let languageModel = try file("language_model", languageModel, defaults?.languageModel)
        // Debian's English language model keeps its likeliest words unless told; any other
        // model, all of them.
        let english = RecognizerModel.debianEnglish
        let vocabulary = vocabulary ?? (languageModel == english.languageModel ? english.vocabulary ?? 0 : 0)
        guard vocabulary == 0 || vocabulary >= 100 else {
            throw table.error("vocabulary", "must be 0 (every word of the language model) or at least 100; 20000 is English's default")
        }
        return RecognizerModel(
            acousticModel: try file("acoustic_model", acousticModel, defaults?.acousticModel), languageModel: languageModel,
            dictionary: try file("dictionary", dictionary, defaults?.dictionary), vocabulary: vocabulary == 0 ? nil : vocabulary)
    }
}
