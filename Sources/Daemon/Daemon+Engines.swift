import Foundation
import Logging
import ParleyConfig
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import ParleySynthesis
import ParleyTranslation

/// Building the engines, the history store and the folders from the config; each failure is a
/// `DaemonFailure` that says what to do.
extension Daemon {
    static func loadConfig(_ options: DaemonOptions) throws(DaemonFailure) -> ParleyConfig {
        guard let path = options.configPath else { return ParleyConfig() }
        do {
            return try ParleyConfig.load(path: path)
        } catch {
            throw DaemonFailure(.config, error.description)
        }
    }

    /// The backends of `[translator] backends`, in order, behind one chain. Apertium goes
    /// through a pivot where Debian has no direct pair, or where a pivot measured clearly better
    /// (`RoutePlanner`); the pipelines of every leg of both directions start now, warm. With
    /// Bergamot installed and on (`[translator] bergamot`), a "bergamot" backend comes just
    /// before Apertium's: it takes the directions whose best route uses a Bergamot model (alone,
    /// or joined to Apertium legs), and when it fails the turn goes to Apertium's own route
    /// (one log line says so). That route stands by (`TranslatorChain.Backend.standby`): its
    /// pipelines start with the first turn that needs them, not at start-up.
    static func makeTranslator(
        _ config: ParleyConfig, clock: ParleyClock = .continuous, environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger? = nil
    ) throws(DaemonFailure) -> TranslatorChain {
        var backends: [TranslatorChain.Backend] = []
        let pairs = [LanguagePair(config.speakerA, config.speakerB), LanguagePair(config.speakerB, config.speakerA)]
        for backend in config.translatorBackends {
            let name = backend.rawValue
            do {
                switch backend {
                case .apertium:
                    let modes = config.apertiumModesDirectory
                    let bergamotFolder = bergamotInstalled(config, logger: logger)
                    // The models a user installed come first: a direction they have replaces the shipped one.
                    let userModels = ParleyConfig.translationModelDirectories(environment: environment)
                    let models = bergamotFolder.map { userModels + [$0 + "/models"] }
                    let planner = RoutePlanner(
                        offers: { leg in
                            switch leg.engine {
                            case .apertium: ApertiumTranslator.modeFile(for: leg.pair, modesDirectory: modes) != nil
                            case .bergamot: models.map { BergamotTranslator.hasModel(for: leg.pair, in: $0) } ?? false
                            }
                        }, engines: models == nil ? [.apertium] : TranslationEngine.allCases)
                    // Alone, Apertium (with Bergamot) must have a route for the speakers' pairs;
                    // in a chain, a missing one is left to the other backends.
                    if config.translatorBackends.count == 1, let missing = pairs.first(where: { planner.route(for: $0) == nil }) {
                        throw ConfigError(
                            TranslationHints.missingRoute(source: missing.source, target: missing.target) {
                                planner.installed(LanguagePair($0, $1))
                            })
                    }
                    var legs: [TranslationLeg] = []
                    for leg in pairs.compactMap({ planner.route(for: $0) }).flatMap(\.legs) where !legs.contains(leg) { legs.append(leg) }
                    let apertium = try ApertiumTranslator(
                        pairs: legs.filter { $0.engine == .apertium }.map(\.pair), modesDirectory: modes, timeoutMs: config.translationTimeoutMs,
                        keepUnknownMarks: config.keepUnknownMarks)
                    if let bergamotFolder {
                        let bergamot = BergamotTranslator(
                            folder: bergamotFolder, userModels: userModels, python: config.transcriber.python, warming: legs.filter { $0.engine == .bergamot }.map(\.pair),
                            timeoutMs: bergamotTimeoutMs(config), notice: { line in logger?.notice("\(line)") })
                        backends.append(
                            .init(
                                name: TranslationEngine.bergamot.rawValue,
                                translator: RoutedTranslator(engines: [.apertium: apertium, .bergamot: bergamot], home: .bergamot, requiring: .bergamot)))
                    }
                    // Behind Bergamot, Apertium's own routes stand by: started by the first turn Bergamot fails.
                    backends.append(.init(name: name, translator: RoutedTranslator(base: apertium), standby: bergamotFolder != nil))
                case .libreTranslate, .apertiumApy:
                    let settings = backend == .libreTranslate ? config.libreTranslate : config.apertiumApy
                    guard let url = URL(string: settings.url) else { throw ConfigError("url \(settings.url) is not a URL") }
                    let key = try settings.apiKey?.read(environment: environment)
                    let translator: any Translator =
                        backend == .libreTranslate
                        ? LibreTranslateTranslator(url: url, timeoutMs: settings.timeoutMs, apiKey: key)
                        : ApyTranslator(url: url, timeoutMs: settings.timeoutMs, apiKey: key, keepUnknownMarks: config.keepUnknownMarks)
                    backends.append(.init(name: name, translator: translator))
                }
            } catch {
                throw DaemonFailure(.config, "[translator] \(name): \(error)")
            }
        }
        return TranslatorChain(
            backends, timing: .init(deadline: .milliseconds(config.translationDeadlineMs), clock: clock), cacheCapacity: config.translationCacheSize,
            fellBack: { line in logger?.warning("\(line)") })
    }

