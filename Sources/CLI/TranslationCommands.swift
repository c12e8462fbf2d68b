import ArgumentParser
import FoundationEssentials
import ParleyCore
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
        guard id > 0 else { throw ValidationError("the id is \(id); give a turn's id, as `parley history` shows it") }
    }

    func run() throws {
        let turn = try options.call(Request(.retry(TurnReference(id: id))), as: TurnInfo.self)
        if options.json { return try options.printJSON(turn) }
        let other = turn.speaker.other.rawValue
        print("#\(turn.id)  \(turn.speaker.rawValue) \(turn.sourceLang): \(turn.sourceText)")
        print("     \(other) \(turn.targetLang): \(turn.translatedText ?? "(untranslated)")")
    }
}

/// `parley languages`: what can be heard, translated and spoken, at most 80 columns wide.
struct Languages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show which engine hears each language, which voice speaks it, and each direction's translation route.",
        discussion: """
            The matrix covers the languages Parley knows offline (en, es, fr, pt, it, ca, gl) and those in use: a route is \
            "=" (Apertium's own pair), "es" or "ca" (Apertium through that language), or another backend; what is missing \
            comes with how to get it. --country suggests languages for a country and says what works offline.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: "Suggest the languages of a country (its ISO 3166-1 code or English name: PT, Portugal, JP, Japan...) and say what works offline.")
    var country: String?

    func validate() throws {
        if let country, LanguageTable.country(country) == nil {
            throw ValidationError(
                "no languages are known for country \"\(country)\"; give one of these codes, or its name in English: "
                    + LanguageTable.countries.keys.sorted().joined(separator: " "))
        }
    }

    func run() throws {
        let info = try options.call(Request(.languages), as: LanguagesInfo.self)
        if options.json { return try options.printJSON(info) }
        if let country = country.flatMap(LanguageTable.country) {
            print(Self.suggestions(country: country, info), terminator: "")
        } else {
            print(Self.table(info), terminator: "")
        }
    }

    static let width = 80

    /// " (12.1 MiB)", or nothing when the size is unknown.
    static func size(_ bytes: Int64?) -> String {
        guard let bytes else { return "" }
        if bytes < 1 << 20 { return " (\(ScreenText.printf("%.1f", Double(bytes) / 1024)) KiB)" }
        return " (\(ScreenText.printf("%.1f", Double(bytes) / Double(1 << 20))) MiB)"
    }

    /// `text` broken between words into lines of at most `width` columns, every line after the
    /// first indented by `indent` spaces (the spaces inside a line are kept, so `first`'s columns
    /// line up). A word longer than a line is cut where the line ends.
    static func wrap(_ text: String, indent: Int = 2, first: String = "") -> String {
        ScreenText.lines(first + text, width: width, indent: indent).map { $0 + "\n" }.joined()
    }

    /// `text` cut to `limit` characters, its start and end kept.
    static func fit(_ text: String, _ limit: Int) -> String {
        guard text.count > limit, limit > 5 else { return text }
        let half = (limit - 3) / 2
        return "\(text.prefix(half))...\(text.suffix(limit - 3 - half))"
    }

    /// A matrix cell: "=" Apertium's own pair, the pivot's code, "-" none; other backends by a
    /// short name; a route with a Bergamot leg "B" and the languages it goes through ("Bpt" for
    /// "bergamot en-pt + apertium pt-es").
    static func cell(_ route: String?) -> String {
        guard let route else { return "-" }
        let words = route.split(separator: " ").map(String.init)
        let via = words.count == 3 && words[1] == "via" ? words[2] : nil
        if words.first == "bergamot" || route.contains(" + ") {
            // The legs' pairs ("en-pt"): every target but the last is a language in between.
            let targets = words.filter { $0.contains("-") }.compactMap { $0.split(separator: "-").last.map(String.init) }
            return "B" + targets.dropLast().joined()
        }
        switch words.first {
        case "apertium": return via ?? "="
        case "libretranslate": return "LT" + (via.map { "/\($0)" } ?? "")
        case "apertium-apy": return "apy" + (via.map { "/\($0)" } ?? "")
        default: return fit(route, 5)
        }
    }

    static func voice(_ language: LanguagesInfo.Language) -> String {
        guard language.speakable else { return "no" }
        let voice = language.voice ?? language.code
        if let engine = language.voiceEngine, engine != "espeak-ng" { return "\(engine) \(voice)" }
        return "espeak-ng \(voice)" + (voice != language.code && LanguageTable.info(language.code)?.voiceStandsIn == true ? " (stand-in)" : "")
    }

    static func heard(_ language: LanguagesInfo.Language) -> String {
        language.hearable || language.engine != nil ? language.engine ?? "yes" : "no"
    }

    /// The matrix: the languages (heard by, spoken by), the route of every direction, what is missing.
    static func table(_ info: LanguagesInfo) -> String {
        let directions = info.directions ?? []
        var matrix = LanguageTable.offline.map(\.code)
        for direction in directions where !matrix.contains(direction.source) { matrix.append(direction.source) }
        let shown = info.languages.filter { matrix.contains($0.code) || $0.inUse == true }
            .sorted { (matrix.firstIndex(of: $0.code) ?? 99, $0.code) < (matrix.firstIndex(of: $1.code) ?? 99, $1.code) }
        var rows = [["", "LANG", "NAME", "HEARD BY", "SPOKEN BY"]]
        for language in shown {
            rows.append([
                language.inUse == true ? "*" : " ", language.code, fit(language.name ?? "", 12), fit(heard(language), 18),
                fit(voice(language), 30),
            ])
        }
        var text = columns(rows)
        text += "(* in use)\n"
        if !directions.isEmpty {
            let codes = shown.map(\.code).filter { code in directions.contains { $0.source == code } }
            text += "\n"
            text += wrap(
                "Routes, from each row to each column: = Apertium's own pair; es, ca: Apertium through Spanish or Catalan; "
                    + "B Bergamot's model, then the languages its route goes through (Bpt: Portuguese); LT LibreTranslate; - none.", indent: 0)
            var grid = [["from\\to"] + codes]
            for source in codes {
                grid.append(
                    [source]
                        + codes.map { target in
                            source == target ? "." : cell(directions.first { $0.source == source && $0.target == target }?.route)
                        })
            }
            text += columns(grid, gap: 3)
            // The pair in use, each way, with every leg named.
            let inUse = shown.filter { $0.inUse == true }.map(\.code)
            let used = directions.filter { inUse.count == 2 && inUse.contains($0.source) && inUse.contains($0.target) && $0.route != nil }
            if !used.isEmpty {
                text += "In use:\n"
                for direction in used { text += wrap("\(direction.source)->\(direction.target): \(direction.route ?? "")", indent: 4, first: "  ") }
            }
        }
        var missing: [String] = []
        for language in shown where language.inUse == true {
            missing += language.missing ?? []
        }
        for direction in directions where direction.route == nil {
            let inUse = shown.contains { ($0.code == direction.source || $0.code == direction.target) && $0.inUse == true }
            if inUse, let line = direction.missing { missing.append("\(direction.source)->\(direction.target): \(line)") }
        }
        if !missing.isEmpty || !(info.missingPackages ?? []).isEmpty {
            text += "\nMissing:\n"
            for line in missing { text += wrap(line, indent: 4, first: "  ") }
            for language in shown where language.inUse != true {
                for line in language.missing ?? [] { text += wrap(line, indent: 4, first: "  ") }
            }
            if let packages = info.missingPackages, !packages.isEmpty {
                text += wrap(
                    "Apertium pairs not installed (routes through a pivot would become direct, or possible): apt-get install "
                        + packages.joined(separator: " "), indent: 4, first: "  ")
            }
        }
        for language in shown {
            guard let model = language.model else { continue }
            text += "\n\(language.code) live words (PocketSphinx): \(fit(model.origin, width - 29))\n"
            let room = width - 18 - 12
            text += "  acoustic model  \(fit(model.acousticModel, room))\(size(model.acousticModelBytes))\n"
            text += "  language model  \(fit(model.languageModel, room))\(size(model.languageModelBytes))\n"
            text += "  dictionary      \(fit(model.dictionary, room))\(size(model.dictionaryBytes))\n"
        }
        for backend in info.backends where !backend.available {
            text += wrap("backend \(backend.name) did not answer: \(backend.error ?? "unknown error")", indent: 2)
        }
        return text
    }

    /// What Parley can do for the languages of `country`, offline and with a server.
    static func suggestions(country: String, _ info: LanguagesInfo) -> String {
        var text = ""
        let inUse = info.languages.filter { $0.inUse == true }.map(\.code)
        for code in LanguageTable.countries[country] ?? [] {
            let name = LanguageTable.names[code] ?? code
            text += "\(country): \(name) (\(code))\(inUse.contains(code) ? ", in use" : "")\n"
            guard let language = info.languages.first(where: { $0.code == code }) else {
                text += "  parleyd did not say anything about \(code)\n"
                continue
            }
            text += "  heard by    \(heard(language))\n"
            text += "  spoken by   \(voice(language))\n"
            let directions = (info.directions ?? []).filter { $0.source == code || $0.target == code }
            if directions.isEmpty {
                let offline = (language.to + language.from).filter { $0.backends.contains("apertium") }
                let server = (language.to + language.from).filter { !$0.backends.contains("apertium") }
                if offline.isEmpty {
                    text += wrap(
                        "offline:    no Apertium pair reaches \(code), so it is not translated without a server; "
                            + "a LibreTranslate server does: list \"libretranslate\" in [translator] backends and set its url "
                            + "in [translator.libretranslate]", indent: 14, first: "  ")
                } else {
                    text += wrap("offline:    with " + Set(offline.map(\.language)).sorted().joined(separator: " "), indent: 14, first: "  ")
                }
                if !server.isEmpty {
                    text += wrap("by server:  with " + Set(server.map(\.language)).sorted().joined(separator: " "), indent: 14, first: "  ")
                }
            } else {
                func list(_ outgoing: Bool) -> String {
                    directions.filter { outgoing ? $0.source == code : $0.target == code }.map { direction in
                        let other = outgoing ? direction.target : direction.source
                        guard let route = direction.route else { return "\(other) (none)" }
                        let shown = cell(route)
                        return shown == "=" ? other : "\(other) (\(shown == "es" || shown == "ca" ? "via \(shown)" : route))"
                    }.joined(separator: ", ")
                }
                text += wrap("to:         " + list(true), indent: 14, first: "  ")
                text += wrap("from:       " + list(false), indent: 14, first: "  ")
                let missing = Set(directions.compactMap(\.missing)).sorted()
                for line in missing { text += wrap("missing:    " + line, indent: 14, first: "  ") }
            }
            for line in language.missing ?? [] { text += wrap("missing:    " + line, indent: 14, first: "  ") }
        }
        return text
    }

    /// Rows as left-aligned columns; the last column is not padded.
    static func columns(_ rows: [[String]], gap: Int = 2) -> String {
        let count = rows.map(\.count).max() ?? 0
        let widths = (0..<count).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        var text = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.rightPadded(to: widths[index])
            }
            var line = cells.joined(separator: String(repeating: " ", count: gap))
            while line.last?.isWhitespace == true { line.removeLast() }
            text += line + "\n"
        }
        return text
    }
}
