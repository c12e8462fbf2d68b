import Foundation
import Logging
import Synchronization

/// PocketSphinx's search settings for every decoder a pool loads (`[recognizer]` in the config,
/// whose defaults are these; docs/benchmarks.md says how they were chosen).
public struct DecoderSettings: Sendable, Equatable {
    /// The second, flat-lexicon search.
    public var fwdflat = false
    /// HMMs kept per frame (-1: no limit).
    public var maxHMMsPerFrame = 4_000
    /// Words that may end per frame (-1: no limit).
    public var maxWordsPerFrame = 10

    public init(fwdflat: Bool = false, maxHMMsPerFrame: Int = 4_000, maxWordsPerFrame: Int = 10) {
        self.fwdflat = fwdflat
        self.maxHMMsPerFrame = maxHMMsPerFrame
        self.maxWordsPerFrame = maxWordsPerFrame
    }
}

/// Recognizers by language, their models loaded once and kept warm.
///
/// The pool keeps the decoders (one per acoustic model) behind one mutex and hands out a new
/// recognizer (`sending`) each time one is asked for: the recognition lane that asked owns it
/// from then on. A lane is one decoder's (`lane(for:)`), so a decoder is driven from one lane
/// only (`PocketSphinxDecoder` says why that is the one promise the compiler cannot check).
public final class RecognizerPool: RecognizerLanes {
    /// Languages configured with the same acoustic model share one decoder, loaded once; each
    /// language model is a search on it. Held while a model loads.
    private let decoders = Mutex<[String: PocketSphinxDecoder]>([:])
    /// Languages whose model would not load; asked about from any thread.
    private let failed = Mutex<Set<String>>([])
    /// Each language's model, found once: the search for an installed one looks at the disk,
    /// and `lane(for:)` is asked for every piece of audio.
    private let models = Mutex<[String: RecognizerModel?]>([:])
    private let findModel: @Sendable (String) -> RecognizerModel?
    private let configured: Set<String>
    private let settings: DecoderSettings
    private let cacheDirectory: String?
    private let meanDevice: String?
    private let logger: Logger

    /// Loads the models of `languages` (the two speakers') now. A model that is missing or
    /// broken is logged in one line that names the file and what to do, and its language is not
    /// heard; only when none of `languages` can be heard does this throw, saying why (unless
    /// `othersHear`: an accurate engine hears them, and the pool only adds live words).
    ///
    /// - `model` finds a language's model (the config's `[recognizer.xx]`, else an installed
    ///   one); asked once per language. `configured` are the languages the config names a model
    ///   for (a problem is then reported against that table).
    /// - `cacheDirectory` keeps pruned dictionaries and cepstral means (nil: neither).
    /// - `meanDevice` names the live microphone whose cepstral mean is kept between runs; nil
    ///   (a recording) keeps none.
    public init(
        languages: [String], model: @escaping @Sendable (String) -> RecognizerModel?, configured: Set<String> = [],
        settings: DecoderSettings = DecoderSettings(), cacheDirectory: String? = nil, meanDevice: String? = nil, othersHear: Bool = false,
        logger: Logger
    ) throws(RecognizerError) {
        self.findModel = model
        self.configured = configured
        self.settings = settings
        self.cacheDirectory = cacheDirectory
        self.logger = logger
        self.meanDevice = meanDevice
        var problems: [String] = []
        for language in Set(languages).sorted() {
            guard let model = self.model(for: language) else { continue }
            if let problem = Self.problem(with: model, language: language, configured: configured.contains(language)) {
                problems.append(problem)
                _ = failed.withLock { $0.insert(language) }
                continue
            }
            do {
                _ = try decoders.withLock { decoders throws(RecognizerError) in try load(language, &decoders) }
            } catch {
                let folder = (model.acousticModel as NSString).deletingLastPathComponent
                problems.append(
                    "the \(language) speech model in \(folder) did not load: \(error) (`parleyd model check \(folder)` says what is wrong)")
                _ = failed.withLock { $0.insert(language) }
            }
        }
        guard othersHear || languages.contains(where: canHear) else {
            let who = "no speech model for \(languages.joined(separator: " or ")) can be used, so nobody can be heard"
            throw RecognizerError(problems.isEmpty ? who : "\(who): " + problems.joined(separator: "; "))
        }
        for problem in problems {
            logger.error("\(problem); \(othersHear ? "the accurate pass hears it without live words" : "the other language is heard")")
        }
    }

