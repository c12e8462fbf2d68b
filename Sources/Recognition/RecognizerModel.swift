import Foundation

/// The files one PocketSphinx model is made of: what a language's `[recognizer.xx]` table names,
/// what `parleyd model install` installs and `parleyd model check` checks.
public struct RecognizerModel: Sendable, Hashable {
    public var acousticModel: String
    public var languageModel: String
    public var dictionary: String
    /// How many of the language model's words the decoder knows, the likeliest (nil: all of
    /// them); see `PrunedDictionary`.
    public var vocabulary: Int?

    public init(acousticModel: String, languageModel: String, dictionary: String, vocabulary: Int? = nil) {
        self.acousticModel = acousticModel
        self.languageModel = languageModel
        self.dictionary = dictionary
        self.vocabulary = vocabulary
    }

    /// The US English model Debian's pocketsphinx-en-us installs, its 20,000 likeliest words
    /// known: the decoder's memory falls from 78 to 55 MiB, with the same word error rate on
    /// ../shared/speech/en (docs/benchmarks.md, "The streaming decoder's vocabulary").
    public static let debianEnglish = RecognizerModel(
        acousticModel: "/usr/share/pocketsphinx/model/en-us/en-us",
        languageModel: "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin",
        dictionary: "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
        vocabulary: 20_000)

    /// The first of the model's files that does not exist.
    public func firstMissingFile(fileManager: FileManager = .default) -> (key: String, path: String)? {
        for (key, path) in [("acoustic_model", acousticModel), ("language_model", languageModel), ("dictionary", dictionary)]
        where !fileManager.fileExists(atPath: path) {
            return (key, path)
        }
        return nil
    }

    /// What is wrong with the files of `language`'s model, in one line that names the file and
    /// says what to do; nil when all three exist.
    public func missingFileProblem(language: String) -> String? {
        guard let missing = firstMissingFile() else { return nil }
        if self == .debianEnglish {
            return "\(missing.path) does not exist: install pocketsphinx-en-us (apt-get install pocketsphinx-en-us)"
        }
        let folder = (acousticModel as NSString).deletingLastPathComponent
        return "[recognizer.\(language)] \(missing.key) names \(missing.path), which does not exist; "
            + "install the model or fix the path (`parleyd model check \(folder)` checks a model folder)"
    }

    /// The model in `folder` laid out as `parleyd model install` leaves it: `acoustic/`,
    /// `xx.lm.bin` (or `xx.lm`, `xx.arpa`, ...: the language model keeps its format) and
    /// `xx.dict` (or `xx.dic`); nil unless all are there.
    public static func installed(in folder: String, language: String) -> RecognizerModel? {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        let endings = [".lm.bin", ".lm", ".arpa", ".lm.gz", ".arpa.gz", ".lm.dmp", ".dmp"]
        guard manager.fileExists(atPath: folder + "/acoustic", isDirectory: &isFolder), isFolder.boolValue,
            let languageModel = endings.map({ "\(folder)/\(language)\($0)" }).first(where: manager.fileExists),
            let dictionary = [".dict", ".dic"].map({ "\(folder)/\(language)\($0)" }).first(where: manager.fileExists)
        else { return nil }
        return RecognizerModel(acousticModel: folder + "/acoustic", languageModel: languageModel, dictionary: dictionary)
    }
}
