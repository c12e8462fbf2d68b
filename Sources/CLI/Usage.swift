import ArgumentParser
import Glibc

/// Usage errors in parley's one style, "parley: <what happened>; <what to do>" (issue 38):
/// ArgumentParser's messages are reworded, an unknown command gets the nearest ones, arguments
/// that are not UTF-8 are refused before anything is parsed, and its help fits in 80 columns.
enum Usage {
    /// The line printed for a usage error (ArgumentParser's, or a `ValidationError` of parley's
    /// own) met while parsing `arguments` (the command line without the program's name).
    static func message(_ text: String, arguments: [String]) -> String {
        let found = CommandPath(arguments)
        if let word = found.nextWord, text == "Unexpected argument '\(word)'", let unknown = unknownCommand(word, in: found) {
            return "parley: " + unknown
        }
        var sentence = self.sentence(text)
        if !sentence.contains("; ") {
            sentence += "; `\(found.spelled) --help` says what it takes"
        }
        return "parley: " + sentence
    }

    /// ArgumentParser's message as a clause of parley's: its first letter in lower case (unless
    /// the word is in capitals), sentences joined by "; ", no full stop at the end. "The value
    /// 'x' is invalid for '--speaker <speaker>'. Please provide one of 'a' and 'b'." becomes
    /// "the value 'x' is invalid for '--speaker <speaker>'; please provide one of 'a' and 'b'".
    static func sentence(_ text: String) -> String {
        var sentence = text.trimmingSpaces
        while sentence.last == "." { sentence.removeLast() }
        // A new sentence starts after ". " with a capital ("e.g. --silence-ms" goes on).
        var clauses: [Substring] = []
        var rest = Substring(sentence)
        while let stop = rest.firstRange(of: ". "), rest[stop.upperBound...].first?.isUppercase == true {
            clauses.append(rest[..<stop.lowerBound])
            rest = rest[stop.upperBound...]
        }
        clauses.append(rest)
        return clauses.map { clause in
            guard let first = clause.first, first.isUppercase, clause.dropFirst().first?.isUppercase != true else { return String(clause) }
            return first.lowercased() + clause.dropFirst()
        }.joined(separator: "; ")
    }

    /// "unknown command "statsu"; did you mean `parley status`?", or nil when `found`'s command
    /// has no subcommands (the word is then an argument too many).
    static func unknownCommand(_ word: String, in found: CommandPath) -> String? {
        let names = found.subcommandNames
        guard !names.isEmpty else { return nil }
        let what = found.names.isEmpty ? "unknown command \"\(word)\"" : "\(found.names.joined(separator: " ")) has no command \"\(word)\""
        let nearest = nearest(to: word, among: names)
        guard !nearest.isEmpty else { return "\(what); `\(found.spelled) --help` lists them" }
        let spelled = nearest.map { "`\(found.spelled) \($0)`" }
        return "\(what); did you mean \(spelled.dropLast().joined(separator: ", "))\(spelled.count > 1 ? " or " : "")\(spelled.last ?? "")?"
    }

    /// The names closest to `word`: those it begins (at least two letters), else those at the
    /// fewest edits (a letter added, dropped, changed, or two swapped) when that is at most one
    /// for a word of up to four letters and two for a longer one. Empty when none is that close.
    static func nearest(to word: String, among names: [String]) -> [String] {
        let typed = word.lowercased()
        if typed.count >= 2 {
            let started = names.filter { $0.hasPrefix(typed) }
            if !started.isEmpty { return started.sorted() }
        }
        let limit = typed.count <= 4 ? 1 : 2
        let scored = names.map { ($0, edits(typed, $0)) }
        guard let best = scored.map(\.1).min(), best <= limit else { return [] }
        return scored.filter { $0.1 == best }.map(\.0).sorted()
    }

    /// The optimal string alignment distance between `a` and `b`: insertions, deletions,
    /// substitutions and swaps of two neighbouring letters.
    static func edits(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { best = min(best, table[i - 2][j - 2] + 1) }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }

    /// The commands named on a command line (`parley history export ...`: history, export), and
    /// the word right after the last of them, when it is not an option (the options every
    /// command takes, and their values, may come between).
    struct CommandPath {
        var commands: [any ParsableCommand.Type] = []
        var nextWord: String?

        init(_ arguments: [String]) {
            var current: any ParsableCommand.Type = Parley.self
            var index = arguments.startIndex
            while index < arguments.endIndex {
                let argument = arguments[index]
                index += 1
                if argument == "--" { break }
                if argument.hasPrefix("-") {
                    // --socket S and --timeout T: skip the value too.
                    if Self.valued.contains(argument) { index += 1 }
                    continue
                }
                guard let next = current.configuration.subcommands.first(where: { $0._commandName == argument }) else {
                    nextWord = argument
                    return
                }
                commands.append(next)
                current = next
            }
        }

        /// The options of every command that take a value in the next argument.
        static let valued: Set = ["--socket", "--timeout"]

        /// The command's names after `parley`.
        var names: [String] { commands.map { $0._commandName } }

        /// `parley history export`.
        var spelled: String { (["parley"] + names).joined(separator: " ") }

        /// The subcommands of the last command named, as `--help` lists them.
        var subcommandNames: [String] {
            let command: any ParsableCommand.Type = commands.last ?? Parley.self
            return command.configuration.subcommands.filter { $0.configuration.shouldDisplay }.map { $0._commandName }
        }
    }

    /// ArgumentParser's help at most `width` columns wide: it wraps the rest, but not the USAGE
    /// line, which spells out every option. That line is broken between its bracketed groups,
    /// continuation lines under the command.
    static func fitted(help: String, width: Int) -> String {
        help.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line -> [String] in
            guard ScreenText.visibleColumns(String(line)) > width else { return [String(line)] }
            // A group ("[--speaker <speaker>]") stays whole: its spaces become no-break spaces.
            var kept = ""
            var depth = 0
            for character in line {
                if character == "[" || character == "<" { depth += 1 }
                if character == "]" || character == ">" { depth = max(0, depth - 1) }
                kept.append(character == " " && depth > 0 ? "\u{00A0}" : character)
            }
            let indent = line.hasPrefix("USAGE: ") ? 7 : line.prefix { $0 == " " }.count + 2
            return ScreenText.lines(kept, width: width, indent: indent).map { $0.replacing("\u{00A0}", with: " ") }
        }.joined(separator: "\n")
    }

    /// The first argument of the process (after its name) that is not UTF-8, described with
    /// what to do; nil when every one is.
    static func notUTF8(_ arguments: [[UInt8]]) -> String? {
        for (index, bytes) in arguments.enumerated() where String(validating: bytes, as: UTF8.self) == nil {
            let shown = String(decoding: bytes, as: UTF8.self)
            let what = index == 0 ? "the first argument" : "argument \(index + 1)"
            return "\(what), \"\(shown)\", is not UTF-8 text; type it in a terminal set to UTF-8 (a locale such as C.UTF-8), or convert it with iconv"
        }
        return nil
    }

    /// The process's arguments after its name, as bytes (CommandLine.arguments has already
    /// replaced what is not UTF-8).
    static func rawArguments() -> [[UInt8]] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return [] }
            return Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map { UInt8(bitPattern: $0) }
        }
    }
}

extension String {
    /// Without spaces and line breaks at either end.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }
}
