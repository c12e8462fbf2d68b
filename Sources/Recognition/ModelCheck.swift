import Foundation
import ParleyCore

/// One thing wrong with a speech model: the file, and in the same line what to do about it.
public struct ModelProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file or folder at fault.
    public let file: String
    /// What is wrong and what to do.
    public let problem: String

    public init(file: String, _ problem: String) {
        self.file = file
        self.problem = problem
    }

    public var description: String { "\(file): \(problem)" }
}

/// What `ModelCheck.check` found in a model folder.
public struct ModelReport: Sendable {
    /// The model's parts, when all three were found.
    public var files: RecognizerModel?
    /// Everything wrong, one line each; empty for a model Parley can use.
    public var problems: [ModelProblem]
    /// Words of the language model (sentence markers and fillers left out), when it could be read.
    public var languageModelWords: Int?
    /// Words of the dictionary (alternate pronunciations not counted), when it could be read.
    public var dictionaryWords: Int?

    public var isUsable: Bool { files != nil && problems.isEmpty }
}

/// Checks a CMU Sphinx model before Parley uses it: the acoustic model is complete and made
/// for 16 kHz audio, and the dictionary has a pronunciation for every word of the language
/// model, in phones the acoustic model knows. Each problem is one line naming the file.
public enum ModelCheck {
    /// The sample rate Parley records and decodes at.
    public static let sampleRate = captureSampleRate
    /// Files an acoustic model cannot do without (besides feat.params and the mixture weights).
    static let acousticFiles = ["mdef", "means", "variances", "transition_matrices"]
    /// Language model and dictionary file endings, the preferred first.
    /// (PocketSphinx reads .gz files through gunzip.)
    public static let languageModelEndings = [".lm.bin", ".lm", ".arpa", ".lm.gz", ".arpa.gz", ".lm.dmp", ".dmp"]
    static let dictionaryEndings = [".dict", ".dic"]

    /// Finds the model's parts in `directory` and checks them. `language` (an ISO 639-1 code)
    /// picks `xx.lm.bin`, `xx.dict` when the folder holds several candidates.
    public static func check(directory: String, language: String? = nil) -> ModelReport {
        let located = locate(directory: directory, language: language)
        guard let files = located.files else {
            // What was found is still checked, so that one run names every problem.
            var problems = located.problems
            if let acoustic = located.acousticModel { problems += checkAcousticModel(acoustic) }
            return ModelReport(files: nil, problems: problems)
        }
        return check(files)
    }

    /// Checks a model whose parts are known (as a config names them).
    public static func check(_ files: RecognizerModel) -> ModelReport {
        var report = ModelReport(files: files, problems: checkAcousticModel(files.acousticModel))
        checkDictionary(files, into: &report)
        return report
    }

    // MARK: - Finding the parts

