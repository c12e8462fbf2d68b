import CPocketSphinx
import Foundation

/// A pronunciation dictionary cut down to the words its language model can produce.
///
/// PocketSphinx keeps every dictionary word in memory, but an n-gram search can only ever
/// recognize words of its language model: Debian's cmudict has 134,000 entries, of which the
/// 72,500 words of en-us.lm.bin use 79,000. The rest cost about 13 MiB of resident memory and
/// time at every start. The cut-down copy is made once, on the first start, and kept in a cache
/// folder under a name derived from both files' paths, sizes and modification times, so an
/// updated model makes a new copy. Recognition is unchanged: only unreachable words go.
public enum PrunedDictionary {
    /// The path of the cut-down copy of `dictionary` for `languageModel` in `cacheDirectory`,
    /// made now if there is none yet.
    public static func path(for dictionary: String, languageModel: String, in cacheDirectory: String) throws(RecognizerError) -> String {
        let copy = cacheDirectory + "/" + fileName(dictionary: dictionary, languageModel: languageModel)
        if let attributes = try? FileManager.default.attributesOfItem(atPath: copy),
            attributes[.type] as? FileAttributeType == .typeRegular, ((attributes[.size] as? NSNumber)?.intValue ?? 0) > 0
        {
            return copy
        }
        // Not there, or damaged (PocketSphinx would load an empty or unreadable dictionary
        // without a word and never recognize anything): made (again).
        try? FileManager.default.removeItem(atPath: copy)
        let vocabulary = try words(of: languageModel)
        guard let text = try? String(contentsOfFile: dictionary, encoding: .utf8) else {
            throw RecognizerError("cannot read the dictionary \(dictionary)")
        }
        var kept = ""
        kept.reserveCapacity(text.utf8.count)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let word = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first else { continue }
            // "word(2)" is an alternate pronunciation of "word".
            let base = word.split(separator: "(", maxSplits: 1).first ?? word
            if vocabulary.contains(String(base)) {
                kept += line
                kept += "\n"
            }
        }
        guard !kept.isEmpty else {
            throw RecognizerError("no word of \(dictionary) is in the language model \(languageModel); check that they belong to the same language")
        }
        do {
            try FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
            try Data(kept.utf8).write(to: URL(fileURLWithPath: copy), options: .atomic)
        } catch {
            throw RecognizerError("cannot write \(copy); check that \(cacheDirectory) can be created and written")
        }
        return copy
    }

    /// The words of an n-gram language model (ARPA or binary), sentence markers included.
    static func words(of languageModel: String) throws(RecognizerError) -> Set<String> {
        // sphinxbase logs to stderr until a decoder names its log file.
        err_set_logfp(nil)
        guard let logmath = logmath_init(1.0001, 0, 0) else { throw RecognizerError("PocketSphinx could not allocate its log tables") }
        defer { logmath_free(logmath) }
        guard let model = ngram_model_read(nil, languageModel, NGRAM_AUTO, logmath) else {
            throw RecognizerError("PocketSphinx could not read the language model \(languageModel); check that it is an ARPA or binary n-gram model")
        }
        defer { ngram_model_free(model) }
        guard let counts = ngram_model_get_counts(model) else { return [] }
        var words = Set<String>(minimumCapacity: Int(counts[0]))
        for id in 0..<Int32(clamping: counts[0]) {
            if let word = ngram_word(model, id) { words.insert(String(cString: word)) }
        }
        return words
    }

    /// "cmudict-en-us-<hash>.dict": the hash covers both files' paths, sizes and modification times.
    static func fileName(dictionary: String, languageModel: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for path in [dictionary, languageModel] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
            for byte in "\(path)\u{0}\(size)\u{0}\(modified)\u{0}".utf8 {
                hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3
            }
        }
        let stem = URL(fileURLWithPath: dictionary).deletingPathExtension().lastPathComponent
        return "\(stem)-\(String(hash, radix: 16)).dict"
    }
}
