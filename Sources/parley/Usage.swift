/// What parley prints about its own usage, in its own form (issue 38): help at most 80 columns
/// wide.
enum Usage {
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