    /// The parts of the model in `directory`: the acoustic model is `directory/acoustic`,
    /// `directory` itself, or its one subfolder (or sub-subfolder) holding an mdef; the language
    /// model and dictionary are the files with those endings in `directory`, `directory/etc`
    /// or the acoustic model's folder.
    public static func locate(
        directory: String, language: String? = nil
    ) -> (files: RecognizerModel?, acousticModel: String?, problems: [ModelProblem]) {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
            return (nil, nil, [ModelProblem(file: directory, "is not a folder; give the folder that holds the model (the unpacked tarball)")])
        }
        let names = ((try? manager.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var problems: [ModelProblem] = []

        var acoustic: String?
        let conventional = directory + "/acoustic"
        if manager.fileExists(atPath: conventional, isDirectory: &isFolder), isFolder.boolValue {
            acoustic = conventional
        } else if names.contains("mdef") || names.contains("feat.params") {
            acoustic = directory
        } else {
            // One level down, else two (SphinxTrain's model_parameters/xx.cd_cont_4000).
            let subfolders = names.map { directory + "/" + $0 }.filter { Self.isFolder($0) }
            var holders = subfolders.filter { manager.fileExists(atPath: $0 + "/mdef") }
            if holders.isEmpty {
                holders = subfolders.flatMap { folder in
                    ((try? manager.contentsOfDirectory(atPath: folder)) ?? []).sorted().map { folder + "/" + $0 }
                }.filter { manager.fileExists(atPath: $0 + "/mdef") }
            }
            if holders.count == 1 {
                acoustic = holders[0]
            } else if holders.isEmpty {
                problems.append(ModelProblem(
                    file: directory,
                    "holds no acoustic model (a folder with feat.params, mdef, means, variances, ...); put it in \(directory)/acoustic"))
            } else {
                problems.append(ModelProblem(
                    file: directory,
                    "holds several acoustic models (\(holders.map { String($0.dropFirst(directory.count + 1)) }.joined(separator: ", "))); "
                        + "keep one, or move the one to use to \(directory)/acoustic"))
            }
        }

        // Files of the top folder, of etc/ (SphinxTrain's layout), and of the acoustic folder
        // when it is another one (some tarballs keep the dictionary beside mdef).
        var candidates = names.map { directory + "/" + $0 }
        for folder in [directory + "/etc", acoustic].compactMap({ $0 }) where folder != directory {
            candidates += ((try? manager.contentsOfDirectory(atPath: folder)) ?? []).sorted().map { folder + "/" + $0 }
        }
        let languageModel = pick(
            candidates, endings: languageModelEndings, language: language, in: directory,
            what: "language model", example: "\(language ?? "xx").lm.bin (or an ARPA .lm)", problems: &problems)
        let dictionary = pick(
            candidates, endings: dictionaryEndings, language: language, in: directory,
            what: "dictionary", example: "\(language ?? "xx").dict", problems: &problems)
        guard let acoustic, let languageModel, let dictionary else { return (nil, acoustic, problems) }
        return (RecognizerModel(acousticModel: acoustic, languageModel: languageModel, dictionary: dictionary), acoustic, problems)
    }

    /// The one file among `candidates` with one of `endings`: if there are several, the one
    /// named after the language, then the one with the preferred ending.
    private static func pick(
        _ candidates: [String], endings: [String], language: String?, in directory: String, what: String, example: String,
        problems: inout [ModelProblem]
    ) -> String? {
        struct Candidate {
            var path: String
            var named: Bool
            var ending: Int
        }
        let found = candidates.compactMap { path -> Candidate? in
            let name = (path as NSString).lastPathComponent
            let lower = name.lowercased()
            guard let ending = endings.firstIndex(where: { lower.hasSuffix($0) && lower.count > $0.count }) else { return nil }
            guard FileManager.default.isReadableFile(atPath: path), !isFolder(path) else { return nil }
            let stem = String(lower.dropLast(endings[ending].count))
            // A phonetic language model (en-us-phone.lm.bin) is for phone decoding, not words.
            if stem.hasSuffix("-phone") || stem.hasSuffix("_phone") { return nil }
            let named = language.map { stem == $0 || stem.hasPrefix($0 + "-") || stem.hasPrefix($0 + "_") || stem.hasPrefix($0 + ".") } ?? false
            return Candidate(path: path, named: named, ending: ending)
        }
        .sorted { ($0.named ? 0 : 1, $0.ending, $0.path) < ($1.named ? 0 : 1, $1.ending, $1.path) }
        guard let best = found.first else {
            problems.append(ModelProblem(file: directory, "holds no \(what); add one named \(example)"))
            return nil
        }
        if found.count > 1, found[1].named == best.named, found[1].ending == best.ending {
            let names = found.filter { $0.named == best.named && $0.ending == best.ending }.map { ($0.path as NSString).lastPathComponent }
            problems.append(ModelProblem(
                file: directory,
                "holds several \(what)s (\(names.joined(separator: ", "))); keep one, or name the one to use \(example)"
                    + (language == nil ? " and pass --language" : "")))
            return nil
        }
        return best.path
    }

    private static func isFolder(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
    }

    // MARK: - The acoustic model

    /// Problems of an acoustic model folder: its files, and feat.params made for 16 kHz.
    public static func checkAcousticModel(_ folder: String) -> [ModelProblem] {
        guard isFolder(folder) else {
            return [ModelProblem(file: folder, "is not a folder; the acoustic model is the folder that holds feat.params, mdef, means, ...")]
        }
        var problems: [ModelProblem] = []
        let manager = FileManager.default
        let params = folder + "/feat.params"
        if let text = try? String(contentsOfFile: params, encoding: .utf8) {
            problems += checkFeatureParameters(text, file: params)
        } else if manager.fileExists(atPath: params) {
            problems.append(ModelProblem(file: params, "cannot be read; check its permissions"))
        } else {
            problems.append(ModelProblem(
                file: params, "is missing; PocketSphinx needs it to compute the model's features: copy it from the model's tarball"))
        }
        for name in acousticFiles where !manager.fileExists(atPath: folder + "/" + name) {
            problems.append(ModelProblem(file: folder + "/" + name, "is missing; copy it from the model's tarball (the acoustic model is incomplete)"))
        }
        if !manager.fileExists(atPath: folder + "/mixture_weights") && !manager.fileExists(atPath: folder + "/sendump") {
            problems.append(ModelProblem(
                file: folder + "/mixture_weights", "is missing, and so is sendump; copy one of them from the model's tarball"))
        }
        return problems
    }

    /// feat.params must not describe features of audio other than 16 kHz: `-samprate`, when
    /// given, is 16000, and `-upperf` fits under 8 kHz (and is not a telephone band's).
    static func checkFeatureParameters(_ text: String, file: String) -> [ModelProblem] {
        var values: [String: String] = [:]
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).map(String.init)
        var index = 0
        while index < tokens.count {
            if tokens[index].hasPrefix("-"), index + 1 < tokens.count {
                values[tokens[index]] = tokens[index + 1]
                index += 2
            } else {
                index += 1
            }
        }
        var problems: [ModelProblem] = []
        let samprate = values["-samprate"].flatMap(Double.init)
        if let raw = values["-samprate"], samprate != Double(sampleRate) {
            problems.append(ModelProblem(
                file: file, "says -samprate \(raw); Parley records 16 kHz audio, so use a 16 kHz model (an 8 kHz telephone model will not work)"))
        }
        if let raw = values["-upperf"], let upper = Double(raw) {
            if upper > Double(sampleRate / 2) {
                problems.append(ModelProblem(
                    file: file, "says -upperf \(raw), above the 8000 Hz that 16 kHz audio holds; this is not a 16 kHz model: use one"))
            } else if samprate == nil && upper <= 4_000 {
                problems.append(ModelProblem(
                    file: file, "says -upperf \(raw) with no -samprate: an 8 kHz telephone model; use a 16 kHz model"))
            }
        }
        return problems
    }

