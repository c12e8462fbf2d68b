import Foundation
import ParleyCore

/// A Firefox Translations (Bergamot) model a user adds: found in a folder, copied where
/// parleyd looks (`parleyd model install-translation`), then loaded by the worker and measured.
public enum BergamotModelInstall {
    /// A model's files, as Mozilla names them for the direction `pair`.
    public struct Files: Sendable, Equatable {
        public var pair: LanguagePair
        /// model.xxyy.intgemm.alphas.bin, the vocabularies, the lexical shortlist if any, and the
        /// folder's licence and readme files.
        public var paths: [String]
    }

    /// Why a folder holds no usable model: one line that says what to do.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The model in `directory`: one model.xxyy.intgemm.alphas.bin (xx and yy two-letter
    /// ISO 639-1 codes: the direction) with its vocabulary, there or in the one folder below.
    public static func find(in directory: String) throws(Problem) -> Files {
        let manager = FileManager.default
        var folder = directory
        var names = (try? manager.contentsOfDirectory(atPath: folder)) ?? []
        guard manager.fileExists(atPath: folder) else { throw Problem("\(directory) does not exist; give the folder of an unpacked Firefox Translations model") }
        if !names.contains(where: isModel), let only = names.filter({ isFolder(folder + "/" + $0) }).onlyElement {
            folder += "/" + only
            names = (try? manager.contentsOfDirectory(atPath: folder)) ?? []
        }
        let models = names.filter(isModel)
        guard let model = models.onlyElement else {
            throw Problem(
                models.isEmpty
                    ? "\(directory) holds no model.xxyy.intgemm.alphas.bin (xx, yy: the two languages); download a Firefox Translations model and unpack it"
                    : "\(directory) holds \(models.count) models (\(models.sorted().joined(separator: ", "))); give each its own folder")
        }
        let code = String(model.dropFirst("model.".count).dropLast(".intgemm.alphas.bin".count))
        let pair = LanguagePair(String(code.prefix(2)), String(code.dropFirst(2)))
        guard code.count == 4, code.allSatisfy({ $0.isASCII && $0.isLowercase }), pair.source != pair.target
        else { throw Problem("\(model): the name does not give a direction as two two-letter codes (model.enes.intgemm.alphas.bin is English to Spanish)") }
        let shared = "vocab.\(code).spm"
        let split = ["srcvocab.\(code).spm", "trgvocab.\(code).spm"]
        let vocabularies = names.contains(shared) || !split.contains(where: names.contains) ? [shared] : split
        if let missing = vocabularies.first(where: { !names.contains($0) }) {
            throw Problem("\(folder) has no \(missing) beside \(model); the model cannot be used without its vocabulary")
        }
        let shortlists = names.filter { $0.hasPrefix("lex.") && $0.hasSuffix(".\(code).s2t.bin") }.sorted().prefix(1)
        let licensing = names.filter { name in ["LICENSE", "LICENCE", "NOTICE", "README", "COPYING"].contains { name.uppercased().hasPrefix($0) } }.sorted()
        return Files(pair: pair, paths: ([model] + vocabularies + shortlists + licensing).map { folder + "/" + $0 })
    }

    /// Copies `files` to `folder/xx-yy`, which must not exist unless `replace`; returns that
    /// folder. The copy is made beside it and moved into place, so a failed install leaves nothing half-copied.
    public static func install(_ files: Files, into folder: String, replace: Bool = false) throws(Problem) -> String {
        let manager = FileManager.default
        let target = URL(fileURLWithPath: folder).standardizedFileURL.path + "/\(files.pair.source)-\(files.pair.target)"
        if manager.fileExists(atPath: target) && !replace { throw Problem("\(target) already exists; remove it, or pass --force to replace it") }
        let staging = URL(fileURLWithPath: folder).standardizedFileURL.path + "/.\(files.pair.source)-\(files.pair.target).installing"
        do {
            try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try? manager.removeItem(atPath: staging)
            try manager.createDirectory(atPath: staging, withIntermediateDirectories: true)
        } catch {
            throw Problem("\(folder) cannot be written (\(error.localizedDescription)); choose another folder with --into")
        }
        defer { try? manager.removeItem(atPath: staging) }
        for path in files.paths {
            do {
                // The file's bytes, not a link to where it was unpacked.
                let source = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
                try manager.copyItem(atPath: source, toPath: staging + "/" + (path as NSString).lastPathComponent)
            } catch {
                throw Problem("\(path) cannot be copied (\(error.localizedDescription)); check the disk and its permissions")
            }
        }
        do {
            if manager.fileExists(atPath: target) { try manager.removeItem(atPath: target) }
            try manager.moveItem(atPath: staging, toPath: target)
        } catch {
            throw Problem("\(target) cannot be replaced (\(error.localizedDescription)); check its permissions")
        }
        return target
    }

    /// What the worker made of an installed model: a sentence in its source language
    /// translated, how long that took once the model was loaded, and the worker's memory.
    public struct Measure: Sendable {
        public var sentence: String
        public var translation: String
        public var loadMs: Int
        /// The mean over `samples` translations of the sentence, the model warm.
        public var sentenceMs: Int
        public var workerMiB: Int?
    }

    /// A sentence of everyday speech in each offline language, for the check.
    public static let sentences: [String: String] = [
        "en": "Where is the train station? I would like a ticket to the city centre, please.",
        "es": "¿Dónde está la estación de tren? Quisiera un billete para el centro, por favor.",
        "fr": "Où est la gare ? Je voudrais un billet pour le centre-ville, s'il vous plaît.",
        "pt": "Onde fica a estação de comboios? Queria um bilhete para o centro, por favor.",
        "it": "Dov'è la stazione dei treni? Vorrei un biglietto per il centro, per favore.",
        "ca": "On és l'estació de tren? Voldria un bitllet per al centre, si us plau.",
        "gl": "Onde está a estación de tren? Quería un billete para o centro, por favor.",
    ]

    /// Loads `pair` from `modelsFolder` in the worker of the Bergamot engine in `engine` (the
    /// engines folder's `bergamot/`), translates a sentence `samples` times, and measures it.
    /// Throws what the worker said when the model does not load.
    public static func measure(
        _ pair: LanguagePair, modelsFolder: String, engine: String, python: String = "/usr/bin/python3", samples: Int = 5
    ) async throws -> Measure {
        let translator = BergamotTranslator(folder: engine, userModels: [modelsFolder], python: python, timeoutMs: 30_000)
        let sentence = sentences[pair.source] ?? sentences["en", default: ""]
        let clock = ContinuousClock()
        let loading = clock.now
        try await translator.prepare(pair)
        let loadMs = Int((clock.now - loading).milliseconds)
        var translation = ""
        let started = clock.now
        for _ in 0..<max(samples, 1) { translation = try await translator.translate(sentence, from: pair.source, to: pair.target) }
        let sentenceMs = Int((clock.now - started).milliseconds) / max(samples, 1)
        let memory = await translator.workerProcess.flatMap(residentMiB)
        return Measure(sentence: sentence, translation: translation, loadMs: loadMs, sentenceMs: sentenceMs, workerMiB: memory)
    }

    /// A process's resident memory in MiB (Linux's /proc), nil where it cannot be read.
    static func residentMiB(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kib / 1024
    }

    private static func isModel(_ name: String) -> Bool { name.hasPrefix("model.") && name.hasSuffix(".intgemm.alphas.bin") }

    private static func isFolder(_ path: String) -> Bool {
        var folder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &folder) && folder.boolValue
    }
}

extension Array {
    /// The element when there is exactly one.
    fileprivate var onlyElement: Element? { count == 1 ? first : nil }
}
