import Foundation
import ParleyCore
import Testing
@testable import ParleyConfig
@testable import ParleyConversation
import ParleyEndpoint
import ParleyRecognition

/// Parses `text` as a config file in /etc/parley.
func parseConfig(_ text: String, environment: [String: String]) throws(ConfigError) -> ParleyConfig {
    try ParleyConfig.parse(text, source: "test.toml", baseDirectory: "/etc/parley", environment: environment)
}

/// The error message for `text`, or nil when it parses.
func configError(_ text: String, environment: [String: String]) -> String? {
    do {
        _ = try parseConfig(text, environment: environment)
        return nil
    } catch {
        return error.description
    }
}

@Suite("Config")
struct ConfigTests {
    let environment = ["HOME": "/home/someone", "XDG_RUNTIME_DIR": "/run/user/1000"]

    private func parse(_ text: String) throws(ConfigError) -> ParleyConfig {
        try parseConfig(text, environment: environment)
    }

    private func error(_ text: String) -> String? { configError(text, environment: environment) }

    @Test func emptyFileGivesTheDefaults() throws {
        let config = try parse("")
        #expect(config.speakerA == "en" && config.speakerB == "es")
        #expect(config.mode == .auto, "auto is the default: with one side hearable it takes turns")
        #expect(config.captureDevice == "default" && config.playbackDevice == "default")
        #expect(config.endpoint.silenceMs == 1500)
        #expect(config.historyPath == "/home/someone/.local/state/parley/history.sqlite")
        #expect(config.controlSocket == "/run/user/1000/parley/control.sock")
        #expect(config.recognizerModel(for: "en") == .debianEnglish)
        #expect(config.recognizerModel(for: "es") == nil)
    }

