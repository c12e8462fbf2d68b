import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyCore
import ParleyProtocol

/// Text for a terminal: its width in columns, and wrapping between words.
enum ScreenText {
    static func write(_ text: String) {
        writeAll(text, to: STDOUT_FILENO)
    }

    /// All of `text`'s bytes to `descriptor` (write(2) again after a short write or EINTR; other
    /// errors, such as a closed pipe, drop the rest).
    static func writeAll(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// What C's printf makes of `format` and `arguments` (`%.1f` rounds as printf does), in the
    /// C locale as Foundation's `String(format:)` did.
    static func printf(_ format: String, _ arguments: any CVarArg...) -> String {
        withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
            guard needed >= buffer.count else { return String(decoding: buffer.prefix(max(0, needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            return withVaList(arguments) { again in
                var larger = [CChar](repeating: 0, count: needed + 1)
                let written = Int(vsnprintf(&larger, larger.count, format, again))
                return String(decoding: larger.prefix(max(0, written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
    }

    /// Columns a character takes: 2 for East Asian wide ones and emoji, 1 otherwise.
    static func columns(_ character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first?.value else { return 0 }
        switch scalar {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// Columns `text` takes on a terminal: SGR escapes (colour, bold) take none.
    static func visibleColumns(_ text: String) -> Int {
        var columns = 0
        var escape = false
        for character in text {
            if escape {
                if character.isLetter { escape = false }
            } else if character == "\u{1B}" {
                escape = true
            } else {
                columns += Self.columns(character)
            }
        }
        return columns
    }

    /// `value` with `places` decimals, as `%.Nf` writes it (`-42.0`).
    static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "\(value)" }
        let scale = (0..<places).reduce(1) { total, _ in total * 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let fraction = String(scaled % scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard places > 0 else { return sign + String(scaled) }
        return sign + String(scaled / scale) + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }

    /// A level in dB with one decimal (`-42.0`).
    static func decibels(_ value: Float) -> String {
        decimal(Double(value), places: 1)
    }

    /// What the CLI prints is at most this wide, on a terminal or not (issue 38).
    static let width = 80

    /// `width`, or the terminal's width when `descriptor` is a narrower terminal.
    static func columns(of descriptor: Int32) -> Int {
        var size = winsize()
        guard isatty(descriptor) == 1, ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return width }
        return min(width, Int(size.ws_col))
    }

    /// Plain `text` (no escape sequences) as lines of at most `width` columns, broken between
    /// words, every line after a paragraph's first indented by `indent` spaces; the text's own
    /// line breaks are kept, and so is each paragraph's leading indent. A word wider than a line
    /// is cut where the line ends.
    static func lines(_ text: String, width: Int = width, indent: Int = 2) -> [String] {
        let width = max(width, 8)
        let indent = min(max(indent, 0), width / 2)
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = String(paragraph.prefix { $0 == " " }.prefix(width / 2))
            let pad = String(repeating: " ", count: indent)
            var line = leading
            var column = leading.count
            var hasWords = false
            // The spaces between two words on a line are kept ("a         en"); at a break they go.
            var spaces = 0
            for word in paragraph.dropFirst(leading.count).split(separator: " ", omittingEmptySubsequences: false) {
                guard !word.isEmpty else {
                    spaces += 1
                    continue
                }
                let gap = hasWords ? spaces + 1 : 0
                spaces = 0
                let wordColumns = word.reduce(0) { $0 + columns($1) }
                if hasWords, column + gap + wordColumns > width {
                    lines.append(line)
                    line = pad
                    column = pad.count
                    hasWords = false
                } else if hasWords {
                    line += String(repeating: " ", count: gap)
                    column += gap
                }
                for character in word {
                    // A word wider than a whole line: cut it where the line ends.
                    if column + columns(character) > width, column > pad.count {
                        lines.append(line)
                        line = pad
                        column = pad.count
                    }
                    line.append(character)
                    column += columns(character)
                }
                hasWords = true
            }
            lines.append(line)
        }
        return lines
    }

    /// `line` cut into lines of at most `width` columns between words; continuation lines are
    /// indented like the first (or by `hanging` columns), and a word wider than a line is cut.
    /// SGR escapes (colour, bold) take no columns and carry over to the continuation lines.
    static func wrap(_ line: String, width: Int, hanging: Int? = nil) -> [String] {
        let width = max(width, 2)
        let leading = String(line.prefix { $0 == " " }.prefix(width / 2))
        let indent = hanging.map { String(repeating: " ", count: min($0, width / 2)) } ?? leading
        var lines: [String] = []
        var current = leading
        var column = leading.count
        var hasWords = false  // the current line has a word after its indent
        var style = ""  // the SGR sequences in force at the end of `current`
        var word = ""
        var wordColumns = 0
        var wordStyle = ""  // the SGR sequences in force at the end of `word`
        var spaces = 0  // spaces between the last word and this one

        func newLine() {
            lines.append(current + "\u{1B}[0m")
            current = indent + style
            column = indent.count
            hasWords = false
        }
        func flushWord() {
            guard !word.isEmpty else { return }
            if wordColumns > 0 {
                if hasWords && column + spaces + wordColumns > width {
                    newLine()
                } else if hasWords {
                    current += String(repeating: " ", count: spaces)
                    column += spaces
                }
                hasWords = true
                spaces = 0
            }
            current += word
            column += wordColumns
            style = wordStyle
            word = ""
            wordColumns = 0
        }

        var characters = Substring(line.dropFirst(leading.count))
        while let character = characters.first {
            characters = characters.dropFirst()
            if character == "\u{1B}" {
                // An escape sequence, to its final letter ("[" is not one).
                var sequence = String(character)
                while let next = characters.first {
                    sequence.append(next)
                    characters = characters.dropFirst()
                    if next.isLetter { break }
                }
                word += sequence
                if sequence.hasSuffix("m") { wordStyle = sequence == "\u{1B}[0m" ? "" : wordStyle + sequence }
                continue
            }
            if character == " " {
                flushWord()
                if hasWords { spaces += 1 }
                continue
            }
            let needed = columns(character)
            if wordColumns > 0 && max(indent.count, leading.count) + wordColumns + needed > width {
                // A word wider than a whole line: cut it where the line ends.
                flushWord()
                newLine()
            }
            word += String(character)
            wordColumns += needed
        }
        flushWord()
        lines.append(current)
        return lines
    }
}

extension String {
    /// Spaces before the text up to `width` characters (`%6s`); a longer text is kept whole.
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }

    /// Spaces after the text up to `width` characters (`%-6s`); a longer text is kept whole.
    func rightPadded(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - count))
    }
}

/// The terminal settings `parley watch` found, restored on the way out.
nonisolated(unsafe) var savedTerminal = termios()

/// SIGINT or SIGTERM during `parley watch`: give the terminal back as it was, then exit.
func restoreTerminalAndExit(_: Int32) {
    tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
    _ = LiveView.Terminal.leaveScreen.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
    _exit(0)
}

extension String {
    /// Spaces after the text up to `width` UTF-16 units, or its first `width` of them, as
    /// NSString's `padding(toLength:withPad: " ", startingAt: 0)` makes it.
    func paddedUTF16(to width: Int) -> String {
        let length = utf16.count
        if length <= width { return self + String(repeating: " ", count: width - length) }
        return String(utf16.prefix(width)) ?? String(decoding: Array(utf16.prefix(width)), as: UTF16.self)
    }
}

/// A file read whole with read(2), or standard input for `-`.
enum InputFile {
    /// Why a file could not be read: the C library's words for errno.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    static func read(_ path: String) throws(Failure) -> Data {
        if path == "-" { return try readAll(STDIN_FILENO) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(code: errno) }
        defer { close(descriptor) }
        return try readAll(descriptor)
    }

    private static func readAll(_ descriptor: Int32) throws(Failure) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(code: errno)
            }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
