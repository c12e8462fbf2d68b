import CPocketSphinx
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// One PocketSphinx decoder: an acoustic model loaded once, with a named search per language
/// model. Languages that use the same acoustic model share it (its memory is the bulk of a
/// model); each gets its own language model as a search, switched to at the start of its
/// utterances. Not thread-safe: used from one queue (the daemon's recognition queue).
public final class PocketSphinxDecoder: @unchecked Sendable {
    // @unchecked: the C decoder is not thread-safe, and the compiler cannot see who drives it.
    // Each one is used from one queue at a time, never two at once: its recognition lane
    // (`RecognizerPool.lane(for:)` is the decoder's), whose recognizers the pool makes, and
    // adds searches to, under its mutex.
    fileprivate let decoder: OpaquePointer
    private let config: OpaquePointer
    public let acousticModel: String
    /// Dictionaries whose words are in the decoder.
    private var dictionaries: Set<String>
    /// The search of each language model, by the model's path.
    private var searches: [String: String] = [:]

    /// Loads the acoustic model with a first language model and dictionary. `options` are extra
    /// decoder flags without the dash (e.g. `["bestpath": "no"]`).
    public init(acousticModel: String, languageModel: String, dictionary: String, options: [String: String] = [:]) throws(RecognizerError) {
        var arguments = [
            "parleyd", "-hmm", acousticModel, "-lm", languageModel, "-dict", dictionary,
            "-logfn", "/dev/null", "-samprate", String(captureSampleRate),
        ]
        for (key, value) in options.sorted(by: { $0.key < $1.key }) {
            arguments += ["-" + key, value]
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        guard let config = argv.withUnsafeMutableBufferPointer({ buffer in
            cmd_ln_parse_r(nil, ps_args(), Int32(arguments.count), buffer.baseAddress, 0)
        }) else {
            throw RecognizerError("PocketSphinx rejected its options: \(arguments.dropFirst().joined(separator: " "))")
        }
        guard let decoder = ps_init(config) else {
            cmd_ln_free_r(config)
            throw RecognizerError(
                "PocketSphinx could not load the model (\(acousticModel), \(languageModel), \(dictionary)); "
                    + "check that the files are a PocketSphinx 5prealpha model, e.g. from pocketsphinx-en-us")
        }
        self.decoder = decoder
        self.config = config
        self.acousticModel = acousticModel
        self.dictionaries = [dictionary]
        if let name = ps_get_search(decoder) { searches[languageModel] = String(cString: name) }
    }

    deinit {
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    /// Whether `languageModel` has its search on this decoder already.
    func hasSearch(languageModel: String) -> Bool { searches[languageModel] != nil }

    /// The search for `languageModel`, added on first use with the words of `dictionary` that the
    /// decoder does not know yet.
    func search(languageModel: String, dictionary: String) throws(RecognizerError) -> String {
        if let known = searches[languageModel] { return known }
        if !dictionaries.contains(dictionary) {
            try addWords(from: dictionary)
            dictionaries.insert(dictionary)
        }
        let name = "lm:" + languageModel
        guard ps_set_lm_file(decoder, name, languageModel) == 0 else {
            throw RecognizerError("PocketSphinx could not load the language model \(languageModel); check that it is an ARPA or binary n-gram model")
        }
        searches[languageModel] = name
        return name
    }

    /// The value of an integer decoder flag such as "-maxhmmpf", as the decoder was configured.
    public func integerOption(_ name: String) -> Int { cmd_ln_int_r(config, name) }

    /// How many language models share this acoustic model.
    public var searchCount: Int { searches.count }

    /// The search in use: the last utterance's language model.
    public var activeSearch: String? { ps_get_search(decoder).map { String(cString: $0) } }

    /// Whether the decoder's dictionary has `word`.
    public func knows(_ word: String) -> Bool {
        guard let phones = ps_lookup_word(decoder, word) else { return false }
        free(phones)
        return true
    }

    /// Adds the words of a dictionary file ("word PH1 PH2 ...", alternates as "word(2) ...") that
    /// the decoder does not have, with their alternates. A word it has keeps the pronunciations
    /// of the dictionary loaded first: languages sharing a decoder share one dictionary.
    private func addWords(from dictionary: String) throws(RecognizerError) {
        guard let text = try? String(contentsOfFile: dictionary, encoding: .utf8) else {
            throw RecognizerError("cannot read the dictionary \(dictionary)")
        }
        var pending: [(String, String)] = []
        var added: Set<Substring> = []
        for line in text.split(separator: "\n") {
            // Comment lines, as sphinxbase's own reader skips them.
            if line.hasPrefix(";;") || line.hasPrefix("##") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let word = fields.first else { continue }
            let base = word.split(separator: "(").first ?? word
            if base != word {
                // An alternate: kept when its word is new here.
                if added.contains(base) { pending.append((String(word), fields.dropFirst().joined(separator: " "))) }
                continue
            }
            if let known = ps_lookup_word(decoder, String(word)) {
                free(known)
                continue
            }
            added.insert(base)
            pending.append((String(word), fields.dropFirst().joined(separator: " ")))
        }
        for (index, entry) in pending.enumerated() where ps_add_word(decoder, entry.0, entry.1, index == pending.count - 1 ? 1 : 0) < 0 {
            throw RecognizerError("PocketSphinx refused the word \"\(entry.0)\" of \(dictionary): its phones (\(entry.1)) are not in \(acousticModel)")
        }
    }

    /// The live cepstral mean: where the decoder's feature normalisation starts the next
    /// utterance from. PocketSphinx updates it at the end of each utterance; a decoder that
    /// starts from a mean far from the microphone's recognises its first utterances badly.
    public var cepstralMean: [Float]? {
        get {
            guard let feat = ps_get_feat(decoder), let cmn = feat.pointee.cmn_struct else { return nil }
            var mean = [Float](repeating: 0, count: Int(cmn.pointee.veclen))
            mean.withUnsafeMutableBufferPointer { cmn_live_get(cmn, $0.baseAddress) }
            return mean
        }
        set {
            guard let newValue, let feat = ps_get_feat(decoder), let cmn = feat.pointee.cmn_struct,
                newValue.count == Int(cmn.pointee.veclen), newValue.allSatisfy(\.isFinite)
            else { return }
            newValue.withUnsafeBufferPointer { cmn_live_set(cmn, $0.baseAddress) }
        }
    }

    /// Where the cepstral mean is kept between utterances and restarts (see `CepstralMeanStore`).
    public var meanStore: CepstralMeanStore?

    /// The recognizer whose utterance is open on this decoder, if any.
    fileprivate var utteranceOwner: ObjectIdentifier?
}

/// A language's recognizer: a search on a (possibly shared) PocketSphinx decoder, kept warm.
public final class PocketSphinxRecognizer: SpeechRecognizer {
    public let engine: PocketSphinxDecoder
    /// This language's search on the decoder.
    public let searchName: String
    private var decoder: OpaquePointer { engine.decoder }
    /// Whether this recognizer's utterance is the one open on the (shared) decoder.
    private var inUtterance: Bool {
        get { engine.utteranceOwner == ObjectIdentifier(self) }
        set { engine.utteranceOwner = newValue ? ObjectIdentifier(self) : (inUtterance ? nil : engine.utteranceOwner) }
    }
    public let language: String

    /// Loads a decoder of its own. `options` are extra decoder flags without the dash.
    public convenience init(
        language: String, acousticModel: String, languageModel: String, dictionary: String,
        options: [String: String] = [:]
    ) throws(RecognizerError) {
        let engine: PocketSphinxDecoder
        do {
            engine = try PocketSphinxDecoder(acousticModel: acousticModel, languageModel: languageModel, dictionary: dictionary, options: options)
        } catch {
            throw RecognizerError("\(language): \(error)")
        }
        try self.init(language: language, sharing: engine, languageModel: languageModel, dictionary: dictionary)
    }

    /// Uses `engine`'s acoustic model with `languageModel` as a search of its own.
    public init(language: String, sharing engine: PocketSphinxDecoder, languageModel: String, dictionary: String) throws(RecognizerError) {
        self.engine = engine
        self.searchName = try engine.search(languageModel: languageModel, dictionary: dictionary)
        self.language = language
    }

    public func startUtterance() throws(RecognizerError) {
        // An utterance left open on the decoder, ours or another language's, is ended first.
        if engine.utteranceOwner != nil {
            ps_end_utt(decoder)
            engine.utteranceOwner = nil
        }
        // Another language may have used the shared decoder last.
        if engine.activeSearch != searchName {
            guard ps_set_search(decoder, searchName) == 0 else { throw RecognizerError("PocketSphinx could not switch to the \(language) language model") }
        }
        guard ps_start_utt(decoder) >= 0 else { throw RecognizerError("PocketSphinx could not start an utterance") }
        inUtterance = true
    }

    public func feed(_ samples: [Int16]) throws(RecognizerError) {
        guard inUtterance, !samples.isEmpty else { return }
        let result = samples.withUnsafeBufferPointer { buffer in
            ps_process_raw(decoder, buffer.baseAddress, buffer.count, 0, 0)
        }
        guard result >= 0 else { throw RecognizerError("PocketSphinx failed to decode audio") }
    }

    public func partial() -> String? {
        guard inUtterance else { return nil }
        var score: Int32 = 0
        guard let hypothesis = ps_get_hyp(decoder, &score) else { return nil }
        let text = String(cString: hypothesis).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    public func sentenceEnd(pause: Int) -> SentenceEnd? {
        guard inUtterance else { return nil }
        var score: Int32 = 0
        guard let hypothesis = ps_get_hyp(decoder, &score) else { return nil }
        let text = String(cString: hypothesis).trimmingCharacters(in: .whitespaces)
        // The best path so far, word by word, with the frames (100 a second) each spans; the
        // path reaches the audio fed so far.
        var segments: [(word: String, start: Int32)] = []
        var lastFrame: Int32 = 0
        var segment = ps_seg_iter(decoder)
        while let current = segment {
            var start: Int32 = 0, end: Int32 = 0
            ps_seg_frames(current, &start, &end)
            lastFrame = max(lastFrame, end)
            if let word = ps_seg_word(current).map({ String(cString: $0) }), !Self.isFiller(word) {
                segments.append((Self.baseWord(word), start))
            }
            segment = ps_seg_next(current)
        }
        // Words that began early in the pause still count: a quiet "a" or "to" may be under the
        // level that says speech.
        let pauseFrame = lastFrame - Int32(pause / 160) + Self.pauseSlackFrames
        let words = segments.filter { $0.start <= pauseFrame }.map(\.word)
        guard let last = words.last, let model = ps_get_lm(decoder, searchName) else { return nil }
        // ngram_prob takes the word, then its history, most recent first.
        let history = [last, words.count > 1 ? words[words.count - 2] : "<s>"]
        var strings: [UnsafeMutablePointer<CChar>?] = (["</s>"] + history).map { strdup($0) }
        defer { strings.forEach { free($0) } }
        let logProbability = strings.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { base in
                base.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { ngram_prob(model, $0, Int32(buffer.count)) }
            } ?? 0
        }
        let logmath = ps_get_logmath(decoder)
        let frames = Int(ps_get_n_frames(decoder))
        return SentenceEnd(
            probability: min(1, max(0, logmath_exp(logmath, logProbability))), words: words.count,
            score: frames > 0 ? logmath_log_to_ln(logmath, score) / Double(frames) : nil, text: text)
    }

    /// How far into a pause a word may begin and still count as said (150 ms).
    static let pauseSlackFrames: Int32 = 15

    /// A dictionary word without its alternate-pronunciation mark: "read(2)" is "read".
    static func baseWord(_ word: String) -> String {
        guard word.hasSuffix(")"), let open = word.lastIndex(of: "(") else { return word }
        return String(word[..<open])
    }

    public func finishUtterance() throws(RecognizerError) -> Recognition {
        guard inUtterance else { return Recognition(text: "", confidence: nil) }
        inUtterance = false
        guard ps_end_utt(decoder) >= 0 else { throw RecognizerError("PocketSphinx could not finish the utterance") }
        if let store = engine.meanStore, let mean = engine.cepstralMean { store.save(mean) }
        var score: Int32 = 0
        guard let hypothesis = ps_get_hyp(decoder, &score) else {
            return Recognition(text: "", confidence: nil)
        }
        let text = String(cString: hypothesis).trimmingCharacters(in: .whitespaces)
        let logmath = ps_get_logmath(decoder)
        // The path score is acoustic and language model together, each frame measured against
        // the best state of that frame: per frame, it says how well this language explains the
        // audio, comparable between languages decoding the same audio.
        let frames = Int(ps_get_n_frames(decoder))
        let words = text.isEmpty ? [] : wordEvidence()
        return Recognition(
            text: text, confidence: text.isEmpty ? nil : ConfidenceCalibration.confidence(of: words),
            words: ConfidenceCalibration.recognizedWords(words),
            score: frames > 0 ? logmath_log_to_ln(logmath, score) / Double(frames) : nil,
            frames: words.reduce(0) { $0 + $1.frames })
    }

    /// The words of the last hypothesis (not silence, fillers or noise) with what the lattice
    /// says of them: posterior, frames, phones and acoustic score. The segment iterator runs
    /// the lattice pass (bestpath) and computes the posteriors.
    private func wordEvidence() -> [WordEvidence] {
        let logmath = ps_get_logmath(decoder)
        var words: [WordEvidence] = []
        var segment = ps_seg_iter(decoder)
        while let current = segment {
            if let word = ps_seg_word(current).map({ String(cString: $0) }), !Self.isFiller(word) {
                var start: Int32 = 0, end: Int32 = 0
                ps_seg_frames(current, &start, &end)
                var acoustic: Int32 = 0, language: Int32 = 0, backoff: Int32 = 0
                let posterior = ps_seg_prob(current, &acoustic, &language, &backoff)
                var phones = 0
                if let pronunciation = ps_lookup_word(decoder, word) {
                    phones = String(cString: pronunciation).split(separator: " ").count
                    free(pronunciation)
                }
                words.append(
                    WordEvidence(
                        text: WordEvidence.spelling(word), posterior: logmath_exp(logmath, posterior), frames: Int(max(0, end - start + 1)),
                        phones: phones, acousticScore: logmath_log_to_ln(logmath, acoustic)))
            }
            segment = ps_seg_next(current)
        }
        return words
    }

    /// Silence, sentence marks and the noise dictionary's fillers ([NOISE], ++BREATH++).
    static func isFiller(_ word: String) -> Bool {
        word.hasPrefix("<") || word.hasPrefix("[") || word.hasPrefix("+")
    }

    public func cancelUtterance() {
        guard inUtterance else { return }
        inUtterance = false
        ps_end_utt(decoder)
    }
}

#if canImport(Foundation)
import Foundation
#endif
