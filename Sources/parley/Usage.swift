import ArgumentParser

/// Usage errors in parley's one style, "parley: <what happened>; <what to do>" (issue 38):
/// ArgumentParser's messages are reworded, and its help fits in 80 columns.
enum Usage {
    /// The line printed for a usage error (ArgumentParser's, or a `ValidationError` of parley's
    /// own) met while parsing `arguments` (the command line without the program's name).
    static func message(_ text: String, arguments: [String]) -> String {
        let found = CommandPath(arguments)
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