    /// Bergamot's folder when it is on and installed (its worker, models and fxtranslate);
    /// else nil, and one line says why when the config names an engines folder (when it names
    /// none, `bergamotAbsence` says it once the devices are open).
    static func bergamotInstalled(_ config: ParleyConfig, logger: Logger?) -> String? {
        guard let folder = config.bergamotFolder else { return nil }
        let files = [folder + "/parley-bergamot", folder + "/python/fxtranslate", config.transcriber.python]
        if let missing = files.first(where: { !FileManager.default.fileExists(atPath: $0) }) {
            logger?.warning("Bergamot is not installed (no \(missing)): run `make engines` (or set [translator] bergamot = false); Apertium translates alone")
            return nil
        }
        return folder
    }

    /// The line that says Bergamot is on but found in none of the engine folders (nil when it
    /// is off or found). Said after the devices open, so a start that fails there says one line.
    static func bergamotAbsence(_ config: ParleyConfig) -> String? {
        guard config.bergamotEnabled, config.bergamotFolder == nil, config.translatorBackends.contains(.apertium) else { return nil }
        return "Bergamot is not installed (no \(TranscriberConfig.searchPath.map { $0 + "/bergamot" }.joined(separator: " or "))); Apertium translates alone"
    }

    /// How long the Bergamot worker may take over a sentence: `[translator] timeout_ms`, but at
    /// most half the turn's `deadline_ms`, so that a hung worker is given up (and replaced)
    /// before the chain's deadline, and the Apertium legs of its route have time too. A
    /// sentence takes 15-60 ms here (docs/benchmarks.md, "Bergamot").
    static func bergamotTimeoutMs(_ config: ParleyConfig) -> Int {
        max(50, min(config.translationTimeoutMs, config.translationDeadlineMs / 2))
    }

    static func makeSynthesizer(_ config: ParleyConfig) throws(DaemonFailure) -> EspeakSynthesizer {
        let synthesizer: EspeakSynthesizer
        do {
            synthesizer = try EspeakSynthesizer()
        } catch {
            throw DaemonFailure(.runtime, error.description)
        }
        synthesizer.voices = config.voices.mapValues {
            VoiceSettings(voice: $0.voice, rate: $0.rate, pitch: $0.pitch, volume: $0.volume)
        }
        for (language, voice) in config.voices {
            if let name = voice.voice, !synthesizer.canLoad(voice: name) {
                throw DaemonFailure(.config, "[voice.\(language)] voice \"\(name)\" is not installed; pick one from `espeak-ng --voices`")
            }
        }
        // A language espeak-ng has no voice for speaks with the table's stand-in (Galician
        // with the Portuguese voice), unless [voice.xx] names one.
        for language in LanguageTable.offline where language.voiceStandsIn && !synthesizer.hasVoice(for: language.code) {
            if synthesizer.voices[language.code]?.voice == nil, synthesizer.canLoad(voice: language.voice) {
                synthesizer.voices[language.code, default: VoiceSettings()].voice = language.voice
            }
        }
        for language in [config.speakerA, config.speakerB] where !speakable(language, by: synthesizer) {
            throw DaemonFailure(
                .config, "[conversation]: espeak-ng has no voice for \"\(language)\"; pick a language from `espeak-ng --voices`")
        }
        return synthesizer
    }

