import ArgumentParser
import Foundation
import ParleyConfig
import ParleyCore
import ParleyRecognition
import ParleySynthesis
import ParleyTranslation

/// `parleyd model`: adding a language. The checks and the copying live in ParleyRecognition.
struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Check a CMU Sphinx speech model, or install it, a translation model or a voice where Parley finds it.",
        discussion: """
            A model is a folder holding an acoustic model (a folder with feat.params, mdef, means, variances, \
            transition_matrices and mixture_weights or sendump: DIR/acoustic, DIR itself or the one folder \
            below it with an mdef), a language model (.lm.bin, .lm, .arpa, gzipped or not, or .lm.DMP) and a \
            dictionary (.dict or .dic), in DIR, DIR/etc or beside the acoustic model. \
            install-translation adds a Firefox Translations (Bergamot) model for one direction, \
            install-voice a Piper voice for one language.
            """,
        subcommands: [Check.self, Install.self, InstallTranslation.self, InstallVoice.self])

    /// Says `line` on standard error and exits with 1.
    static func fail(_ line: String) -> Never {
        FileHandle.standardError.write(Data("parleyd: \(line)\n".utf8))
        Foundation.exit(1)
    }

    /// The folder of engine `name` (its worker `worker` in it): in `engines` when given, else in
    /// the first of the installed engine folders that has it; when there is none, says so
    /// (`what`, as in "Bergamot's worker") and exits.
    static func engineFolder(_ name: String, worker: String, given engines: String?, what: String) -> String {
        let folder = (engines ?? TranscriberConfig.searchPath.first { FileManager.default.fileExists(atPath: $0 + "/" + name) }).map { $0 + "/" + name }
        guard let folder, FileManager.default.fileExists(atPath: folder + "/" + worker) else {
            fail("\(what) is not installed (no \(engines ?? TranscriberConfig.searchPath.joined(separator: " or "))/\(name)): run `make engines`, or give --engines; nothing was installed")
        }
        return folder
    }

    /// A two-letter ISO 639-1 code.
    static func validate(language: String?) throws {
        guard let language else { return }
        guard language.count == 2, language.allSatisfy({ $0.isASCII && $0.isLowercase }) else {
            throw ValidationError("--language \(language): use a two-letter ISO 639-1 code such as fr or de")
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that a model folder is complete, made for 16 kHz audio, and that its dictionary covers its language model.",
            discussion: "Prints one line per problem, naming the file and what to do, and exits with 1 if there is any.")

        @Argument(help: "The model's folder (an unpacked model tarball).")
        var directory: String

        @Option(name: .long, help: "The model's language (ISO 639-1): picks xx.lm.bin and xx.dict when the folder holds several.")
        var language: String?

        func validate() throws { try ModelCommand.validate(language: language) }

        func run() throws {
            let report = ModelCheck.check(directory: directory, language: language)
            for problem in report.problems { print(problem) }
            guard report.isUsable, let files = report.files else { throw ExitCode(1) }
            print("acoustic model  \(files.acousticModel)")
            print("language model  \(files.languageModel) (\(report.languageModelWords ?? 0) words)")
            print("dictionary      \(files.dictionary) (\(report.dictionaryWords ?? 0) words)")
            print("ok: install it with `parleyd model install \(directory) --language \(language ?? "LANG")` (LANG: its ISO 639-1 code)")
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a model, copy it where Parley looks for models, and print its [recognizer.xx] config table.",
            discussion: """
                By default the model goes to $XDG_DATA_HOME/parley/models/xx (~/.local/share/parley/models/xx), \
                where parleyd finds it for a language with no [recognizer.xx] table; it also looks in \
                /usr/local/share/parley/models/xx and /usr/share/parley/models/xx (the folders of $XDG_DATA_DIRS). \
                For the systemd service, install with sudo and --into /usr/local/share/parley/models/xx. \
                The table, printed on standard output, names the installed files: paste it into parley.toml to \
                name the model explicitly.
                """)

        @Argument(help: "The model's folder (an unpacked model tarball).")
        var directory: String

        @Option(name: .long, help: "The model's language (ISO 639-1), e.g. fr.")
        var language: String

        @Option(name: .long, help: "Where to install it (default: $XDG_DATA_HOME/parley/models/<language>).")
        var into: String?

        @Flag(name: .long, help: "Replace a model already installed there.")
        var force = false

        func validate() throws { try ModelCommand.validate(language: language) }

        func run() throws {
            let report = ModelCheck.check(directory: directory, language: language)
            guard report.isUsable, let files = report.files else {
                for problem in report.problems { FileHandle.standardError.write(Data("\(problem)\n".utf8)) }
                FileHandle.standardError.write(Data("nothing was installed; fix the problems above and run this again\n".utf8))
                throw ExitCode(1)
            }
            let environment = ProcessInfo.processInfo.environment
            let target = into ?? (ParleyConfig.modelDirectories(environment: environment)[0] + "/" + language)
            let installed: RecognizerModel
            do {
                installed = try ModelInstall.install(files, from: directory, language: language, into: target, replace: force)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                throw ExitCode(1)
            }
            let folder = (installed.acousticModel as NSString).deletingLastPathComponent
            let searched = ParleyConfig.modelDirectories(environment: environment).contains((folder as NSString).deletingLastPathComponent)
            let note =
                searched
                ? "installed in \(folder); parleyd uses it for \"\(language)\" when parley.toml has no [recognizer.\(language)] table, "
                    + "or name it there with this table:"
                : "installed in \(folder); add this table to parley.toml so that parleyd uses it:"
            FileHandle.standardError.write(Data("\(note)\n".utf8))
            print(ModelInstall.configTable(language: language, files: installed), terminator: "")
        }
    }

    struct InstallTranslation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install-translation",
            abstract: "Check a Firefox Translations (Bergamot) model, copy it where parleyd finds it, and measure it.",
            discussion: """
                DIR holds one direction's model as Mozilla publishes it (https://github.com/mozilla/translations): \
                model.xxyy.intgemm.alphas.bin, vocab.xxyy.spm (or srcvocab/trgvocab) and, optionally, \
                lex.*.xxyy.s2t.bin, for xx to yy. It goes to $XDG_DATA_HOME/parley/translation/xx-yy \
                (~/.local/share/parley/translation/xx-yy); parleyd also looks in /usr/local/share/parley/translation \
                and /usr/share/parley/translation (for the systemd service: sudo, and --into /usr/local/share/parley/translation). \
                Bergamot's worker (make engines) then loads it and translates a sentence, to check it and say \
                what it costs. From parleyd's next start the direction takes this model: a model made for the \
                direction replaces a route through another language (`parley languages` shows the route).
                """)

        @Argument(help: "The model's folder (an unpacked Firefox Translations model).")
        var directory: String

        @Option(name: .long, help: "Where to install it (default: $XDG_DATA_HOME/parley/translation).")
        var into: String?

        @Option(name: .long, help: "The engines folder holding bergamot/ (default: \(TranscriberConfig.searchPath.joined(separator: " or "))).")
        var engines: String?

        @Flag(name: .long, help: "Replace a model already installed for that direction.")
        var force = false

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let files: BergamotModelInstall.Files
            do {
                files = try BergamotModelInstall.find(in: directory)
            } catch {
                ModelCommand.fail("\(error)\nnothing was installed")
            }
            let folder = into ?? ParleyConfig.translationModelDirectories(environment: environment)[0]
            let engine = ModelCommand.engineFolder("bergamot", worker: "parley-bergamot", given: engines, what: "Bergamot's worker")
            let installed: String
            do {
                installed = try BergamotModelInstall.install(files, into: folder, replace: force)
            } catch {
                ModelCommand.fail("\(error)")
            }
            let pair = files.pair
            let measure: BergamotModelInstall.Measure
            do {
                measure = try await BergamotModelInstall.measure(pair, modelsFolder: folder, engine: engine)
            } catch {
                try? FileManager.default.removeItem(atPath: installed)
                ModelCommand.fail("the \(pair) model does not work: \(error); it was removed again from \(installed)")
            }
            print("installed \(pair) in \(installed)")
            print("\"\(measure.sentence)\" -> \"\(measure.translation)\"")
            let memory = measure.workerMiB.map { ", the worker holds \($0) MiB" } ?? ""
            print("loaded in \(measure.loadMs) ms; \(measure.sentenceMs) ms a sentence here\(memory)")
            let searched = ParleyConfig.translationModelDirectories(environment: environment).contains(URL(fileURLWithPath: folder).standardizedFileURL.path)
            print(
                searched
                    ? "parleyd takes it for \(pair.source)->\(pair.target) from its next start (parley languages shows the route)"
                    : "parleyd does not look in \(folder); install into one of \(ParleyConfig.translationModelDirectories(environment: environment).joined(separator: ", "))")
        }
    }

    struct InstallVoice: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install-voice",
            abstract: "Check a Piper voice, copy it where parleyd finds it, and measure it.",
            discussion: """
                MODEL.onnx is a Piper voice (https://huggingface.co/rhasspy/piper-voices), with its MODEL.onnx.json \
                beside it. It goes to $XDG_DATA_HOME/parley/voices/xx (~/.local/share/parley/voices/xx; xx: the \
                language its configuration names, or --language); parleyd also looks in /usr/local/share/parley/voices \
                and /usr/share/parley/voices (for the systemd service: sudo, and --into /usr/local/share/parley/voices). \
                Piper's worker (make engines) then loads it and says a sentence, to check it and say what it costs. \
                From parleyd's next start Piper speaks that language with it, unless [voice.xx] engine names \
                another engine.
                """)

        @Argument(help: "The voice's model (MODEL.onnx, with MODEL.onnx.json beside it).")
        var model: String

        @Option(name: .long, help: "Its language (ISO 639-1), when its configuration names none or another.")
        var language: String?

        @Option(name: .long, help: "Where to install it (default: $XDG_DATA_HOME/parley/voices).")
        var into: String?

        @Option(name: .long, help: "The engines folder holding piper/ (default: \(TranscriberConfig.searchPath.joined(separator: " or "))).")
        var engines: String?

        @Flag(name: .long, help: "Replace a voice already installed for that language.")
        var force = false

        func validate() throws { try ModelCommand.validate(language: language) }

        func run() throws {
            let environment = ProcessInfo.processInfo.environment
            let found: PiperVoiceInstall.Found
            do {
                found = try PiperVoiceInstall.find(model: model, language: language)
            } catch {
                ModelCommand.fail("\(error)\nnothing was installed")
            }
            let folder = into ?? ParleyConfig.voiceDirectories(environment: environment)[0]
            let engine = ModelCommand.engineFolder("piper", worker: "parley-piper", given: engines, what: "Piper's worker")
            let installed: String
            do {
                installed = try PiperVoiceInstall.install(found, into: folder, replace: force)
            } catch {
                ModelCommand.fail("\(error)")
            }
            let voice = PiperVoice(language: found.language, model: installed, userInstalled: true)
            let sentence = BergamotModelInstall.sentences[found.language] ?? BergamotModelInstall.sentences["en", default: "Hello."]
            let measure: PiperVoiceInstall.Measure
            do {
                measure = try PiperVoiceInstall.measure(voice, sentence: sentence, engine: engine)
            } catch {
                try? FileManager.default.removeItem(atPath: (installed as NSString).deletingLastPathComponent)
                ModelCommand.fail("the voice \(voice.name) does not work: \(error); it was removed again from \(folder)")
            }
            print("installed \(voice.name) for \(found.language) in \((installed as NSString).deletingLastPathComponent)")
            let memory = measure.rssMiB.map { ", the worker holds \($0) MiB (PSS \(measure.pssMiB ?? 0) MiB)" } ?? ""
            print(
                String(
                    format: "loaded and warm in %d ms; \"%@\" (%.1f s of speech): first sound in %d ms, %.3f s of CPU per second of speech here%@",
                    measure.loadMs, sentence, measure.speechSeconds, measure.firstSoundMs, measure.realTimeFactor, memory))
            let searched = ParleyConfig.voiceDirectories(environment: environment).contains(URL(fileURLWithPath: folder).standardizedFileURL.path)
            print(
                searched
                    ? "parleyd speaks \(found.language) with it from its next start, unless [voice.\(found.language)] engine names another engine (parley languages shows the voice)"
                    : "parleyd does not look in \(folder); install into one of \(ParleyConfig.voiceDirectories(environment: environment).joined(separator: ", "))")
        }
    }
}
