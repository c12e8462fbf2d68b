import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyProtocol
import ParleyWebLink

/// `parley web`: where the caption page is, the code that pairs a phone, and a QR code that
/// opens the page on a phone, paired.
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the caption page's address, pairing code and a QR code to scan.",
        discussion: """
            Scan the QR code with a phone on the same network, or open the address. Reading needs only the address; \
            typing a reply, repeating and swapping need the 6-digit code, which the QR code and the "pairs" address \
            carry (after #, so it is never sent in a request). The code is new at each start of parleyd. When the page \
            listens on every address ([web] listen = "0.0.0.0" or "::"), the addresses shown are this machine's IPv4 \
            addresses, the first of them in the QR code.
            """)

    /// When to draw the QR code.
    enum QRWhen: String, ExpressibleByArgument, CaseIterable {
        /// When standard output is a terminal.
        case auto
        case always
        case never
    }

    @OptionGroup var options: ClientOptions

    @Option(name: .long, help: "Draw the QR code: auto (when the output is a terminal), always or never.")
    var qr: QRWhen = .auto

    func run() throws {
        let info = try options.call(Request(.web), as: WebInfo.self)
        if options.json { return try options.printJSON(info) }
        // Not available: exit 1, as for any request the daemon cannot do (parley(1), EXIT STATUS).
        guard info.enabled else {
            printError("parley: the caption page is off; set [web] enabled = true in the config (and listen = \"0.0.0.0\" for phones), then restart parleyd")
            throw ExitCode(1)
        }
        let found = PageHosts.hosts(listen: info.listen, interfaces: InterfaceAddress.current())
        let hosts = found.isEmpty ? [ProcessInfo.processInfo.hostName] : found
        guard let host = hosts.first, let plain = info.url(host: host, withCode: false) else {
            printError("parley: the caption page is not listening yet; wait for parleyd to start, or see in its log whether its port was taken")
            throw ExitCode(1)
        }
        print("address: \(plain)")
        let paired = info.code.flatMap { _ in info.url(host: host, withCode: true) }
        if let code = info.code, let paired {
            print("code:    \(code)")
            print("pairs:   \(paired)")
        } else {
            print("pairing: read-only (the page shows captions; nothing can be done from it)")
        }
        for other in hosts.dropFirst() {
            if let url = info.url(host: other, withCode: false) { print("also:    \(url)") }
        }
        if found.isEmpty {
            print("note:    no network address found on this machine; a phone may not resolve \(host)")
        } else if PageHosts.isLoopback(info.listen) {
            print("note:    it listens on this machine only; set [web] listen = \"0.0.0.0\" for phones on the network")
        }
        let drawn = qr == .always || (qr == .auto && isatty(STDOUT_FILENO) == 1)
        guard drawn else { return }
        let link = paired ?? plain
        do {
            let code = try QRCode(encoding: link)
            print(paired == nil ? "\nscan to open the page:" : "\nscan to open the page, paired:")
            for line in code.terminalLines() { print(line) }
        } catch {
            print("qr:      not drawn: \(error)")
        }
    }
}