    /// The languages Festival is to speak under `config` (`[voice] engine` and each
    /// `[voice.xx] engine`), with its voice for each, installed or not; none of `piper`, the
    /// languages Piper speaks.
    static func festivalChoice(_ config: ParleyConfig, piper: Set<String> = []) -> [String: FestivalVoice] {
        FestivalVoice.table.filter { language, _ in
            guard !piper.contains(language) else { return false }
            switch config.voices[language]?.engine ?? config.voiceEngine {
            case .auto: return FestivalVoice.heardBetter.contains(language)
            case .festival: return true
            case .espeak, .piper: return false
            }
        }
    }

    /// The languages Festival speaks: those `config` gives it whose voice is installed, with
    /// Festival itself, but none of `piper`. What is missing is said in one line (`report`), with
    /// what to install; espeak-ng speaks those languages.
    static func festivalVoices(
        _ config: ParleyConfig, piper: Set<String> = [], report: ((String) -> Void)?, festivalInstalled: Bool = FestivalVoice.festivalInstalled,
        installed: (FestivalVoice) -> Bool = { $0.isInstalled }
    ) -> [String: FestivalVoice] {
        let chosen = festivalChoice(config, piper: piper)
        guard !chosen.isEmpty else { return [:] }
        let sorted = chosen.values.sorted { $0.language < $1.language }
        guard festivalInstalled else {
            let packages = ["festival"] + sorted.map(\.package)
            report?("Festival is not installed, so espeak-ng speaks \(sorted.map(\.language).joined(separator: ", ")): install \(packages.joined(separator: " ")) (make deps), or set [voice] engine = \"espeak-ng\"")
            return [:]
        }
        let missing = sorted.filter { !installed($0) }
        if !missing.isEmpty {
            report?("Festival has no voice for \(missing.map(\.language).joined(separator: ", ")), so espeak-ng speaks it: install \(missing.map(\.package).joined(separator: " ")) (make deps)")
        }
        return chosen.filter { installed($0.value) }
    }

    /// espeak-ng, with Festival in front of it for the languages it speaks, and Piper in front
    /// of both for its languages; espeak-ng alone when neither speaks any. Each is started now
    /// (warm for the first sentence) when a speaker's language is one of its, else at its first
    /// sentence (after a language change): a Festival kept for Italian and Catalan costs 45-65
    /// MiB that an English-Spanish conversation does not use.
    static func withVoices(_ espeak: EspeakSynthesizer, _ config: ParleyConfig, logger: Logger) -> any SpeechSynthesizer {
        let speakers: Set<String> = [config.speakerA, config.speakerB]
        let piper = piperVoices(config, report: { logger.warning("\($0)") })
        let voices = festivalVoices(config, piper: Set(piper.keys), report: { logger.warning("\($0)") })
        var synthesizer: any SpeechSynthesizer = espeak
        if !voices.isEmpty {
            let festival = FestivalSynthesizer(espeak: espeak, festivalVoices: voices, report: { logger.warning("\($0)") })
            if !speakers.isDisjoint(with: voices.keys) { festival.prepare() }
            logger.info("Festival speaks \(voices.keys.sorted().map { "\($0) (\(voices[$0]?.name ?? ""))" }.joined(separator: ", "))")
            synthesizer = festival
        }
        if let folder = piperFolder(config), !piper.isEmpty {
            let voice = PiperSynthesizer(
                fallback: synthesizer, piperVoices: piper, folder: folder, python: config.transcriber.python, report: { logger.warning("\($0)") })
            if !speakers.isDisjoint(with: piper.keys) { voice.prepare() }
            logger.info("Piper speaks \(piper.keys.sorted().map { "\($0) (\(piper[$0]?.name ?? ""))" }.joined(separator: ", "))")
            synthesizer = voice
        }
        return synthesizer
    }

    /// Piper's folder in the engines folder (its worker, piper-tts and ONNX Runtime, its
    /// voices), when it is installed.
    static func piperFolder(_ config: ParleyConfig) -> String? {
        guard let folder = config.transcriber.enginesFolder.map({ $0 + "/piper" }) else { return nil }
        let files = [folder + "/parley-piper", folder + "/python/piper", folder + "/python/onnxruntime", config.transcriber.python]
        return files.allSatisfy { FileManager.default.fileExists(atPath: $0) } ? folder : nil
    }