    @Test func theShippedConfigParses() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/parley.toml").path
        let config = try ParleyConfig.load(path: path, environment: environment)
        #expect(config.speakerA == "en" && config.speakerB == "es")
        #expect(config.recognizers["en"] == .debianEnglish)
    }

    @Test func keysAreRead() throws {
        let config = try parse(
            """
            [conversation]
            speaker_a = "es"
            speaker_b = "en"
            mode = "one-way"
            [audio]
            capture_device = "plughw:1,0"
            [endpoint]
            silence_ms = 900
            margin_db = 10
            [history]
            path = "history.sqlite"
            enabled = false
            max_turns = 500
            max_age_days = 30
            session_gap_minutes = 5
            [control]
            socket = "/tmp/p.sock"
            """)
        #expect(config.speakerA == "es" && config.speakerB == "en")
        #expect(config.mode == .oneWay)
        #expect(config.captureDevice == "plughw:1,0")
        #expect(config.endpoint.silenceMs == 900)
        #expect(config.endpoint.marginDB == 10)
        #expect(config.historyPath == "/etc/parley/history.sqlite")
        #expect(!config.historyEnabled)
        #expect(config.historyMaxTurns == 500 && config.historyMaxAgeDays == 30 && config.sessionGapMinutes == 5)
        #expect(config.controlSocket == "/tmp/p.sock")
    }

    @Test func transcriptsAreOffAndIdleConnectionsClosedByDefault() throws {
        let defaults = try parse("")
        #expect(!defaults.logTranscripts)
        #expect(defaults.controlIdleTimeoutSeconds == 30)
        let config = try parse("[log]\ntranscripts = true\n[control]\nidle_timeout_seconds = 5")
        #expect(config.logTranscripts && config.controlIdleTimeoutSeconds == 5)
        #expect(error("[log]\ntranscripts = \"yes\"")?.contains("[log] transcripts must be true or false") == true)
        #expect(error("[control]\nidle_timeout_seconds = 0")?.contains("[control] idle_timeout_seconds is 0; use a value from 1") == true)
        // The shipped configs name both keys, at their defaults.
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config")
        for name in ["parley.toml", "demo.toml"] {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            #expect(text.contains("transcripts = false"), "\(name)")
            #expect(!(try ParleyConfig.load(path: folder.appendingPathComponent(name).path, environment: environment).logTranscripts))
        }
    }

    @Test func recognizerSearchKeysAreReadAndChecked() throws {
        #expect(try parse("").maxHMMsPerFrame == 4_000)
        #expect(try parse("").fwdflat == false)
        let config = try parse("[recognizer]\nfwdflat = true\nmaxhmmpf = -1")
        #expect(config.fwdflat && config.maxHMMsPerFrame == -1)
        #expect(error("[recognizer]\nmaxhmmpf = 10")?.contains("[recognizer] maxhmmpf must be -1 (no limit) or at least 100") == true)
        #expect(error("[recognizer]\nmaxhmmpf = \"many\"")?.contains("[recognizer] maxhmmpf") == true)
        #expect(try parse("").maxWordsPerFrame == 10)
        #expect(try parse("[recognizer]\nmaxwpf = -1").maxWordsPerFrame == -1)
        #expect(error("[recognizer]\nmaxwpf = 0")?.contains("[recognizer] maxwpf must be -1 (no limit) or at least 1") == true)
    }

    @Test func answerAfterIsReadPerLanguageAndChecked() throws {
        #expect(try parse("").endpoint.answerAfterMs == ["es": 800])
        #expect(try parse("[endpoint]\nanswer_after_ms = { es = 600, pt = 900 }").endpoint.answerAfterMs == ["es": 600, "pt": 900])
        #expect(try parse("[endpoint]\nanswer_after_ms = {}").endpoint.answerAfterMs == [:])
        #expect(error("[endpoint]\nanswer_after_ms = 800")?.contains("[endpoint] answer_after_ms must be a table") == true)
        #expect(error("[endpoint]\nanswer_after_ms = { spanish = 800 }")?.contains("spanish is not a language code") == true)
        #expect(error("[endpoint]\nanswer_after_ms = { es = -1 }")?.contains("[endpoint.answer_after_ms] es is -1") == true)
    }

    /// Whisper leaves a core to the capture and the lanes unless told how many threads to take.
    @Test func whisperTakesEveryCoreButOneUnlessToldHowMany() throws {
        let shipped = try parse("").transcriber
        #expect(shipped.threads == 0)
        #expect(shipped.whisperThreads(cores: 2) == 1)
        #expect(shipped.whisperThreads(cores: 4) == 3)
        #expect(shipped.whisperThreads(cores: 1) == 1)
        #expect(try parse("[transcriber]\nthreads = 2").transcriber.whisperThreads(cores: 2) == 2)
    }

    @Test func unknownKeyIsNamed() {
        let message = error("[audio]\ncapture_devise = \"hw:0\"")
        #expect(message?.contains("[audio] capture_devise") == true)
        #expect(message?.contains("capture_device") == true)
    }

    @Test func unknownSectionIsNamed() {
        #expect(error("[audoi]\n")?.contains("[audoi] is not a known key") == true)
    }

    @Test func wrongTypeIsNamed() {
        let message = error("[endpoint]\nsilence_ms = \"long\"")
        #expect(message?.contains("[endpoint] silence_ms must be a whole number") == true)
    }

    @Test func outOfRangeIsNamed() {
        #expect(error("[endpoint]\nsilence_ms = 0")?.contains("use a value from") == true)
    }

    @Test func badModeSaysWhichModesExist() {
        #expect(error("[conversation]\nmode = \"chat\"")?.contains("\"alternate\", \"one-way\" or \"manual\"") == true)
    }

    @Test func badLanguageCodeIsRejected() {
        #expect(error("[conversation]\nspeaker_b = \"spanish\"")?.contains("[conversation] speaker_b") == true)
    }

    @Test func sameLanguageTwiceIsRejected() {
        #expect(error("[conversation]\nspeaker_a = \"es\"")?.contains("both \"es\"") == true)
    }

    /// A missing model file does not stop the config: the daemon names it and runs with the
    /// other language (ModelCheckTests).
    @Test func missingModelFileIsNamed() throws {
        let config = try parse(
            """
            [recognizer.en]
            acoustic_model = "/nonexistent/en-us"
            """)
        let model = try #require(config.recognizers["en"])
        let message = model.missingFileProblem(language: "en")
        #expect(message?.contains("[recognizer.en] acoustic_model") == true)
        #expect(message?.contains("/nonexistent/en-us") == true)
        #expect(message?.contains("parleyd model check /nonexistent") == true)
        #expect(RecognizerModel.debianEnglish.missingFileProblem(language: "en") == nil)
    }

    /// Debian's English model keeps its 20,000 likeliest words unless told; any other model
    /// keeps them all.
    @Test func theVocabularyIsEnglishsLikeliestWordsUnlessTold() throws {
        #expect(RecognizerModel.debianEnglish.vocabulary == 20_000)
        #expect(try parse("[recognizer.en]\nacoustic_model = \"/a\"").recognizers["en"]?.vocabulary == 20_000)
        #expect(try parse("[recognizer.en]\nvocabulary = 0").recognizers["en"]?.vocabulary == nil)
        #expect(try parse("[recognizer.en]\nvocabulary = 5000").recognizers["en"]?.vocabulary == 5_000)
        let own = try parse("[recognizer.en]\nlanguage_model = \"/m/en.lm.bin\"").recognizers["en"]
        #expect(own?.vocabulary == nil, "another language model keeps every word")
        let spanish = try parse("[recognizer.es]\nacoustic_model = \"/a\"\nlanguage_model = \"/l\"\ndictionary = \"/d\"\nvocabulary = 300")
        #expect(spanish.recognizers["es"]?.vocabulary == 300)
        #expect(error("[recognizer.en]\nvocabulary = 50")?.contains("[recognizer.en] vocabulary must be 0") == true)
    }

    @Test func aNewLanguageNeedsAllThreeFiles() {
        #expect(error("[recognizer.es]\nacoustic_model = \"/usr\"")?.contains("[recognizer.es] language_model is missing") == true)
    }

    @Test func voicesAreReadAndChecked() throws {
        let config = try parse("[voice.es]\nvoice = \"es\"\nrate = 200\npitch = 40\nvolume = 120")
        #expect(config.voices["es"]?.rate == 200 && config.voices["es"]?.pitch == 40 && config.voices["es"]?.volume == 120)
        #expect(error("[voice.es]\nrate = 1000")?.contains("[voice.es] rate") == true)
        #expect(error("[voice.es]\nspeed = 2")?.contains("speed") == true)
    }

    @Test func voiceEnginesAreReadAndChecked() throws {
        #expect(try parse("").voiceEngine == .auto)
        let config = try parse("[voice]\nengine = \"espeak-ng\"\n[voice.it]\nengine = \"festival\"")
        #expect(config.voiceEngine == .espeak)
        #expect(config.voices["it"]?.engine == .festival)
        #expect(config.voices["en"]?.engine == nil)
        #expect(error("[voice]\nengine = \"mbrola\"")?.contains("[voice] engine is \"mbrola\"; use \"auto\", \"espeak-ng\", \"festival\"") == true)
        #expect(error("[voice]\nspeed = 2")?.contains("must be engine or a table named after a language") == true)
    }

    @Test func syntaxErrorsGiveTheLine() {
        #expect(error("[audio]\ncapture_device = ")?.contains("line 2") == true)
    }

    @Test func missingFileSaysSo() {
        #expect(throws: ConfigError.self) { try ParleyConfig.load(path: "/nonexistent/parley.toml") }
    }

    @Test func systemdDirectoriesWin() {
        let config = ParleyConfig(environment: ["STATE_DIRECTORY": "/var/lib/parley", "RUNTIME_DIRECTORY": "/run/parley", "HOME": "/"])
        #expect(config.historyPath == "/var/lib/parley/history.sqlite")
        #expect(config.controlSocket == "/run/parley/control.sock")
    }
}
