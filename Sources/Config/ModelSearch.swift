import Foundation
import ParleyRecognition

// MARK: - Where installed models are found

extension ParleyConfig {
    /// The folders that hold installed models, one subfolder per language, searched in this
    /// order: `$XDG_DATA_HOME/parley/models` (by default `~/.local/share/parley/models`, where
    /// `parleyd model install` puts them), then `parley/models` under each of `$XDG_DATA_DIRS`
    /// (by default `/usr/local/share` and `/usr/share`).
    public static func modelDirectories(environment: [String: String]) -> [String] {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let user = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let system = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var folders: [String] = []
        for base in [user] + (system.isEmpty ? ["/usr/local/share", "/usr/share"] : system) {
            let folder = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/parley/models"
            if !folders.contains(folder) { folders.append(folder) }
        }
        return folders
    }

    /// The folders that hold translation models a user installed (`parleyd model
    /// install-translation`), one subfolder per direction ("en-es"), searched in this order:
    /// `parley/translation` beside each folder of `modelDirectories` (by default
    /// `~/.local/share/parley/translation`, then under `/usr/local/share` and `/usr/share`).
    public static func translationModelDirectories(environment: [String: String]) -> [String] {
        modelDirectories(environment: environment).map { String($0.dropLast("/models".count)) + "/translation" }
    }

    /// The folders that hold Piper voices a user installed (`parleyd model install-voice`), one
    /// subfolder per language ("en"), searched in this order: `parley/voices` beside each folder
    /// of `modelDirectories` (by default `~/.local/share/parley/voices`, then under
    /// `/usr/local/share` and `/usr/share`).
    public static func voiceDirectories(environment: [String: String]) -> [String] {
        modelDirectories(environment: environment).map { String($0.dropLast("/models".count)) + "/voices" }
    }

    /// The first model for `language` installed in the standard layout under `modelSearchPath`.
    public func installedModel(for language: String) -> RecognizerModel? {
        for folder in modelSearchPath {
            if let model = RecognizerModel.installed(in: folder + "/" + language, language: language) { return model }
        }
        return nil
    }
}

extension RecognizerModel {
    /// Where the model came from: the first line of a NOTICE file beside its files (the
    /// acoustic model's folder, or the folder above it), Debian's package for its English
    /// model, else "config".
    public func origin() -> String {
        let acoustic = URL(fileURLWithPath: acousticModel)
        let folders = [
            acoustic, acoustic.deletingLastPathComponent(),
            URL(fileURLWithPath: languageModel).deletingLastPathComponent(),
        ]
        for folder in folders {
            let notice = folder.appendingPathComponent("NOTICE").path
            if let text = try? String(contentsOfFile: notice, encoding: .utf8),
                let line = text.split(whereSeparator: \.isNewline).first?.trimmingCharacters(in: .whitespaces), !line.isEmpty
            {
                return line
            }
        }
        if acousticModel.hasPrefix("/usr/share/pocketsphinx/") { return "Debian pocketsphinx-en-us" }
        return "config"
    }

    /// Bytes in a file, or in all the files of a folder; nil when it cannot be read.
    public static func size(of path: String) -> Int64? {
        let manager = FileManager.default
        var isFolder: ObjCBool = false
        guard manager.fileExists(atPath: path, isDirectory: &isFolder) else { return nil }
        guard isFolder.boolValue else {
            return (try? manager.attributesOfItem(atPath: path))?[.size].flatMap { ($0 as? NSNumber)?.int64Value }
        }
        var total: Int64 = 0
        for name in (try? manager.contentsOfDirectory(atPath: path)) ?? [] {
            total += size(of: path + "/" + name) ?? 0
        }
        return total
    }
}
