import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyCore
import ParleyProtocol

/// `parley history`: search and manage past turns. Without a subcommand it lists them.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Show, search and manage past turns.",
        // `list` is the default: its options are given here too, or `history --help` would hide them.
        discussion: """
            Without a subcommand it lists past turns, newest first (as `parley history list`), with these options:
              --search <words>        Words to find in what was said or its translation.
              --favorites             Only favorites.
              --speaker <a|b>         Only turns of speaker a or b.
              --lang <code>           Only turns in or translated into this language.
              --since <when>          Only turns from then on: a day or a local time.
              --until <when>          Only turns before then (as --since).
              --session <id>          Only turns of this session.
              --limit <n>             How many turns to show (\(SettingBounds.spelled(HistoryQuery.limits)), default 20).
              --page <n>              Which page of --limit turns to show, from 1.
            `parley history list --help` says more.
            """,
        subcommands: [List.self, Export.self, Import.self, Delete.self, DeleteLast.self, Clear.self, Undo.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show past turns, newest first (the default).",
            discussion: "Search ignores case and accents: \"cafe\" finds \"café\". Every word must match, as a prefix.")

        @OptionGroup var options: ClientOptions

        @Option(name: .long, help: "Words to find in what was said or its translation.")
        var search: String?

        @Flag(name: .long, help: "Only favorites.")
        var favorites = false

        @Option(name: .long, help: "Only turns of speaker a or b.")
        var speaker: SpeakerArgument?

        @Option(name: .long, help: "Only turns spoken in or translated into this language (e.g. es).")
        var lang: String?

        @Option(name: .long, help: "Only turns from this moment on: a day (2026-11-22: local midnight, UTC with --utc), a local time (2026-11-22T08:00) or one with its zone (2026-11-22T08:00:00Z).")
        var since: String?

        @Option(name: .long, help: "Only turns before this moment (as --since).")
        var until: String?

        @Option(name: .long, help: "Only turns of this session.")
        var session: Int?

        @Option(name: .long, help: "How many turns to show (\(SettingBounds.spelled(HistoryQuery.limits))).")
        var limit: Int = 20

        @Option(name: .long, help: "Which page of --limit turns to show, from 1.")
        var page: Int = 1

        func validate() throws {
            guard HistoryQuery.limits.contains(limit) else {
                throw ValidationError("--limit is \(limit); give \(HistoryQuery.limits.lowerBound) to \(HistoryQuery.limits.upperBound)")
            }
            guard page >= 1 else { throw ValidationError("--page is \(page); give 1 or more") }
            if let session, session < 1 { throw ValidationError("--session is \(session); give a session id, 1 or more") }
        }

        func run() throws {
            let query = HistoryQuery(
                limit: limit, offset: page > 1 ? (page - 1) * limit : nil, search: search, favorites: favorites ? true : nil,
                speaker: speaker?.speaker, lang: lang, since: try since.map { try LocalTime.time($0, option: "--since", utc: options.utc) },
                until: try until.map { try LocalTime.time($0, option: "--until", utc: options.utc) }, session: session.map(Int64.init))
            let turns = try options.call(Request(.history(query)), as: [TurnInfo].self)
            if options.json { return try options.printJSON(turns) }
            if turns.isEmpty { print(query == HistoryQuery(limit: limit) ? "no turns yet" : "no turns match") }
            for turn in turns { turn.show(utc: options.utc) }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the history to stdout, oldest first, as JSON (which `parley history import` reads back) or CSV.")

        @OptionGroup var options: ClientOptions

        @Option(name: .long, help: "json or csv.")
        var format: ExportFormat

        @Option(name: .long, help: "Only turns from this moment on: a day (2026-11-22: local midnight, UTC with --utc), a local time (2026-11-22T08:00) or one with its zone (2026-11-22T08:00:00Z).")
        var since: String?

        @Option(name: .long, help: "Only turns before this moment (as --since).")
        var until: String?

        enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
            case json, csv
        }

        func run() throws {
            let range = HistoryRange(
                since: try since.map { try LocalTime.time($0, option: "--since", utc: options.utc) },
                until: try until.map { try LocalTime.time($0, option: "--until", utc: options.utc) })
            let export = try options.call(Request(.historyExport(range)), as: HistoryExportInfo.self)
            switch format {
            case .json: try options.printJSON(export)
            case .csv: print(CSV.render(export.turns), terminator: "")
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add the turns of a JSON export (or of `parley history --json`) to the history.",
            discussion: "Turns already in the history are skipped, so importing a file twice adds nothing.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The JSON file; - reads stdin.")
        var file: String

        func run() throws {
            let data: Data
            do {
                data = try InputFile.read(file)
            } catch {
                printError(
                    "parley: cannot read \(file) (\(Usage.sentence(error.description))); give a file that "
                        + "`parley history export --format json` wrote, or - for standard input")
                throw ExitCode(1)
            }
            let export: HistoryExportInfo
            let decoder = JSONDecoder()
            if let full = try? decoder.decode(HistoryExportInfo.self, from: data) {
                export = full
            } else if let turns = try? decoder.decode([TurnInfo].self, from: data) {
                export = HistoryExportInfo(sessions: [], turns: turns)
            } else {
                printError("parley: \(file) is not a Parley history; make one with `parley history export --format json`")
                throw ExitCode(1)
            }
            var total = ImportResult(imported: 0, skipped: 0)
            for batch in try ImportBatches.make(export) {
                let result = try options.call(Request(.historyImport(batch)), as: ImportResult.self)
                total.imported += result.imported
                total.skipped += result.skipped
            }
            if options.json { return try options.printJSON(total) }
            print("imported \(total.imported) turns (\(total.skipped) already there)")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete one turn (it cannot be restored).")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The turn's id (see `parley history`).")
        var id: Int64

        func run() throws {
            let turn = try options.call(Request(.historyDelete(TurnReference(id: id))), as: TurnInfo.self)
            if options.json { return try options.printJSON(turn) }
            print("deleted #\(turn.id)")
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete every turn, favorites too.")

        @OptionGroup var options: ClientOptions

        @Flag(name: .long, help: "Yes, delete everything.")
        var yes = false

        func validate() throws {
            guard yes else { throw ValidationError("this deletes every turn, favorites too; add --yes to confirm") }
        }

        func run() throws {
            let result = try options.call(Request(.historyClear), as: ClearResult.self)
            if options.json { return try options.printJSON(result) }
            print("deleted \(result.deleted) turns")
        }
    }

    struct DeleteLast: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete-last", abstract: "Delete the newest turn of the current session (it cannot be restored).")

        @OptionGroup var options: ClientOptions

        func run() throws {
            let turn = try options.call(Request(.undo), as: TurnInfo.self)
            if options.json { return try options.printJSON(turn) }
            print("deleted #\(turn.id): \(turn.sourceText)")
        }
    }

    /// The old name of `delete-last`, which restored nothing: it says so and does nothing.
    struct Undo: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Renamed: `parley history delete-last` deletes the newest turn.", shouldDisplay: false)

        @OptionGroup var options: ClientOptions

        func validate() throws {
            throw ValidationError(
                "`history undo` is now `parley history delete-last` (it deletes the newest turn of the session); deleted turns cannot be restored")
        }
    }
}