    /// The Piper voices installed, per language: those a user installed (`parleyd model
    /// install-voice`, in `ParleyConfig.voiceDirectories`) first, then those in Piper's folder
    /// (`make engines`). None without Piper's worker.
    static func installedPiperVoices(
        _ config: ParleyConfig, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String: PiperVoice] {
        guard let folder = piperFolder(config) else { return [:] }
        var voices = PiperVoiceInstall.installed(in: ParleyConfig.voiceDirectories(environment: environment))
        for (language, file) in PiperVoice.shipped where voices[language] == nil {
            let voice = PiperVoice(language: language, model: folder + "/voices/" + file)
            if voice.isInstalled { voices[language] = voice }
        }
        return voices
    }

    /// The languages Piper speaks under `config`, with its voice for each: those whose engine is
    /// "piper", and under "auto" those it was heard best in and those a user installed a voice
    /// for, when its voice is installed. A
    /// language set to "piper" without one is said in one line (`report`); Festival's or
    /// espeak-ng's choice speaks it.
    static func piperVoices(
        _ config: ParleyConfig, report: ((String) -> Void)?, installed: [String: PiperVoice]? = nil
    ) -> [String: PiperVoice] {
        let installed = installed ?? installedPiperVoices(config)
        var chosen: [String: PiperVoice] = [:]
        var missing: [String] = []
        for language in Set(config.voices.keys).union(PiperVoice.shipped.keys).union(installed.keys).sorted() {
            switch config.voices[language]?.engine ?? config.voiceEngine {
            case .auto:
                if let voice = installed[language], voice.userInstalled || PiperVoice.heardBetter.contains(language) { chosen[language] = voice }
            case .piper:
                if let voice = installed[language] {
                    chosen[language] = voice
                } else if config.voices[language]?.engine == .piper || PiperVoice.shipped[language] != nil {
                    missing.append(language)
                }
            case .espeak, .festival:
                break
            }
        }
        if !missing.isEmpty {
            report?("Piper has no voice installed for \(missing.joined(separator: ", ")): run `make engines` (or install the parley package), or set [voice] engine = \"auto\"; Festival or espeak-ng speaks it")
        }
        return chosen
    }

    /// Whether `language` can be spoken: espeak-ng has a voice for it, or one is set for it
    /// (`[voice.xx] voice`, or the language table's stand-in).
    static func speakable(_ language: String, by synthesizer: EspeakSynthesizer) -> Bool {
        synthesizer.hasVoice(for: language) || synthesizer.voices[language]?.voice != nil
    }

    static func openHistory(_ config: ParleyConfig) throws(DaemonFailure) -> AppDatabase {
        do {
            return config.historyEnabled ? try AppDatabase.open(path: config.historyPath) : try AppDatabase.inMemory()
        } catch {
            throw DaemonFailure(.runtime, "\(error)")
        }
    }

