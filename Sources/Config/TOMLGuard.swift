import Foundation

// MARK: - A guard in front of the TOML parser

extension ParleyConfig {
    /// Text that would crash the TOML parser rather than fail: toml++ (under TOMLKit) asserts,
    /// and aborts the process even in release builds, where it expects a key and finds a
    /// character that cannot begin one: after `[` or `[[` of a table header (`[é]`, `[=]`),
    /// after `{` or `,` in an inline table; and where it expects a value in an array and finds a
    /// `}` (`[\n}`). None of that is valid TOML (a key is quoted or
    /// made of ASCII letters, digits, `_` and `-`), so it gets the one-line error of any other
    /// syntax error before the parser sees it, and a reload with it changes nothing.
    static func rejectUnparseable(_ text: String, source: String) throws(ConfigError) {
        let scalars = Array(text.unicodeScalars)
        var index = scalars.first == "\u{FEFF}" ? 1 : 0  // a byte-order mark, which the parser skips
        var line = 1
        var atLineStart = true
        var nesting: [Character] = []  // "{" inline tables and "[" arrays of values
        func peek(_ offset: Int = 0) -> Unicode.Scalar? { index + offset < scalars.count ? scalars[index + offset] : nil }
        func skipBlanks() { while let c = peek(), c == " " || c == "\t" { index += 1 } }
        func startsKey(allowingClose close: Unicode.Scalar?) throws(ConfigError) {
            skipBlanks()
            guard let c = peek() else { return }
            if c == "\"" || c == "'" || c == close { return }
            if c.isASCII, c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "-" { return }
            throw ConfigError(
                "\(source): line \(line): a key or table name must be ASCII letters, digits, _ or -, or quoted (\"...\"), "
                    + "not \(c.isASCII && c.properties.isWhitespace || c.value < 0x20 ? "a line break or control character" : "\"\(Character(c))...\"");"
                    + " fix the TOML syntax there")
        }
        // In an array of values, where a value or its `]` must come (after `[` or `,`, blank lines
        // and comments between): toml++ asserts on a `}` there, and a `,` is no value either.
        func startsValue() throws(ConfigError) {
            var ahead = index
            var at = line
            while ahead < scalars.count {
                let c = scalars[ahead]
                if c == "\n" { at += 1 } else if c == "#" {
                    while ahead < scalars.count, scalars[ahead] != "\n" { ahead += 1 }
                    continue
                } else if c != " " && c != "\t" && c != "\r" { break }
                ahead += 1
            }
            // toml++ also counts U+0085, U+2028 and U+2029 as whitespace that ends a value, and
            // skips none of them inside an array.
            guard ahead < scalars.count, ["}", ",", "\u{85}", "\u{2028}", "\u{2029}"].contains(scalars[ahead]) else { return }
            throw ConfigError(
                "\(source): line \(at): an array holds values, not \"\(Character(scalars[ahead]))...\" where one should be; fix the TOML syntax there")
        }
        func skipString(_ quote: Unicode.Scalar) {
            let triple = peek(1) == quote && peek(2) == quote
            index += triple ? 3 : 1
            while let c = peek() {
                if c == "\n" {
                    // An unclosed one-line string ends here; the line break is the main loop's to count.
                    if !triple { return }
                    line += 1
                }
                if c == "\\" && quote == "\"" {
                    index += 2
                    continue
                }
                if c == quote && (!triple || (peek(1) == quote && peek(2) == quote)) {
                    // A triple-quoted string may end with one or two quotes of its own before
                    // its closing three (`"""a""""` is `a"`): the whole run closes it.
                    var run = 1
                    while triple, run < 5, peek(run) == quote { run += 1 }
                    index += triple ? run : 1
                    return
                }
                index += 1
            }
        }
        while let c = peek() {
            if atLineStart, c == " " || c == "\t" {
                index += 1
                continue
            }
            let lineStart = atLineStart
            atLineStart = false
            switch c {
            case "\n":
                line += 1
                atLineStart = nesting.isEmpty
                index += 1
            case "#":
                while let next = peek(), next != "\n" { index += 1 }
            case "\"", "'":
                skipString(c)
            case "[" where lineStart && nesting.isEmpty:
                index += peek(1) == "[" ? 2 : 1
                try startsKey(allowingClose: nil)
            case "[":
                nesting.append("[")
                index += 1
                try startsValue()
            case "]":
                if nesting.last == "[" { nesting.removeLast() }
                index += 1
            case "{":
                nesting.append("{")
                index += 1
                try startsKey(allowingClose: "}")
            case "}":
                if nesting.last == "{" { nesting.removeLast() }
                index += 1
            case "," where nesting.last == "{":
                index += 1
                try startsKey(allowingClose: "}")
            case "," where nesting.last == "[":
                index += 1
                try startsValue()
            default:
                index += 1
            }
        }
    }
}
