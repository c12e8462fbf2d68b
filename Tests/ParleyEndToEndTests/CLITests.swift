import Foundation
import ParleyTesting
import Testing
@testable import ParleyProtocol

/// What a user of the real `parley` and `parleyd` binaries expects: exit codes, options in
/// either place, local time, and being told when a turn was not stored again.
@Suite("CLI", .serialized, .startsProcesses)
struct CLITests {
    @Test func parleydUsageErrorsExitTwo() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let parleyd = try EndToEnd.binary("parleyd")
        for arguments in [["--bogus"], ["--input", "in.wav"], ["model", "check"], ["model", "install", dir.path, "--language", "French"]] {
            let result = try EndToEnd.run(parleyd, arguments, in: dir, timeout: 30)
            #expect(result.status == 2, "parleyd \(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("Error:"), "parleyd \(arguments): \(result.stderr)")
        }
        #expect(try EndToEnd.run(parleyd, ["--help"], in: dir, timeout: 30).status == 0)
        // The client's usage errors too.
        let parley = try EndToEnd.binary("parley")
        #expect(try EndToEnd.run(parley, ["--bogus", "status"], in: dir, timeout: 30).status == 2)
        #expect(try EndToEnd.run(parley, ["history", "--since", "yesterday"], in: dir, timeout: 30).status == 2)
    }

    /// Everything a new user runs first prints lines of at most 80 columns (issue 38): the
    /// helps, usage errors, a missing socket, `status`, and the daemon's long refusals.
    @Test func everyLineFitsIn80Columns() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        let parley = try EndToEnd.binary("parley")
        let commands = [
            "status", "say", "listen", "stop", "pause", "resume", "swap", "set", "config", "reload", "history", "history list",
            "history export", "history import", "history delete", "history delete-last", "history clear", "favorite", "unfavorite",
            "replay", "session", "session new", "watch", "version", "retry", "languages", "web",
        ]
        var runs: [[String]] = [["--help"], []] + commands.map { $0.split(separator: " ").map(String.init) + ["--help"] }
        runs += [
            ["statsu"], ["set"], ["set", "--mode", "sideways"], ["listen", "c"], ["languages", "--country", "Narnia"], ["--bogus", "status"],
            ["say", "--speaker", "a"], ["say", "--speaker", "a", String(repeating: "far too long ", count: 50)], ["history", "--limit", "0"],
            ["history", "--since", "yesterday"], ["status", "--socket", dir.appendingPathComponent("nothing/control.sock").path],
        ]
        let withDaemon: [[String]] = [
            ["status"], ["set", "--speaker-b", "de"], ["set", "--speaker-b", "zz"], ["languages"], ["languages", "--country", "Japan"],
            ["say", "--speaker", "a", "good morning"], ["history"], ["stop"], ["retry", "999"], ["replay", "999"], ["web"],
        ]
        runs += withDaemon.map { $0 + ["--socket", daemon.socket] }
        for arguments in runs {
            let output = try EndToEnd.run(parley, arguments, in: dir, environment: ["PARLEY_SOCKET": daemon.socket], timeout: 60)
            #expect(!(output.stdout + output.stderr).isEmpty, "parley \(arguments) printed nothing")
            for line in (output.stdout + output.stderr).split(separator: "\n") {
                #expect(line.count <= 80, "parley \(arguments.prefix(4)): \(line.count) columns: \(line)")
            }
        }
    }

    @Test func optionsGoBeforeOrAfterTheSubcommand() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        let parley = try EndToEnd.binary("parley")
        func run(_ arguments: [String]) throws -> EndToEnd.Output { try EndToEnd.run(parley, arguments, in: dir, timeout: 60) }

        let before = try run(["--socket", daemon.socket, "status"])
        #expect(before.status == 0 && before.stdout.hasPrefix("state"), "\(before.stderr)")
        let after = try run(["status", "--socket", daemon.socket])
        #expect(after.status == 0 && after.stdout.hasPrefix("state"), "\(after.stderr)")
        // --option=value, several options, a default subcommand (history list) and a nested one.
        let said = try run(["--socket=\(daemon.socket)", "--json", "--timeout", "20", "say", "--speaker", "a", "good morning"])
        #expect(said.status == 0, "\(said.stderr)")
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(said.stdout.utf8))
        let listed = try run(["--json", "--socket", daemon.socket, "history", "--limit", "1"])
        #expect(try JSONDecoder().decode([TurnInfo].self, from: Data(listed.stdout.utf8)).map(\.id) == [turn.id])
        let session = try run(["--socket", daemon.socket, "--json", "session", "new"])
        #expect(session.status == 0 && session.stdout.contains("\"id\""), "\(session.stderr)")
        // Before the subcommand they are still checked, and a wrong socket is still a wrong socket.
        #expect(try run(["--timeout", "-1", "--socket", daemon.socket, "status"]).status == 2)
        #expect(try run(["--socket", dir.appendingPathComponent("nothing.sock").path, "status"]).status == 3)
        // What is not available is an error (exit 1) that says what to do, not a success (issue 28).
        let web = try run(["--socket", daemon.socket, "web"])
        #expect(web.status == 1 && web.message.contains("the caption page is off; set [web] enabled = true"), "\(web.status) \(web.stderr)")
    }

    /// Issue 38: a mistyped command gets the nearest, with exit 2.
    @Test func aMistypedCommandGetsTheNearest() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let typo = try EndToEnd.run(try EndToEnd.binary("parley"), ["stauts"], in: dir, timeout: 60)
        #expect(typo.status == 2 && typo.stderr == "parley: unknown command \"stauts\"; did you mean `parley status`?\n", "\(typo.stderr)")
    }

    /// Issue 38: `--country Portugal` was refused; only "PT" worked.
    @Test func languagesTakesACountrysName() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        for country in ["Portugal", "portugal", "PT"] {
            let portugal = try daemon.parley(["languages", "--country", country])
            #expect(portugal.status == 0 && portugal.stdout.hasPrefix("PT: Portuguese (pt)"), "\(portugal.stdout) \(portugal.stderr)")
        }
    }

    /// Issue 38: `set --mode Auto` alone said "give at least one setting to change".
    @Test func setTakesAModeInAnyCase() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        let mode = try daemon.parley(["set", "--mode", "Alternate"])
        #expect(mode.status == 0 && mode.stdout.contains("mode alternate"), "\(mode.stdout) \(mode.stderr)")
    }

    /// Issue 38: `stop` answered "state speaking".
    @Test func stopSaysWhatItDidInWords() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        // Nothing is heard or played (the microphone hears silence): stop says so, in words.
        let stop = try daemon.parley(["stop"])
        #expect(stop.status == 0 && stop.stdout.hasPrefix("nothing to stop: listening to a (en)"), "\(stop.stdout) \(stop.stderr)")
        #expect(!stop.stdout.contains("state"))
        #expect(try HistoryEndToEndTests.decode(StatusInfo.self, try daemon.parley(["stop", "--json"])).stopped == nil)
    }

    /// Issue 38: `parley watch` into a file printed the level 25 times a second.
    @Test func watchIntoAFilePrintsTheLevelASecondAtMost() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        let (watch, out, err) = try EndToEnd.start(try EndToEnd.binary("parley"), ["watch", "--socket", daemon.socket], in: dir, tag: "watch")
        defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
        func levels() -> Int {
            ((try? String(contentsOf: out, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasPrefix("level ") }.count
        }
        // From the first level line, for three seconds at least: parleyd sends 75 levels in
        // that time; a line a second is 4 at most (3 of them after the first), however late
        // the lines are read on a loaded machine.
        let deadline = Date(timeIntervalSinceNow: 60)
        while levels() < 1 && Date() < deadline && watch.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        try #require(levels() >= 1, "watch printed: \((try? String(contentsOf: out, encoding: .utf8)) ?? "") \((try? String(contentsOf: err, encoding: .utf8)) ?? "")")
        let first = Date()
        while Date().timeIntervalSince(first) < 3 && watch.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        let counted = levels()
        let seconds = Date().timeIntervalSince(first)
        #expect(counted >= 2, "the level is still printed, once a second")
        #expect(Double(counted) <= seconds + 2, "\(counted) level lines in \(seconds) s")
        // --json keeps every event, as parleyd sends it.
        let (json, jsonOut, _) = try EndToEnd.start(
            try EndToEnd.binary("parley"), ["watch", "--json", "--socket", daemon.socket], in: dir, tag: "watch-json")
        defer { if json.isRunning { kill(json.processIdentifier, SIGKILL) } }
        func jsonLevels() -> Int {
            ((try? String(contentsOf: jsonOut, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains(#""type":"level""#) }.count
        }
        while jsonLevels() < 10 && Date() < deadline && json.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(jsonLevels() >= 10)
    }

    /// Issue 38: `say` took bytes that are not UTF-8 and spoke replacement characters.
    @Test func argumentsThatAreNotUTF8AreRefused() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        // Latin-1 "café", as a terminal in that encoding sends it.
        let latin1 = try EndToEnd.run(
            "/bin/sh", ["-c", #""$0" say --speaker a "$(printf 'caf\351')" --socket "$1""#, try EndToEnd.binary("parley"), daemon.socket],
            in: dir, timeout: 60)
        #expect(latin1.status == 2 && latin1.message.contains("is not UTF-8 text"), "\(latin1.status) \(latin1.stderr)")
        #expect(try HistoryEndToEndTests.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).isEmpty)
    }

    /// Issue 38: a 2,279-character `say` timed out after 30 s while parleyd spoke for minutes.
    @Test func aSayTooLongIsRefusedByTheCLIAndTheDaemon() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        let long = String(repeating: "where is the station? ", count: 40)
        let refused = try daemon.parley(["say", "--speaker", "a", long])
        #expect(refused.status == 2 && refused.message.contains("at most \(SayRequest.maxCharacters)"), "\(refused.stderr)")
        let line = try ControlClient(path: daemon.socket).call(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string(long)]))
        let error = try JSONDecoder().decode(ErrorReply.self, from: line)
        #expect(error.data.code == "invalid_field" && error.data.message.contains("at most \(SayRequest.maxCharacters)"), "\(error)")
        #expect(try HistoryEndToEndTests.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).isEmpty)
    }

    /// Issue 38: importing a history's own turns added them again ("imported 2 turns (0 already
    /// there)"). An export imports as nothing new, and so do the turns of `history --json`,
    /// which come without their sessions: they were looked for in a session made up for them.
    @Test func aHistorysOwnExportImportsNothingNew() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        for words in ["where is the station", "thank you very much"] {
            let said = try daemon.parley(["say", "--speaker", "a", words])
            try #require(said.status == 0, "\(said.stderr)")
        }
        let exported = try daemon.parley(["history", "export", "--format", "json"])
        try #require(exported.status == 0, "\(exported.stderr)")
        let file = dir.appendingPathComponent("own.json")
        try exported.stdout.write(to: file, atomically: true, encoding: .utf8)
        let imported = try daemon.parley(["history", "import", file.path])
        #expect(imported.status == 0 && imported.stdout.contains("imported 0 turns (2 already there)"), "\(imported.stdout) \(imported.stderr)")
        #expect(try HistoryEndToEndTests.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).count == 2)
        // A new turn after the export is kept; importing the export again still adds nothing.
        _ = try daemon.parley(["say", "--speaker", "a", "good night"])
        let again = try daemon.parley(["history", "import", file.path])
        #expect(again.stdout.contains("imported 0 turns (2 already there)"), "\(again.stdout) \(again.stderr)")
        #expect(try HistoryEndToEndTests.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).count == 3)
        // `history --json` (turns without their sessions, newest first) imports too: its turns
        // are recognized in the session they are in, whatever session the file suggests.
        let listed = try daemon.parley(["history", "--json"])
        let listFile = dir.appendingPathComponent("list.json")
        try listed.stdout.write(to: listFile, atomically: true, encoding: .utf8)
        let fromList = try daemon.parley(["history", "import", listFile.path])
        #expect(fromList.stdout.contains("imported 0 turns (3 already there)"), "\(fromList.stdout) \(fromList.stderr)")
        #expect(try HistoryEndToEndTests.decode([TurnInfo].self, try daemon.parley(["history", "--json"])).count == 3)
    }

    @Test func aRepeatedSayIsReportedAsNotStoredAgain() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }

        let first = try daemon.parley(["say", "--speaker", "a", "where is the station"])
        #expect(first.status == 0 && !first.stdout.contains("not stored again"), "\(first.stdout) \(first.stderr)")
        let again = try daemon.parley(["say", "--speaker", "a", "where is the station"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("not stored again") && again.stdout.contains("#"), "\(again.stdout)")
        // With --json the answer stays parseable and the note goes to stderr.
        let json = try daemon.parley(["say", "--speaker", "a", "--json", "where is the station"])
        #expect(json.message.contains("not stored again"), "\(json.stderr)")
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(json.stdout.utf8))
        #expect(try daemon.call("history", as: [TurnInfo].self).map(\.id) == [turn.id])
        // Other words are stored, and said to be.
        let other = try daemon.parley(["say", "--speaker", "a", "where is the bus"])
        #expect(other.status == 0 && !other.stdout.contains("not stored again"), "\(other.stdout)")
    }

    @Test func timesAreLocalUnlessUTCIsAsked() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        let parley = try EndToEnd.binary("parley")

        let said = try daemon.parley(["say", "--speaker", "a", "--json", "good evening"])
        let turn = try JSONDecoder().decode(TurnInfo.self, from: Data(said.stdout.utf8))
        let instant = try #require(LocalTimeFormat.parse(turn.createdAt))
        // A zone whose date differs from UTC's at this moment, so that local midnight and UTC
        // midnight give different answers: UTC+13 in the afternoon (UTC), UTC-12 in the morning.
        let utcHour = Calendar.utc.component(.hour, from: instant)
        let zoneName = utcHour >= 12 ? "Etc/GMT-13" : "Etc/GMT+12"
        let zone = try #require(TimeZone(identifier: zoneName))
        func history(_ arguments: [String]) throws -> EndToEnd.Output {
            try EndToEnd.run(parley, ["history"] + arguments + ["--socket", daemon.socket], in: dir, environment: ["TZ": zoneName], timeout: 60)
        }

        // Shown in local time, or in UTC with --utc; --json keeps parleyd's UTC timestamp.
        let local = try history([])
        #expect(local.stdout.contains(LocalTimeFormat.show(instant, in: zone)), "\(local.stdout)")
        let utc = try history(["--utc"])
        #expect(utc.stdout.contains(LocalTimeFormat.show(instant, in: .utc) + " UTC"), "\(utc.stdout)")
        #expect(try history(["--json"]).stdout.contains(turn.createdAt))

        // --since DAY is that day's local midnight.
        var calendar = Calendar.utc
        calendar.timeZone = zone
        let localDay = calendar.startOfDay(for: instant)
        let nextDay = try #require(calendar.date(byAdding: .day, value: 1, to: localDay))
        func ids(_ arguments: [String]) throws -> [Int64] {
            let output = try history(arguments + ["--json"])
            try #require(output.status == 0, "\(arguments): \(output.stderr)")
            return try JSONDecoder().decode([TurnInfo].self, from: Data(output.stdout.utf8)).map(\.id)
        }
        #expect(try ids(["--since", LocalTimeFormat.day(localDay, in: zone)]) == [turn.id])
        #expect(try ids(["--since", LocalTimeFormat.day(nextDay, in: zone)]).isEmpty)
        #expect(try ids(["--until", LocalTimeFormat.day(nextDay, in: zone)]) == [turn.id])
        // The same days read as UTC midnight give the other answer (this zone's date is not UTC's).
        let utcDay = LocalTimeFormat.day(instant, in: .utc)
        #expect(try ids(["--utc", "--since", utcDay]) == [turn.id])
        if utcHour >= 12 {
            #expect(try ids(["--utc", "--since", LocalTimeFormat.day(localDay, in: zone)]).isEmpty)
        } else {
            #expect(try ids(["--utc", "--since", LocalTimeFormat.day(nextDay, in: zone)]) == [turn.id])
        }
    }

    @Test func watchSaysWhenTheDaemonGoesAwayAndWaitsForIt() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        defer { daemon.stop() }
        // Output to files, not a terminal: one plain line per event.
        let (watch, out, err) = try EndToEnd.start(try EndToEnd.binary("parley"), ["watch", "--quiet", "--socket", daemon.socket], in: dir, tag: "watch")
        defer { if watch.isRunning { kill(watch.processIdentifier, SIGKILL) } }
        func printed(_ file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        /// Says turns until `watch` has printed `count` of them (it may not have subscribed yet).
        func sayUntilWatched(_ count: Int) async throws {
            let deadline = Date(timeIntervalSinceNow: 60)
            var said = 0
            while printed(out).components(separatedBy: "turn #").count - 1 < count && Date() < deadline {
                said += 1
                _ = try daemon.parley(["say", "--speaker", "a", "turn number \(said) of \(count)"])
                try await Task.sleep(for: .milliseconds(200))
            }
            try #require(printed(out).components(separatedBy: "turn #").count - 1 >= count, "watch printed: \(printed(out)) \(printed(err))")
        }
        func waitFor(_ text: String, in file: URL) async throws {
            let deadline = Date(timeIntervalSinceNow: 30)
            while !printed(file).contains(text) && Date() < deadline && watch.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            try #require(printed(file).contains(text), "watch printed: \(printed(out)) \(printed(err))")
        }

        try await sayUntilWatched(1)
        daemon.stop()
        try await waitFor("parleyd went away", in: err)
        #expect(watch.isRunning, "watch exited when the daemon went away: \(printed(err))")
        daemon = try await HistoryEndToEndTests.startDaemon(in: dir)
        try await waitFor("parleyd is back", in: err)
        let before = printed(out).components(separatedBy: "turn #").count - 1
        try await sayUntilWatched(before + 1)
        #expect(watch.isRunning)
    }
}

/// The test's own reading of times, to compare with what the CLI prints.
enum LocalTimeFormat {
    static func parse(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    static func show(_ date: Date, in zone: TimeZone) -> String { format(date, "yyyy-MM-dd HH:mm:ss", zone) }

    static func day(_ date: Date, in zone: TimeZone) -> String { format(date, "yyyy-MM-dd", zone) }

    private static func format(_ date: Date, _ pattern: String, _ zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        return formatter.string(from: date)
    }
}

extension TimeZone {
    static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
}

extension Calendar {
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .utc
        return calendar
    }
}