    /// Makes the folder of `path` (with `mode`) when it is missing, and checks that a file can
    /// be made in it; else one line naming `key` and what to set it to (exit 2).
    static func prepareFolder(of path: String, mode: Int, key: String, fix: String) throws(DaemonFailure) {
        let folder = (path as NSString).deletingLastPathComponent
        guard !folder.isEmpty else { return }
        var info = stat()
        if stat(folder, &info) != 0 {
            if let problem = makeFolder(folder, mode: mode_t(mode)) {
                throw DaemonFailure(.config, "\(key) \(excerpt(path)): cannot make its folder \(excerpt(folder)) (\(problem)); set it to \(fix)")
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            throw DaemonFailure(.config, "\(key) \(excerpt(path)): \(excerpt(folder)) is not a folder; set it to \(fix)")
        }
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            throw DaemonFailure(.config, "\(key) \(excerpt(path)) is a folder; set it to \(fix)")
        }
        // Whether a file can be made there: a probe, made and removed at once.
        let probe = (folder as NSString).appendingPathComponent(".parleyd-probe-\(getpid())")
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let problem = String(cString: strerror(errno))
            throw DaemonFailure(.config, "\(key) \(excerpt(path)): cannot make files in \(excerpt(folder)) (\(problem)); set it to \(fix)")
        }
        close(descriptor)
        unlink(probe)
    }

    /// Makes `folder` and the folders above it that are missing; the reason it cannot, or nil.
    private static func makeFolder(_ folder: String, mode: mode_t) -> String? {
        let parent = (folder as NSString).deletingLastPathComponent
        var info = stat()
        if !parent.isEmpty, parent != folder, stat(parent, &info) != 0, let problem = makeFolder(parent, mode: mode) {
            return problem
        }
        guard mkdir(folder, mode) == 0 || errno == EEXIST else { return String(cString: strerror(errno)) }
        return nil
    }

    /// A path for a message: at most 80 characters (its start and end), so the line stays short.
    static func excerpt(_ path: String) -> String {
        path.count > 80 ? "\(path.prefix(40))...\(path.suffix(37))" : path
    }

    /// systemd's status line: what Parley is doing, in a few words.
    static func statusLine(_ snapshot: Interpreter.Snapshot) -> String {
        let settings = snapshot.settings
        let who = snapshot.speaker.map { " \($0.rawValue) (\(settings.language(of: $0)))" } ?? ""
        return "\(snapshot.state)\(who); \(settings.speakerA)<->\(settings.speakerB), \(snapshot.turns) turns"
    }

    /// Parley is for speech: with no model for either language it does not start (exit 2, so
    /// systemd does not restart it in a loop).
    static func requireSpeechModel(_ config: ParleyConfig) throws(DaemonFailure) {
        let accurate = accuratelyHeard(config)
        let speakers = [config.speakerA, config.speakerB]
        guard !speakers.contains(where: { RecognizerPool.canHear(config, $0) || accurate.contains($0) }) else { return }
        // A model whose files are missing says which; else how to get one.
        let missing = [config.speakerA, config.speakerB].lazy.compactMap { language in
            config.recognizerModel(for: language)?.missingFileProblem(language: language)
        }.first
        throw DaemonFailure(
            .config,
            "no speech model for \(config.speakerA) or \(config.speakerB), so nobody can be heard: "
                + (missing ?? notHearableHint(language: config.speakerA == "en" || config.speakerB == "en" ? "en" : config.speakerA)))
    }

    static func notHearableHint(language: String) -> String {
        if language == "en" { return "install pocketsphinx-en-us (apt-get install pocketsphinx-en-us)" }
        let whisper = whisperLanguages.contains(language) ? "Whisper hears it: run `make engines` with [transcriber] enabled; or " : ""
        return "no usable speech model for \"\(language)\": \(whisper)install a CMU Sphinx model with `parleyd model install DIR --language \(language)` "
            + "(README: Adding a language)"
    }
}

extension Daemon {
    /// The voice-activity detector `[endpoint] voice_detector` asks for: Silero, which comes
    /// with Moonshine's library. Missing or broken: one log line, and the level alone finds speech.
    static func makeVoiceActivity(_ config: ParleyConfig, logger: Logger) -> (any VoiceActivityDetector)? {
        guard config.endpoint.voiceDetector == .silero else { return nil }
        guard let folder = config.transcriber.enginesFolder else {
            let places = TranscriberConfig.searchPath.joined(separator: " or ")
            logger.warning(
                "the Silero voice detector is not installed (no \(places)): run `make engines` (or install the parley package); speech is found by its level alone, and turns may not end in a noisy room")
            return nil
        }
        do {
            return try SileroDetector(library: folder + "/moonshine/moonshine_voice/libmoonshine.so")
        } catch {
            logger.error("the Silero voice detector cannot run: \(error); speech is found by its level alone, and turns may not end in a noisy room")
            return nil
        }
    }

    /// The languages the accurate engines will hear, judged from the config and the files
    /// alone (nothing is started): every Whisper language when the worker is installed or a
    /// server is set, English when Moonshine is installed.
    static func accuratelyHeard(_ config: ParleyConfig) -> Set<String> {
        let settings = config.transcriber
        guard settings.enabled else { return [] }
        if settings.serverAddress != nil { return whisperLanguages }
        guard let folder = settings.enginesFolder else { return [] }
        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        var heard: Set<String> = []
        if [folder + "/whisper/parley-whisper", folder + "/whisper/base/model.bin", settings.python].allSatisfy(exists) {
            heard = whisperLanguages
        }
        if exists(folder + "/moonshine/moonshine_voice/libmoonshine.so") { heard.insert("en") }
        return heard
    }

    /// How long Moonshine's worker may take: to load (about 0.3 s here), and to hear an
    /// utterance (0.05 s per second of audio here, an estimated 0.3 on a Pi 4: docs/benchmarks.md).
    /// Past that it is taken as hung: killed, and the utterance goes to the next engine.
    static let moonshineTimeout = (startMs: 10_000, fixedMs: 3_000, perSecondMs: 500)