struct Favorite: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a turn as a favorite (kept whatever the retention).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The turn's id (see `parley history`).")
    var id: Int64

    func run() throws {
        let turn = try options.call(Request(.favorite(TurnReference(id: id))), as: TurnInfo.self)
        if options.json { return try options.printJSON(turn) }
        print("#\(turn.id) is a favorite")
    }
}

struct Unfavorite: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Unmark a favorite.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The turn's id.")
    var id: Int64

    func run() throws {
        let turn = try options.call(Request(.unfavorite(TurnReference(id: id))), as: TurnInfo.self)
        if options.json { return try options.printJSON(turn) }
        print("#\(turn.id) is no longer a favorite")
    }
}

struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Speak a past turn's translation again (it is not stored again).")

    @OptionGroup var options: ClientOptions

    @Argument(help: "The turn's id.")
    var id: Int64

    func run() throws {
        let turn = try options.call(Request(.replay(TurnReference(id: id))), as: TurnInfo.self)
        if options.json { return try options.printJSON(turn) }
        print("\(turn.speaker.other.rawValue) \(turn.targetLang): \(turn.translatedText ?? "")")
    }
}

struct SessionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session", abstract: "Conversation sessions.", subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End the current session and start a new one.")

        @OptionGroup var options: ClientOptions

        func run() throws {
            let session = try options.call(Request(.sessionNew), as: SessionInfo.self)
            if options.json { return try options.printJSON(session) }
            print("session \(session.id) started (\(session.speakerA) <-> \(session.speakerB))")
        }
    }
}

