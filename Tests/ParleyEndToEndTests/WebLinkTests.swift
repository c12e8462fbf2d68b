import Foundation
import ParleyTesting
import Testing
import ParleyProtocol
@testable import ParleyWebLink

/// What `parley web` prints for a phone: the QR code (made by libqrencode, drawn with half
/// blocks, read back by a barcode reader) and the address a phone can reach.
@Suite(.startsProcesses) struct WebLinkTests {
    static let link = "http://192.168.1.20:8470/#code=042137"

    @Test func theTerminalRowsMapBackToLibqrencodesMatrixWithAQuietZone() throws {
        let code = try QRCode(encoding: Self.link)
        #expect(code.width >= 21 && (code.width - 17) % 4 == 0, "a QR code is 17 + 4 × version modules wide")
        let lines = code.terminalLines(colored: false)
        let side = code.width + 2 * QRCode.quietZone
        #expect(lines.count == (side + 1) / 2, "two rows of modules a line")
        let inCode = QRCode.quietZone..<(QRCode.quietZone + code.width)
        let expected = (0..<side).map { row in
            (0..<side).map { column in
                inCode.contains(row) && inCode.contains(column)
                    && code.modules[(row - QRCode.quietZone) * code.width + column - QRCode.quietZone]
            }
        }
        #expect(try Self.modules(of: lines) == expected, "the printed rows are libqrencode's matrix in a light quiet zone of 4")
        // The finder patterns' dark corners, in three corners of the code.
        #expect(code.isDark(row: 0, column: 0) && code.isDark(row: 0, column: code.width - 1) && code.isDark(row: code.width - 1, column: 0))
    }

    @Test func coloredLinesSetBlackOnWhiteAndResetAtTheirEnd() throws {
        let code = try QRCode(encoding: Self.link)
        let colored = code.terminalLines()
        let plain = code.terminalLines(colored: false)
        for (line, bare) in zip(colored, plain) {
            #expect(line == QRCode.blackOnWhite + bare + QRCode.reset)
        }
    }

    @Test func aBarcodeReaderReadsTheLinkBackFromThePrintedRows() throws {
        let code = try QRCode(encoding: Self.link)
        // What the terminal shows, as an image: each character two pixels high, scaled up.
        let grid = try Self.modules(of: code.terminalLines())
        #expect(try Self.scan(Self.pbm(grid)) == Self.link)
        // libqrencode's matrix as an image reads the same.
        #expect(try Self.scan(code.pbm()) == Self.link)
    }

    @Test func aLinkTooLongForAQRCodeIsAnError() {
        #expect(throws: QRCode.Failure.tooLong(bytes: 8_000)) { try QRCode(encoding: String(repeating: "a", count: 8_000)) }
        #expect(QRCode(width: 3, modules: [true]) == nil)
    }