    /// The context-independent phones of a text mdef (version 0.3); nil for a binary one.
    static func phones(ofModelDefinition path: String) -> Set<String>? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        // The phones come first: 64 KiB hold them in any model.
        guard let head = try? handle.read(upToCount: 1 << 16), head.starts(with: Data("0.3".utf8)),
            let text = String(data: head, encoding: .utf8) ?? String(data: head, encoding: .isoLatin1)
        else { return nil }
        var phones = Set<String>()
        var base: Int?
        for line in text.split(separator: "\n").dropLast() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if fields.count == 2, fields[1] == "n_base" { base = Int(fields[0]) }
            guard !line.hasPrefix("#"), fields.count >= 6, fields[1] == "-", fields[2] == "-", fields[3] == "-" else { continue }
            phones.insert(String(fields[0]))
        }
        guard let base, phones.count == base else { return nil }
        return phones
    }

    // MARK: - The dictionary against the language model

    /// Checks that the dictionary can be read, pronounces every word of the language model,
    /// and uses only phones of the acoustic model.
    static func checkDictionary(_ files: RecognizerModel, into report: inout ModelReport) {
        let dictionary = files.dictionary
        let dictionaryName = (dictionary as NSString).lastPathComponent
        guard let data = FileManager.default.contents(atPath: dictionary) else {
            report.problems.append(ModelProblem(file: dictionary, "cannot be read; check that it exists and its permissions"))
            return
        }
        guard let text = String(data: data, encoding: .utf8) else {
            report.problems.append(ModelProblem(
                file: dictionary, "is not UTF-8 text; convert it (iconv -f latin1 -t utf-8), and the language model with it"))
            return
        }
        var words = Set<String>()
        var unpronounced: [String] = []
        var phonesUsed: [String: String] = [:]  // phone -> a word that uses it
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if line.hasPrefix(";;") || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let word = fields.first else { continue }
            let base = String(word.split(separator: "(", maxSplits: 1).first ?? word)
            words.insert(base)
            if fields.count < 2 { unpronounced.append(String(word)) }
            for phone in fields.dropFirst() where phonesUsed[String(phone)] == nil {
                phonesUsed[String(phone)] = String(word)
            }
        }
        report.dictionaryWords = words.count
        if words.isEmpty {
            report.problems.append(ModelProblem(file: dictionary, "holds no word; use the dictionary made for the language model"))
            return
        }
        if !unpronounced.isEmpty {
            report.problems.append(ModelProblem(
                file: dictionary,
                "\(unpronounced.count) words have no phones (\(sample(unpronounced))); give each word its phones after a space"))
        }
        if let known = phones(ofModelDefinition: files.acousticModel + "/mdef") {
            let unknown = phonesUsed.keys.filter { !known.contains($0) }.sorted()
            if !unknown.isEmpty {
                report.problems.append(ModelProblem(
                    file: dictionary,
                    "uses phones the acoustic model does not have (\(sample(unknown.map { "\($0) in \"\(phonesUsed[$0] ?? "")\"" }))); "
                        + "use a dictionary made for this acoustic model, whose phones are in its mdef"))
            }
        }

        let vocabulary: Set<String>
        do {
            vocabulary = try PrunedDictionary.words(of: files.languageModel)
        } catch {
            report.problems.append(ModelProblem(
                file: files.languageModel, "PocketSphinx cannot read it; use an ARPA or binary n-gram model (sphinx_lm_convert makes one)"))
            return
        }
        let fillers = fillerWords(of: files.acousticModel)
        let spoken = vocabulary.filter { !($0.hasPrefix("<") && $0.hasSuffix(">")) && !fillers.contains($0) }
        report.languageModelWords = spoken.count
        if spoken.isEmpty {
            report.problems.append(ModelProblem(file: files.languageModel, "holds no word; use a language model of the model's language"))
            return
        }
        let missing = spoken.subtracting(words).sorted()
        if !missing.isEmpty {
            report.problems.append(ModelProblem(
                file: dictionary,
                "has no pronunciation for \(missing.count) of the \(spoken.count) words of \((files.languageModel as NSString).lastPathComponent) "
                    + "(\(sample(missing))); add them to \(dictionaryName), or use the dictionary made with the language model"))
        }
    }

    /// The words of the acoustic model's filler dictionary (noisedict), such as `<sil>` or `++NOISE++`.
    static func fillerWords(of acousticModel: String) -> Set<String> {
        guard let text = try? String(contentsOfFile: acousticModel + "/noisedict", encoding: .utf8) else { return [] }
        return Set(text.split(separator: "\n").compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) })
    }

    /// The first few items, for a one-line message.
    private static func sample(_ items: [String], count: Int = 5) -> String {
        let shown = items.prefix(count).joined(separator: ", ")
        return items.count > count ? shown + ", ..." : shown
    }
}
