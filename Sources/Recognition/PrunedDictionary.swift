import CPocketSphinx
import Foundation

/// A pronunciation dictionary cut down to the words its language model can produce, or to the
/// likeliest of them.
///
/// PocketSphinx keeps every dictionary word in memory, but an n-gram search can only ever
/// recognize words of its language model: Debian's cmudict has 134,000 entries, of which the
/// 72,500 words of en-us.lm.bin use 79,000. The rest cost about 13 MiB of resident memory and
/// time at every start. With a `vocabulary`, only that many of the language model's words stay,
/// the likeliest by their unigram probability: the search tree of every word costs memory too,
/// and the words PocketSphinx gives are the live words and the end-of-turn cue, while an
/// accurate engine gives the turn's own (English keeps 20,000: 23 MiB less, the same word error
/// rate on ../shared/speech/en; docs/benchmarks.md, "The streaming decoder's vocabulary").
/// The cut-down copy is made once, on the first start, and kept in a cache folder under a name
/// derived from both files' paths, sizes and modification times and the vocabulary, so an
/// updated model makes a new copy.
public enum PrunedDictionary {
    /// The path of the cut-down copy of `dictionary` for `languageModel` in `cacheDirectory`,
    /// made now if there is none yet. `vocabulary`: how many of the language model's words stay
    /// (the likeliest; nil: all of them).
    public static func path(
        for dictionary: String, languageModel: String, vocabulary: Int? = nil, in cacheDirectory: String
    ) throws(RecognizerError) -> String {
        let copy = cacheDirectory + "/" + fileName(dictionary: dictionary, languageModel: languageModel, vocabulary: vocabulary)
        if let attributes = try? FileManager.default.attributesOfItem(atPath: copy),
            attributes[.type] as? FileAttributeType == .typeRegular, ((attributes[.size] as? NSNumber)?.intValue ?? 0) > 0
        {
            return copy
        }
        // Not there, or damaged (PocketSphinx would load an empty or unreadable dictionary
        // without a word and never recognize anything): made (again).
        try? FileManager.default.removeItem(atPath: copy)
        let kept = try words(of: languageModel, likeliest: vocabulary)
        guard let text = try? String(contentsOfFile: dictionary, encoding: .utf8) else {
            throw RecognizerError("cannot read the dictionary \(dictionary)")
        }
        var lines = ""
        lines.reserveCapacity(text.utf8.count)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let word = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first else { continue }
            // "word(2)" is an alternate pronunciation of "word".
            let base = word.split(separator: "(", maxSplits: 1).first ?? word
            if kept.contains(String(base)) {
                lines += line
                lines += "\n"
            }
        }
        guard !lines.isEmpty else {
            throw RecognizerError("no word of \(dictionary) is in the language model \(languageModel); check that they belong to the same language")
        }
        do {
            try FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
            try Data(lines.utf8).write(to: URL(fileURLWithPath: copy), options: .atomic)
        } catch {
            throw RecognizerError("cannot write \(copy); check that \(cacheDirectory) can be created and written")
        }
        return copy
    }

    /// The words of an n-gram language model (ARPA or binary), sentence markers included; with
    /// `likeliest`, only that many, those of the highest unigram probability (ties by spelling).
    static func words(of languageModel: String, likeliest: Int? = nil) throws(RecognizerError) -> Set<String> {
        // sphinxbase logs to stderr until a decoder names its log file.
        err_set_logfp(nil)
        guard let logmath = logmath_init(1.0001, 0, 0) else { throw RecognizerError("PocketSphinx could not allocate its log tables") }
        defer { logmath_free(logmath) }
        guard let model = ngram_model_read(nil, languageModel, NGRAM_AUTO, logmath) else {
            throw RecognizerError("PocketSphinx could not read the language model \(languageModel); check that it is an ARPA or binary n-gram model")
        }
        defer { ngram_model_free(model) }
        guard let counts = ngram_model_get_counts(model) else { return [] }
        var words: [(word: String, score: Int32)] = []
        words.reserveCapacity(Int(counts[0]))
        for id in 0..<Int32(clamping: counts[0]) {
            guard let word = ngram_word(model, id) else { continue }
            var used: Int32 = 0
            let score = likeliest == nil ? 0 : ngram_ng_prob(model, id, nil, 0, &used)
            words.append((String(cString: word), score))
        }
        guard let likeliest, likeliest < words.count else { return Set(words.map(\.word)) }
        words.sort { $0.score != $1.score ? $0.score > $1.score : $0.word < $1.word }
        return Set(words.prefix(max(0, likeliest)).map(\.word))
    }

    /// "cmudict-en-us-<hash>.dict": the hash covers both files' paths, sizes and modification
    /// times, and the vocabulary.
    static func fileName(dictionary: String, languageModel: String, vocabulary: Int? = nil) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for path in [dictionary, languageModel] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
            for byte in "\(path)\u{0}\(size)\u{0}\(modified)\u{0}".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
            }
        }
        // Without a vocabulary the name is what it was, so an existing copy is kept.
        for byte in vocabulary.map({ "words \($0)" })?.utf8 ?? "".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
        }
        let stem = URL(fileURLWithPath: dictionary).deletingPathExtension().lastPathComponent
        return "\(stem)-\(String(hash, radix: 16)).dict"
    }
}