    @Test func aPageOnEveryAddressIsGivenThisMachinesRunningIPv4AddressesLANFirst() {
        let interfaces = [
            InterfaceAddress(interface: "lo", address: "127.0.0.1", isIPv4: true, isLoopback: true),
            InterfaceAddress(interface: "lo", address: "::1", isIPv4: false, isLoopback: true),
            InterfaceAddress(interface: "ppp0", address: "100.72.3.4", isIPv4: true),
            InterfaceAddress(interface: "eth0", address: "169.254.10.2", isIPv4: true),
            InterfaceAddress(interface: "docker0", address: "172.17.0.1", isIPv4: true, isRunning: false),
            InterfaceAddress(interface: "wlan0", address: "192.168.1.20", isIPv4: true),
            InterfaceAddress(interface: "wlan0", address: "fe80::1c2:3", isIPv4: false),
            InterfaceAddress(interface: "wlan0", address: "2001:db8::20", isIPv4: false),
            InterfaceAddress(interface: "usb0", address: "10.0.0.5", isIPv4: true),
            InterfaceAddress(interface: "usb1", address: "10.0.0.5", isIPv4: true),
        ]
        for wildcard in ["0.0.0.0", "::", "0:0:0:0:0:0:0:0"] {
            #expect(
                PageHosts.hosts(listen: wildcard, interfaces: interfaces) == ["192.168.1.20", "10.0.0.5", "100.72.3.4", "169.254.10.2"],
                "listening on \(wildcard)")
        }
        // No such address: nothing to offer (`parley web` then falls back to the host name).
        #expect(PageHosts.hosts(listen: "0.0.0.0", interfaces: Array(interfaces.prefix(2))).isEmpty)
        // A named address is the one to give, whatever the interfaces.
        #expect(PageHosts.hosts(listen: "192.168.1.20", interfaces: []) == ["192.168.1.20"])
        #expect(PageHosts.hosts(listen: "127.0.0.1", interfaces: interfaces) == ["127.0.0.1"])
        #expect(PageHosts.isLoopback("127.0.0.1") && PageHosts.isLoopback("::1") && !PageHosts.isLoopback("0.0.0.0"))
        #expect(!PageHosts.isWildcard("192.168.1.20") && !PageHosts.isWildcard("::1"))
    }

    @Test func thisMachinesInterfacesAreRead() {
        let addresses = InterfaceAddress.current()
        // Every Linux machine has a loopback interface, up.
        #expect(addresses.contains { $0.isLoopback && $0.address == "127.0.0.1" && $0.isIPv4 && $0.isRunning })
        #expect(!PageHosts.hosts(listen: "0.0.0.0", interfaces: addresses).contains("127.0.0.1"))
    }

    @Test func thePairingLinkCarriesTheCodeInItsFragment() {
        let info = WebInfo(
            enabled: true, listen: "0.0.0.0", port: 8470, pairing: "code", code: "042137", maxConnections: 16, maxMessageBytes: 4096)
        #expect(info.url(host: "192.168.1.20", withCode: true) == Self.link)
        #expect(info.url(host: "192.168.1.20", withCode: false) == "http://192.168.1.20:8470/")
        #expect(info.url(host: "fd00::20", withCode: false) == "http://[fd00::20]:8470/")
    }

    // MARK: - Reading a printed code back

    /// The modules a terminal shows for `lines` of half blocks (escape sequences left out):
    /// rows of `true` for dark, the quiet zone included.
    static func modules(of lines: [String]) throws -> [[Bool]] {
        var rows: [[Bool]] = []
        for line in lines {
            var top: [Bool] = []
            var bottom: [Bool] = []
            for character in withoutEscapes(line) {
                switch character {
                case "█": top.append(true); bottom.append(true)
                case "▀": top.append(true); bottom.append(false)
                case "▄": top.append(false); bottom.append(true)
                case " ": top.append(false); bottom.append(false)
                default: throw DecodeError(message: "unexpected \(character) in a QR code line")
                }
            }
            rows += [top, bottom]
        }
        // A code is an odd number of modules high: the last line's lower half is beyond it, light.
        if let last = rows.last, rows.count == (rows.first?.count ?? 0) + 1, !last.contains(true) {
            rows.removeLast()
        }
        return rows
    }

    static func withoutEscapes(_ line: String) -> String {
        line.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    struct DecodeError: Error, CustomStringConvertible { var description: String { message }; var message: String }

    /// A PBM image of `grid`, 4 pixels a module.
    static func pbm(_ grid: [[Bool]], scale: Int = 4) -> String {
        let height = grid.count * scale
        let width = (grid.first?.count ?? 0) * scale
        var text = "P1\n\(width) \(height)\n"
        for row in grid {
            let line = row.flatMap { Array(repeating: $0 ? "1" : "0", count: scale) }.joined(separator: " ") + "\n"
            text += String(repeating: line, count: scale)
        }
        return text
    }

    /// What zbarimg (zbar-tools, a barcode reader) reads in a PBM image.
    static func scan(_ pbm: String) throws -> String {
        let zbarimg = "/usr/bin/zbarimg"
        try #require(FileManager.default.isExecutableFile(atPath: zbarimg), "zbarimg is missing: install zbar-tools (make deps)")
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let image = dir.appendingPathComponent("code.pbm")
        try pbm.write(to: image, atomically: true, encoding: .ascii)
        let result = try EndToEnd.run(zbarimg, ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", image.path], in: dir, timeout: 60)
        try #require(result.status == 0, "zbarimg read nothing: \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .newlines)
    }
}