extension TurnInfo {
    /// Three lines: id, time (local, or UTC with `utc`), languages and the engine that heard
    /// it (when an accurate engine did); what was said; its translation.
    func show(utc: Bool) {
        let other = speaker.other.rawValue
        let heard = (engine.map { "  heard by \($0)" } ?? "") + (route.map { "  translated by \($0)" } ?? "")
        print("#\(id)\(favorite ? " ★" : "")  \(LocalTime.display(createdAt, utc: utc))  \(speaker.rawValue) \(sourceLang) -> \(targetLang)\(heard)")
        print("  \(speaker.rawValue): \(sourceText)")
        print("  \(other): \(translatedText ?? "(untranslated: \(error ?? "error"))")")
    }
}

/// CSV as RFC 4180 has it: a header, comma-separated fields, quotes around fields that need them.
enum CSV {
    static let header = [
        "id", "session_id", "created_at", "speaker", "source_lang", "target_lang", "source_text", "translated_text", "ipa",
        "confidence", "status", "error", "favorite", "low_confidence", "asr_ms", "mt_ms", "tts_ms", "response_ms",
        "pause_ms", "ended_by", "speculated", "engine", "streaming_text", "route",
    ]

    static func render(_ turns: [TurnInfo]) -> String {
        var lines = [header.joined(separator: ",")]
        for turn in turns {
            let fields: [String?] = [
                String(turn.id), String(turn.sessionID), turn.createdAt, turn.speaker.rawValue, turn.sourceLang, turn.targetLang, turn.sourceText,
                turn.translatedText, turn.ipa, turn.confidence.map { String($0) }, turn.status.rawValue, turn.error, String(turn.favorite),
                String(turn.lowConfidence), turn.timings.asrMs.map(String.init), turn.timings.mtMs.map(String.init),
                turn.timings.ttsMs.map(String.init), turn.timings.responseMs.map(String.init),
                turn.timings.pauseMs.map(String.init), turn.timings.endedBy, turn.timings.speculated.map(String.init), turn.engine,
                turn.streamingText, turn.route,
            ]
            lines.append(fields.map { quote($0 ?? "") }.joined(separator: ","))
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    static func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacing("\"", with: "\"\"") + "\""
    }
}

/// An export cut into `history_import` requests that each fit in a request line.
enum ImportBatches {
    /// Leaves room for the envelope under the daemon's 64 KiB line limit.
    static let budget = maxLineBytes - 1_024

    static func make(_ export: HistoryExportInfo) throws -> [HistoryBatch] {
        let sessions = Dictionary(export.sessions.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var order: [Int64] = []
        var bySession: [Int64: [TurnInfo]] = [:]
        for turn in export.turns {
            if bySession[turn.sessionID] == nil { order.append(turn.sessionID) }
            bySession[turn.sessionID, default: []].append(turn)
        }
        let encoder = JSONEncoder()
        var batches: [HistoryBatch] = []
        for sessionID in order {
            let turns = bySession[sessionID] ?? []
            // A session the file does not describe starts with its first turn.
            let session = sessions[sessionID] ?? SessionInfo(
                id: sessionID, startedAt: turns.first?.createdAt ?? "", endedAt: nil,
                speakerA: turns.first?.languages.a ?? "", speakerB: turns.first?.languages.b ?? "")
            let sessionSize = try encoder.encode(session).count
            var batch: [TurnInfo] = []
            var size = sessionSize
            for turn in turns {
                let encoded = try encoder.encode(turn)
                guard encoded.count + sessionSize < budget else {
                    printError("parley: turn \(turn.id) is too long to import (\(encoded.count) bytes); it is skipped")
                    continue
                }
                if size + encoded.count >= budget {
                    batches.append(HistoryBatch(session: session, turns: batch))
                    batch = []
                    size = sessionSize
                }
                batch.append(turn)
                size += encoded.count + 1
            }
            if !batch.isEmpty { batches.append(HistoryBatch(session: session, turns: batch)) }
        }
        return batches
    }
}
