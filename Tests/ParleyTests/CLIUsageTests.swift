import ArgumentParser
import Foundation
import ParleyCore
import ParleyProtocol
import Testing
@testable import ParleyCLI

/// What a new user of `parley` meets (issue 38), checked on the CLI's own parsing and
/// formatting, without a daemon; a section for each thing the issue lists.
@Suite struct CLIUsageTests {
    /// The line parley prints for a usage error in `arguments`, as `Parley.main` makes it.
    static func usageError(_ arguments: [String]) -> String? {
        do {
            // Parsed and validated only: nothing is run, nothing is sent.
            _ = try Parley.parseAsRoot(arguments)
            return nil
        } catch {
            guard Parley.exitCode(for: error) == .validationFailure else { return nil }
            return Usage.message(Parley.message(for: error), arguments: arguments)
        }
    }

    static func status(a: StatusInfo.Side, b: StatusInfo.Side, state: String = "listening", speaker: String? = "b") -> StatusInfo {
        StatusInfo(
            version: "0.1.0", state: state, speaker: speaker, mode: "auto", a: a, b: b, turns: 3, sessionID: 1, uptimeSeconds: 12.5,
            captureDevice: "default", playbackDevice: "default")
    }

    // MARK: - 1. At most 80 columns

    @Test func wrappedLinesFitAndKeepEveryWord() {
        let text = "parley: " + String(repeating: "a few words that go on ", count: 12) + "/a/path/" + String(repeating: "x", count: 100)
        let lines = ScreenText.lines(text)
        for line in lines { #expect(line.count <= 80, "\(line.count): \(line)") }
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("  ") })
        // Nothing is lost: the words come back joined (the long path was cut, not shortened).
        let joined = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(joined.replacingOccurrences(of: " ", with: "") == text.replacingOccurrences(of: " ", with: ""))
        // The text's own line breaks are kept; a short line is left alone.
        #expect(ScreenText.lines("one\ntwo") == ["one", "two"])
    }

    @Test func statusLinesFitAndNameNoModelOrigin() {
        let hint = "no usable speech model for \"fr\": install a CMU Sphinx model with `parleyd model install DIR --language fr` (README: Adding a language)"
        let status = Self.status(
            a: .init(language: "en", hearable: true, model: "Debian pocketsphinx-en-us", engine: "moonshine-tiny"),
            b: .init(language: "fr", hearable: false, hint: hint))
        var degraded = status
        degraded.historyDegraded = true
        degraded.historyProblem = "the history was corrupt; it was moved to /var/lib/parley/history.sqlite.corrupt-2026-11-22T08:00:00Z"
        let lines = Status.lines(degraded)
        for line in lines { #expect(line.count <= 80, "\(line.count): \(line)") }
        #expect(lines.contains("a         en  heard by moonshine-tiny"), "\(lines)")
        #expect(!lines.joined().contains("pocketsphinx-en-us") && !lines.joined().contains("streaming model"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("b         fr  cannot be heard: no usable speech model") }, "\(lines)")
        // Continuation lines start under the value, not under the label.
        #expect(lines.filter { !$0.hasPrefix(" ") }.map { String($0.prefix(10)).trimmingCharacters(in: .whitespaces) }
            == ["state", "a", "b", "mode", "turns", "session", "devices", "uptime", "history"])
        #expect(lines.filter { $0.hasPrefix(" ") }.allSatisfy { $0.hasPrefix(String(repeating: " ", count: 10)) }, "\(lines)")
    }

    @Test func helpsUsageLineIsBrokenBetweenGroups() {
        let usage = "USAGE: parley history list [--socket <socket>] [--json] [--timeout <timeout>] [--utc] [--search <search>] [--favorites] [--speaker <speaker>]"
        let lines = Usage.fitted(help: "OVERVIEW: x\n\n" + usage + "\n", width: 80).split(separator: "\n").map(String.init)
        for line in lines { #expect(line.count <= 80, "\(line)") }
        #expect(lines.contains { $0.hasPrefix("       [--") }, "\(lines)")
        for group in ["[--socket <socket>]", "[--timeout <timeout>]", "[--speaker <speaker>]"] {
            #expect(lines.contains { $0.contains(group) }, "\(group) was broken: \(lines)")
        }
    }

    @Test func theRootUsageLineFits() {
        let help = Usage.fitted(help: Parley.helpMessage(columns: 80), width: 80)
        for line in help.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }

    @Test func theMissingSocketSaysWhatToDoInAFewLines() {
        let error = ClientError.cannotConnect(path: "/run/parley/control.sock", reason: "No such file or directory")
        let message = "parley: \(error)"
        #expect(message.hasPrefix("parley: cannot connect to /run/parley/control.sock (no such file or directory); "), "\(message)")
        #expect(message.contains("--socket") && message.contains("PARLEY_SOCKET"))
        let lines = ScreenText.lines(message)
        #expect(lines.count <= 3)
        for line in lines { #expect(line.count <= 80, "\(line)") }
    }

    // MARK: - 2. One style for errors

    @Test(arguments: [
        ["--bogus", "status"], ["listen"], ["listen", "c"], ["set"], ["set", "--silence-ms", "5"], ["history", "--limit", "0"],
        ["say", "--speaker", "a"], ["languages", "--country", "Narnia"], ["retry", "0"],
        ["history", "clear"], ["--timeout", "-1", "status"],
    ])
    func usageErrorsAreOneLineInParleysStyle(arguments: [String]) throws {
        let message = try #require(Self.usageError(arguments), "\(arguments) parsed")
        #expect(message.hasPrefix("parley: "), "\(message)")
        #expect(!message.contains("Error:") && !message.contains("Usage:") && !message.contains("\n"), "\(message)")
        // What happened, then what to do.
        #expect(message.contains("; "), "\(message)")
        let first = try #require(message.dropFirst("parley: ".count).first)
        #expect(!first.isUppercase, "\(message)")
        for line in ScreenText.lines(message) { #expect(line.count <= 80, "\(line)") }
    }

    @Test func argumentParsersWordsBecomeAClause() {
        #expect(
            Usage.sentence("The value 'c' is invalid for '<speaker>'. Please provide one of 'a' and 'b'.")
                == "the value 'c' is invalid for '<speaker>'; please provide one of 'a' and 'b'")
        #expect(Usage.sentence("PT is a code") == "PT is a code")
        #expect(Usage.sentence("give a setting, e.g. --silence-ms 900") == "give a setting, e.g. --silence-ms 900")
        let missing = Usage.message("Missing expected argument '<speaker>'", arguments: ["listen"])
        #expect(missing == "parley: missing expected argument '<speaker>'; `parley listen --help` says what it takes")
    }

    @Test func theDaemonsErrorCodeShowsOnlyWithJSON() throws {
        let reply = try JSONDecoder().decode(
            ErrorReply.self, from: Data(#"{"type":"error","data":{"code":"invalid_field","message":"data.id is required: the turn's id"}}"#.utf8))
        var options = try ClientOptions.parse([])
        #expect(options.daemonError(reply.data) == "parley: data.id is required: the turn's id")
        options = try ClientOptions.parse(["--json"])
        #expect(options.daemonError(reply.data) == "parley: data.id is required: the turn's id (invalid_field)")
    }

    // MARK: - 3. The nearest command

    @Test(arguments: [
        ("statsu", "did you mean `parley status`?"), ("stauts", "did you mean `parley status`?"), ("hist", "did you mean `parley history`?"),
        ("lang", "did you mean `parley languages`?"), ("wacth", "did you mean `parley watch`?"), ("sya", "did you mean `parley say`?"),
        ("re", "did you mean `parley reload`, `parley replay`, `parley resume` or `parley retry`?"),
    ])
    func aMistypedCommandGetsTheNearest(typed: String, suggestion: String) throws {
        let message = try #require(Self.usageError([typed]))
        #expect(message == "parley: unknown command \"\(typed)\"; \(suggestion)")
    }

    @Test func aSubcommandIsSuggestedUnderItsCommandAndOptionsMayComeFirst() throws {
        #expect(Self.usageError(["history", "exprot"]) == "parley: history has no command \"exprot\"; did you mean `parley history export`?")
        #expect(Self.usageError(["session", "nwe"]) == "parley: session has no command \"nwe\"; did you mean `parley session new`?")
        #expect(Self.usageError(["--socket", "/tmp/s", "--json", "stauts"]) == "parley: unknown command \"stauts\"; did you mean `parley status`?")
        // Nothing close: where to look.
        #expect(Self.usageError(["frobnicate"]) == "parley: unknown command \"frobnicate\"; `parley --help` lists them")
        // An argument too many is not an unknown command.
        let extra = try #require(Self.usageError(["listen", "a", "b"]))
        #expect(!extra.contains("unknown command") && extra.contains("'b'"), "\(extra)")
    }

    // MARK: - 4. `history --help` shows the list's options

    @Test func historyHelpShowsTheListsOptions() throws {
        let help = HistoryCommand.helpMessage(columns: 80)
        let listHelp = HistoryCommand.List.helpMessage(columns: 80)
        let listOptions = listHelp.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(separator: " ")
            guard let first = words.first, first.hasPrefix("--") else { return nil }
            return String(first)
        }
        #expect(listOptions.contains("--search") && listOptions.contains("--limit"), "\(listHelp)")
        for option in listOptions where !["--socket", "--json", "--timeout", "--utc", "--help"].contains(option) {
            #expect(help.contains("  \(option) "), "history --help lacks \(option)")
        }
        for line in help.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        // One line an option, none broken in two.
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        let first = try #require(lines.firstIndex { $0.hasSuffix("with these options:") })
        let last = try #require(lines.firstIndex { $0.hasSuffix("says more.") })
        #expect(lines[(first + 1)..<last].allSatisfy { $0.hasPrefix("  --") }, "\(lines[first...last].joined(separator: "\n"))")
    }

    // MARK: - 5. Countries by name

    @Test func countriesAreReadByCodeOrEnglishName() {
        let cases: [(String, String?)] = [
            ("PT", "PT"), ("pt", "PT"), ("Portugal", "PT"), ("PORTUGAL", "PT"), ("portugal ", "PT"), ("Japan", "JP"),
            ("united states", "US"), ("United-States", "US"), ("U.S.A.", "US"), ("UK", "GB"), ("United Kingdom", "GB"),
            ("España", "ES"), ("espana", "ES"), ("Spain", "ES"), ("South Korea", "KR"), ("Switzerland", "CH"), ("Canada", "CA"),
            ("Narnia", nil), ("", nil), ("XX", nil),
        ]
        for (typed, code) in cases { #expect(LanguageTable.country(typed) == code, "\(typed)") }
        // Every country Parley suggests languages for has a name.
        for code in LanguageTable.countries.keys { #expect(LanguageTable.countryNames[code]?.isEmpty == false, "\(code)") }
        #expect(Self.usageError(["languages", "--country", "Portugal"]) == nil)
    }

    // MARK: - 6. Modes in any case

    @Test func aModeIsReadInAnyCase() throws {
        #expect(SetCommand.mode("Auto") == .auto && SetCommand.mode("ONE-WAY") == .oneWay && SetCommand.mode("manual") == .manual)
        #expect(SetCommand.mode("sideways") == nil)
        let set = try SetCommand.parse(["--mode", "Auto"])
        #expect(set.change.mode == .auto)
        let languages = try SetCommand.parse(["--speaker-b", "DE"])
        #expect(languages.change.speakerB == "de")
        // A mode that is not one says so, not "give at least one setting".
        let wrong = try #require(Self.usageError(["set", "--mode", "sideways"]))
        #expect(wrong.contains("--mode is \"sideways\"") && wrong.contains("\"auto\""), "\(wrong)")
    }

    // MARK: - 7. `stop` in words

    @Test func stopSaysWhatItDid() {
        var status = Self.status(a: .init(language: "en", hearable: true), b: .init(language: "es", hearable: true), state: "speaking", speaker: "a")
        status.stopped = .speech
        #expect(Stop.said(status) == "stopped speaking")
        status.state = "recognizing"
        status.stopped = .utterance
        #expect(Stop.said(status) == "stopped hearing a (en): what was said so far is translated")
        status.state = "listening"
        status.speaker = "b"
        status.stopped = nil
        #expect(Stop.said(status) == "nothing to stop: listening to b (es)")
        #expect(!Stop.said(status).contains("state"))
    }

    @Test func stopIsOnlySentWhenItStopsSomething() throws {
        var status = Self.status(a: .init(language: "en", hearable: true), b: .init(language: "es", hearable: true))
        let plain = String(decoding: try JSONEncoder().encode(status), as: UTF8.self)
        #expect(!plain.contains("stopped"))
        status.stopped = .utterance
        let stopped = String(decoding: try JSONEncoder().encode(status), as: UTF8.self)
        #expect(stopped.contains(#""stopped":"utterance""#))
        #expect(try JSONDecoder().decode(StatusInfo.self, from: Data(stopped.utf8)).stopped == .utterance)
    }

    // MARK: - 8. The level at most once a second

    @Test func aPipeGetsALevelLineASecondAtMost() {
        var levels = LevelLines()
        let start = ContinuousClock.now
        // 25 level events a second for three seconds.
        let printed = (0..<75).filter { levels.due(at: start + .milliseconds($0 * 40)) }
        #expect(printed == [0, 25, 50])
    }

    // MARK: - 9. Only UTF-8

    @Test func argumentsThatAreNotUTF8AreRefused() throws {
        #expect(Usage.notUTF8([Array("say".utf8), Array("--speaker".utf8), Array("a".utf8), Array("café 👋".utf8)]) == nil)
        let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in ISO 8859-1
        let problem = try #require(Usage.notUTF8([Array("say".utf8), Array("--speaker".utf8), Array("a".utf8), latin1]))
        #expect(problem.hasPrefix("argument 4, \"caf\u{FFFD}\", is not UTF-8 text; "), "\(problem)")
        for line in ScreenText.lines("parley: " + problem) { #expect(line.count <= 80, "\(line)") }
    }

    @Test func sayRefusesTheMarkOfTextThatWasNotUTF8() throws {
        #expect(SayRequest.problem(with: "caf\u{FFFD}") == .notUTF8)
        #expect(SayRequest(speaker: .a, text: "caf\u{FFFD}") == nil)
        #expect(SayRequest.problem(with: " \n") == .empty)
        #expect(SayRequest.problem(with: "café 👋🏽") == nil)
        let replaced = try #require(Self.usageError(["say", "--speaker", "a", "caf\u{FFFD}"]))
        #expect(replaced.contains("UTF-8"), "\(replaced)")
        // The daemon too, for any client.
        let line = try JSONEncoder().encode(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string("caf\u{FFFD}")]))
        do {
            _ = try Request(line: line)
            Issue.record("a say holding U+FFFD was taken")
        } catch {
            #expect(error.code == .invalidField && error.message.contains("U+FFFD"), "\(error.message)")
        }
    }

    // MARK: - 10. How long a `say` may be

    @Test func sayTakesAtMostItsLimit() throws {
        let limit = SayRequest.maxCharacters
        #expect(SayRequest(speaker: .a, text: String(repeating: "é", count: limit)) != nil)
        #expect(SayRequest(speaker: .a, text: String(repeating: "é", count: limit + 1)) == nil)
        #expect(SayRequest.problem(with: String(repeating: "a", count: 2_279)) == .tooLong(characters: 2_279))
        // The CLI says it before sending, with the limit and what to do.
        let long = try #require(Self.usageError(["say", "--speaker", "a", String(repeating: "word ", count: 120)]))
        #expect(long.contains("\(limit)") && long.contains("say it in parts"), "\(long)")
        // And the daemon, for any client.
        let line = try JSONEncoder().encode(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string(String(repeating: "a", count: limit + 1))]))
        do {
            _ = try Request(line: line)
            Issue.record("a say of \(limit + 1) characters was taken")
        } catch {
            #expect(error.code == .invalidField && error.message.contains("at most \(limit)"), "\(error.message)")
        }
    }

    @Test func sayWaitsForItsWordsToBeSpokenUnlessTimeoutIsGiven() throws {
        let plain = try ClientOptions.parse([])
        #expect(plain.answerTimeout() == .seconds(30))
        // The longest say: 30 s and 0.15 s a character, as long again as espeak-ng takes.
        #expect(plain.answerTimeout(allowing: Say.speakingAllowance * Double(SayRequest.maxCharacters)) == .seconds(105))
        #expect(try ClientOptions.parse(["--timeout", "10"]).answerTimeout(allowing: 75) == .seconds(10))
        #expect(try ClientOptions.parse(["--timeout", "0"]).answerTimeout(allowing: 75) == nil)
    }

    // MARK: - 12. A line that fills the width

    @Test func aLineThatFillsTheWidthIsNotErasedAtItsEnd() {
        var screen = LiveView.Screen()
        let full = String(repeating: "x", count: 79) + "y"
        let output = screen.frame([full, "short"], width: 80, height: 24)
        // ESC[K with the cursor on the last column (autowrap off) would erase the "y".
        #expect(output.contains(full + "\u{1B}[0m\u{1B}[2;1H"), "\(output.debugDescription)")
        #expect(!output.contains("y\u{1B}[0m\u{1B}[K"))
        #expect(output.contains("short\u{1B}[0m\u{1B}[K"))
        // So is the header, whose "q quits" ends on the last column.
        let view = LiveView()
        view.state = "listening"
        view.speaker = "a"
        view.languages = ["a": "en", "b": "es"]
        var again = LiveView.Screen()
        let header = view.render(width: 80, height: 24)[0]
        #expect(ScreenText.visibleColumns(header) == 80)
        #expect(!again.frame([header], width: 80, height: 24).hasSuffix("\u{1B}[K"))
    }
}