    /// This program, which Moonshine's worker runs as (`parleyd worker moonshine`).
    static var executable: String {
        var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        guard length > 0 else { return CommandLine.arguments.first ?? "parleyd" }
        return String(decoding: path[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The command that starts Moonshine's worker for `config` (`moonshine_one_thread`), as
    /// `program` (nil: this one, parleyd).
    public static func moonshineWorker(_ program: String? = nil, library: String, model: String, config: ParleyConfig) -> [String] {
        [program ?? executable, "worker", "moonshine", "--library", library, "--model", model]
            + (config.transcriber.moonshineOneThread ? ["--one-thread"] : [])
    }

    /// The command that starts Whisper's worker from the engines `folder` for `config` (its beam,
    /// its threads on a machine of `cores` cores: `TranscriberConfig.whisperThreads`).
    public static func whisperWorker(folder: String, config: ParleyConfig, cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> [String] {
        let settings = config.transcriber
        return [
            settings.python, folder + "/whisper/parley-whisper", "--model", folder + "/whisper/base", "--python-path", folder + "/whisper/python",
            "--threads", String(settings.whisperThreads(cores: cores)), "--beam-size", String(settings.beamSize),
        ]
    }

    /// The accurate engines `[transcriber]` asks for, as far as they are installed. Each one
    /// that is missing or broken is one log line that says what to do; the languages it would
    /// have heard are heard by the next engine, or by PocketSphinx.
    static func makeAccurateHearing(_ config: ParleyConfig, logger: Logger) -> AccurateHearing? {
        let settings = config.transcriber
        guard settings.enabled else { return nil }
        let languages = [config.speakerA, config.speakerB]
        var engines: [any UtteranceTranscriber] = []
        let folder = settings.enginesFolder
        let fetch = "run `make engines` (or install the parley package)"
        if languages.contains("en") {
            if let folder {
                let library = folder + "/moonshine/moonshine_voice/libmoonshine.so"
                let model = folder + "/moonshine/tiny-en"
                do {
                    // Checked here, heard in a worker of its own: the library runs there.
                    try MoonshineTranscriber.check(library: library, modelFolder: model)
                    engines.append(
                        WyomingTranscriber(
                            name: "moonshine-tiny", endpoint: .child(Self.moonshineWorker(library: library, model: model, config: config)),
                            languages: ["en"], detectsLanguage: false, holdsUpInNoise: false,
                            roomBeforeVoiceMs: AccurateHearing.moonshineRoomBeforeVoiceMs,
                            timeoutMs: min(settings.timeoutMs, moonshineTimeout.fixedMs), timeoutPerSecondMs: moonshineTimeout.perSecondMs,
                            startTimeoutMs: moonshineTimeout.startMs, logger: logger))
                } catch {
                    logger.error("Moonshine cannot hear English: \(error); Whisper or PocketSphinx hears it")
                }
            } else {
                logger.warning("Moonshine is not installed (no \(TranscriberConfig.searchPath.joined(separator: " or "))): \(fetch); Whisper or PocketSphinx hears English")
            }
        }
        if let address = settings.serverAddress {
            engines.append(
                WyomingTranscriber(
                    name: "whisper@\(address.host):\(address.port)", endpoint: .tcp(host: address.host, port: address.port), languages: whisperLanguages,
                    timeoutMs: settings.timeoutMs, logger: logger))
        } else if let folder {
            let worker = folder + "/whisper/parley-whisper"
            let files = [worker, folder + "/whisper/base/model.bin", folder + "/whisper/python/ctranslate2", settings.python]
            if let missing = files.first(where: { !FileManager.default.fileExists(atPath: $0) }) {
                logger.error("Whisper is not installed (no \(missing)): \(fetch); \(languages.joined(separator: " and ")) are heard by the engines left")
            } else {
                engines.append(
                    WyomingTranscriber(
                        name: "whisper-base", endpoint: .child(whisperWorker(folder: folder, config: config)), languages: whisperLanguages, timeoutMs: settings.timeoutMs,
                        stopsOnSignal: true, logger: logger))
            }
        }
        return engines.isEmpty ? nil : AccurateHearing(engines: engines)
    }
}
