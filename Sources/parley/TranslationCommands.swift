import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyProtocol

/// `parley retry ID`: translate a stored untranslated turn again.
struct Retry: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Translate an untranslated turn again (see `parley history` for ids).",
        discussion: "The turn is updated in history; the translation is shown, not spoken. Exits 1 if it is still untranslated.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The turn's id.")
    var id: Int64

    func validate() throws {
        guard id > 0 else { throw ValidationError("the id must be a positive number, as `parley history` shows") }
    }

    func run() throws {
        let turn = try options.call(Request(.retry(TurnReference(id: id))), as: TurnInfo.self)
        if options.json { return try options.printJSON(turn) }
        let other = turn.speaker == "a" ? "b" : "a"
        print("#\(turn.id)  \(turn.speaker) \(turn.sourceLang): \(turn.sourceText)")
        print("     \(other) \(turn.targetLang): \(turn.translatedText ?? "(untranslated)")")
    }
}

/// `parley languages`: what can be heard, translated and spoken.
struct Languages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show, for each language, whether it can be heard, translated (to and from, by which backend) and spoken.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let info = try options.call(Request(.languages), as: LanguagesInfo.self)
        if options.json { return try options.printJSON(info) }
        print(Self.table(info), terminator: "")
    }

    /// " (12.1 MiB)", or nothing when the size is unknown.
    static func size(_ bytes: Int64?) -> String {
        guard let bytes else { return "" }
        if bytes < 1 << 20 { return " (\(ScreenText.printf("%.1f", Double(bytes) / 1024)) KiB)" }
        return " (\(ScreenText.printf("%.1f", Double(bytes) / Double(1 << 20))) MiB)"
    }

    static func table(_ info: LanguagesInfo) -> String {
        func routes(_ routes: [LanguagesInfo.Route]) -> String {
            routes.isEmpty ? "-" : routes.map { "\($0.language) (\($0.backends.joined(separator: ", ")))" }.joined(separator: ", ")
        }
        var rows = [["LANG", "HEARD", "SPOKEN", "TO", "FROM"]]
        for language in info.languages {
            let heard = language.hearable || language.engine != nil ? language.engine ?? "yes" : "no"
            rows.append([
                language.code, heard, language.speakable ? "yes" : "no", routes(language.to),
                routes(language.from),
            ])
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        var text = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.paddedUTF16(to: widths[index])
            }
            text += cells.joined(separator: "  ") + "\n"
        }
        for language in info.languages {
            guard let model = language.model else { continue }
            text += "\n\(language.code) is heard with: \(model.origin)\n"
            text += "  acoustic model  \(model.acousticModel)\(size(model.acousticModelBytes))\n"
            text += "  language model  \(model.languageModel)\(size(model.languageModelBytes))\n"
            text += "  dictionary      \(model.dictionary)\(size(model.dictionaryBytes))\n"
        }
        if info.languages.contains(where: { $0.model != nil }) { text += "\n" }
        for backend in info.backends where !backend.available {
            text += "backend \(backend.name) did not answer: \(backend.error ?? "unknown error")\n"
        }
        return text
    }
}
