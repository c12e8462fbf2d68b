import Foundation

extension ModelProblem: Error {}

/// Copies a checked model into the folder layout Parley looks for: `acoustic/`, `xx.lm.bin`
/// (or `xx.lm`, `xx.arpa`: the language model keeps its format), `xx.dict`, and the model's
/// NOTICE, LICENSE, README and COPYING files.
public enum ModelInstall {
    /// Copies `files` (found in `directory`) to `target`, which must not exist unless
    /// `replace`; returns the installed files. The copy is made beside `target` and then
    /// moved into place, so a failed install leaves nothing half-copied.
    public static func install(
        _ files: RecognizerModel, from directory: String, language: String, into target: String, replace: Bool = false
    ) throws(ModelProblem) -> RecognizerModel {
        let manager = FileManager.default
        let target = URL(fileURLWithPath: target).standardizedFileURL.path
        if manager.fileExists(atPath: target) && !replace {
            throw ModelProblem(file: target, "already exists; remove it, or pass --force to replace it")
        }
        let parent = (target as NSString).deletingLastPathComponent
        let staging = parent + "/." + (target as NSString).lastPathComponent + ".installing"
        do {
            try manager.createDirectory(atPath: parent, withIntermediateDirectories: true)
            try? manager.removeItem(atPath: staging)
            try manager.createDirectory(atPath: staging + "/acoustic", withIntermediateDirectories: true)
        } catch {
            throw ModelProblem(file: parent, "cannot be written (\(error.localizedDescription)); choose another folder with --into")
        }
        defer { try? manager.removeItem(atPath: staging) }

        let lowerLM = files.languageModel.lowercased()
        let ending = ModelCheck.languageModelEndings.first { lowerLM.hasSuffix($0) } ?? ".lm"
        let languageModelName = language + ending
        let dictionaryName = language + ".dict"
        let skipped = Set([files.languageModel, files.dictionary].map(resolved))
        // The acoustic folder's files (the language model and dictionary go beside it).
        for name in ((try? manager.contentsOfDirectory(atPath: files.acousticModel)) ?? []).sorted() {
            let source = files.acousticModel + "/" + name
            guard !skipped.contains(resolved(source)), isRegularFile(source) else { continue }
            if files.acousticModel == directory && (isLicensing(name) || hasModelEnding(name)) { continue }
            try copy(source, to: staging + "/acoustic/" + name)
        }
        try copy(files.languageModel, to: staging + "/" + languageModelName)
        try copy(files.dictionary, to: staging + "/" + dictionaryName)
        for name in ((try? manager.contentsOfDirectory(atPath: directory)) ?? []).sorted() where isLicensing(name) {
            let source = directory + "/" + name
            if isRegularFile(source) { try copy(source, to: staging + "/" + name) }
        }

        do {
            if manager.fileExists(atPath: target) { try manager.removeItem(atPath: target) }
            try manager.moveItem(atPath: staging, toPath: target)
        } catch {
            throw ModelProblem(file: target, "cannot be replaced (\(error.localizedDescription)); check its permissions")
        }
        return RecognizerModel(
            acousticModel: target + "/acoustic", languageModel: target + "/" + languageModelName, dictionary: target + "/" + dictionaryName)
    }

    /// The `[recognizer.xx]` table that names `files`, for parley.toml.
    public static func configTable(language: String, files: RecognizerModel) -> String {
        func quoted(_ path: String) -> String {
            "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return """
            [recognizer.\(language)]
            acoustic_model = \(quoted(files.acousticModel))
            language_model = \(quoted(files.languageModel))
            dictionary = \(quoted(files.dictionary))

            """
    }

    /// NOTICE, LICENSE (or LICENCE), README and COPYING files, with any ending.
    static func isLicensing(_ name: String) -> Bool {
        let upper = name.uppercased()
        return ["NOTICE", "LICENSE", "LICENCE", "README", "COPYING"].contains { upper.hasPrefix($0) }
    }

    private static func hasModelEnding(_ name: String) -> Bool {
        let lower = name.lowercased()
        return (ModelCheck.languageModelEndings + ModelCheck.dictionaryEndings).contains { lower.hasSuffix($0) }
    }

    private static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    private static func isRegularFile(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && !folder.boolValue
    }

    /// Copies the file's contents (a link is followed, not copied).
    private static func copy(_ source: String, to destination: String) throws(ModelProblem) {
        do {
            try FileManager.default.copyItem(atPath: resolved(source), toPath: destination)
        } catch {
            throw ModelProblem(file: source, "cannot be copied to \(destination) (\(error.localizedDescription)); check permissions and free space")
        }
    }
}