    /// What keeps `model` from loading, found without loading it: a missing file, or an
    /// incomplete or non-16 kHz acoustic model. One line that names the file and what to do.
    public static func problem(with model: RecognizerModel, language: String, configured: Bool) -> String? {
        if let missing = model.missingFileProblem(language: language) { return missing }
        guard let first = ModelCheck.checkAcousticModel(model.acousticModel).first else { return nil }
        let folder = (model.acousticModel as NSString).deletingLastPathComponent
        let which = configured ? "[recognizer.\(language)]" : "the \(language) speech model installed in \(folder):"
        return "\(which) \(first) (`parleyd model check \(folder)` checks the whole model)"
    }

    /// The decoder a language's recognizer runs on (its acoustic model): the recognition lane.
    @Sendable public func lane(for language: String) -> String {
        model(for: language)?.acousticModel ?? language
    }

    /// Whether `language` can be heard: a model exists and did not fail to load.
    @Sendable public func canHear(_ language: String) -> Bool {
        guard let model = model(for: language), model.firstMissingFile() == nil else { return false }
        return !failed.withLock { $0.contains(language) }
    }

    /// `language`'s model, found on first use.
    private func model(for language: String) -> RecognizerModel? {
        models.withLock { models in
            if let known = models[language] { return known }
            let found = findModel(language)
            models[language] = .some(found)
            return found
        }
    }

    /// A recognizer of `language` for the lane that asks, which owns it from then on; its model
    /// is loaded on first use and kept warm. nil when the language cannot be heard.
    @Sendable public func recognizer(for language: String) -> sending (any SpeechRecognizer)? {
        guard canHear(language) else { return nil }
        do {
            return try decoders.withLock { decoders throws(RecognizerError) in try load(language, &decoders) }
        } catch {
            _ = failed.withLock { $0.insert(language) }
            logger.error("cannot load the \(language) speech model: \(error)")
            return nil
        }
    }

    /// A recognizer of `language` on its model's decoder, loading the decoder (kept in
    /// `decoders`) and the language model's search (kept on the decoder) the first time.
    private func load(_ language: String, _ decoders: inout [String: PocketSphinxDecoder]) throws(RecognizerError) -> PocketSphinxRecognizer {
        guard let model = model(for: language) else { throw RecognizerError("no model for \(language)") }
        let dictionary = dictionary(for: model)
        if let shared = decoders[model.acousticModel] {
            if !shared.hasSearch(languageModel: model.languageModel) {
                logger.info("\(language) shares the acoustic model \(model.acousticModel) loaded for another language")
            }
            return try PocketSphinxRecognizer(language: language, sharing: shared, languageModel: model.languageModel, dictionary: dictionary)
        }
        let decoder = try PocketSphinxDecoder(
            acousticModel: model.acousticModel, languageModel: model.languageModel, dictionary: dictionary,
            options: ["fwdflat": settings.fwdflat ? "yes" : "no", "bestpath": "yes", "maxhmmpf": String(settings.maxHMMsPerFrame), "maxwpf": String(settings.maxWordsPerFrame)])
        decoders[model.acousticModel] = decoder
        startCepstralMean(of: decoder, model: model)
        return try PocketSphinxRecognizer(language: language, sharing: decoder, languageModel: model.languageModel, dictionary: dictionary)
    }

    /// Where a new decoder's feature normalisation starts: the mean kept for this model and
    /// microphone from the last run, else a seed when the model gives none (`-cmninit` in its
    /// feat.params). Kept after every utterance when there is a live microphone (`meanDevice`).
    private func startCepstralMean(of decoder: PocketSphinxDecoder, model: RecognizerModel) {
        let length = decoder.cepstralMean?.count ?? 0
        if let device = meanDevice, let cache = cacheDirectory {
            let store = CepstralMeanStore(cacheDirectory: cache, acousticModel: model.acousticModel, device: device)
            decoder.meanStore = store
            if let kept = store.load(length: length) {
                decoder.cepstralMean = kept
                return
            }
        }
        let params = (try? String(contentsOfFile: model.acousticModel + "/feat.params", encoding: .utf8)) ?? ""
        if !params.contains("-cmninit"), length == CepstralMeanStore.seed.count {
            decoder.cepstralMean = CepstralMeanStore.seed
        }
    }

    /// The model's dictionary cut down to its language model's words, or to its vocabulary (made
    /// once, then kept in the cache folder), or the whole dictionary when no copy can be made.
    private func dictionary(for model: RecognizerModel) -> String {
        guard let cache = cacheDirectory else { return model.dictionary }
        do {
            return try PrunedDictionary.path(for: model.dictionary, languageModel: model.languageModel, vocabulary: model.vocabulary, in: cache)
        } catch {
            logger.notice("loading the whole dictionary \(model.dictionary), which costs more memory: \(error)")
            return model.dictionary
        }
    }

    /// Decoders loaded (one per acoustic model), for tests.
    var decoderCount: Int { decoders.withLock { $0.count } }
}
