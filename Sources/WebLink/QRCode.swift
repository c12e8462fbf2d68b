import CQREncode

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A QR code, made by libqrencode: a square of dark and light modules that a phone's camera
/// reads back as the text it carries (`parley web` shows the caption page's address as one).
public struct QRCode: Sendable, Equatable {
    /// Modules on a side, without the quiet zone.
    public let width: Int
    /// Row after row, `true` for a dark module.
    public let modules: [Bool]

    /// Light modules around the code that a reader needs to find it (ISO/IEC 18004 asks for 4).
    public static let quietZone = 4

    /// Why a text could not be made a QR code.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Longer than the largest QR code holds.
        case tooLong(bytes: Int)
        /// libqrencode failed otherwise (its errno).
        case encoderFailed(errno: Int32)

        public var description: String {
            switch self {
            case .tooLong(let bytes): "\(bytes) bytes do not fit in a QR code"
            case .encoderFailed(let errno): "libqrencode failed (errno \(errno))"
            }
        }
    }

    /// Encodes `text` as bytes (UTF-8) with error correction level M (15% of the code may be
    /// unreadable), in the smallest version that holds it.
    public init(encoding text: String) throws(Failure) {
        let made = text.withCString { QRcode_encodeString8bit($0, 0, QR_ECLEVEL_M) }
        guard let made else {
            let error = errno
            throw error == ERANGE ? Failure.tooLong(bytes: text.utf8.count) : Failure.encoderFailed(errno: error)
        }
        defer { QRcode_free(made) }
        let width = Int(made.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits say what part of the code it is.
        let bytes = UnsafeBufferPointer(start: made.pointee.data, count: width * width)
        self.width = width
        self.modules = bytes.map { $0 & 1 == 1 }
    }

    /// A code from its modules; nil unless `modules.count` is `width * width`.
    public init?(width: Int, modules: [Bool]) {
        guard width > 0, modules.count == width * width else { return nil }
        self.width = width
        self.modules = modules
    }

    /// Whether the module at `row`, `column` is dark; the quiet zone and beyond are light.
    public func isDark(row: Int, column: Int) -> Bool {
        guard (0..<width).contains(row), (0..<width).contains(column) else { return false }
        return modules[row * width + column]
    }

    /// The code for a terminal: two rows of modules in each line, drawn with the Unicode half
    /// blocks ▀ ▄ █ and a space, with the quiet zone around it. When `colored`, each line sets
    /// black on white (and resets at its end), so the code reads the same on a dark or a light
    /// terminal; without colour, dark modules are drawn in the terminal's foreground colour.
    public func terminalLines(colored: Bool = true) -> [String] {
        let range = -Self.quietZone..<(width + Self.quietZone)
        return stride(from: range.lowerBound, to: range.upperBound, by: 2).map { row in
            var line = colored ? Self.blackOnWhite : ""
            for column in range {
                switch (isDark(row: row, column: column), isDark(row: row + 1, column: column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            return colored ? line + Self.reset : line
        }
    }

    /// The code as a plain PBM image (P1), `scale` pixels a module, quiet zone included: for
    /// image tools and barcode readers.
    public func pbm(scale: Int = 4) -> String {
        let side = (width + 2 * Self.quietZone) * scale
        var text = "P1\n\(side) \(side)\n"
        for y in 0..<side {
            let row = y / scale - Self.quietZone
            let pixels = (0..<side).map { x in isDark(row: row, column: x / scale - Self.quietZone) ? "1" : "0" }
            text += pixels.joined(separator: " ") + "\n"
        }
        return text
    }

    /// Black characters on a white background (SGR 30 and 47).
    public static let blackOnWhite = "\u{1B}[30;47m"
    /// Back to the terminal's own colours.
    public static let reset = "\u{1B}[0m"
}
