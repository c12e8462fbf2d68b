import ArgumentParser
import Foundation
import ParleyProtocol

/// `parley web`: where the caption page is and the code that pairs a phone.
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the caption page's address and pairing code.",
        discussion: """
            Open the address on a phone on the same network. Reading needs only the address; typing a reply, \
            repeating and swapping need the 6-digit code (the second address carries it). The code is new at each \
            start of parleyd. No QR code is printed yet.
            """)

    @OptionGroup var options: ClientOptions

    func run() throws {
        let info = try options.call(Request(.web), as: WebInfo.self)
        if options.json { return try options.printJSON(info) }
        guard info.enabled else {
            print("the caption page is off: set [web] enabled = true in the config (and listen = \"0.0.0.0\" for phones), then restart parleyd")
            return
        }
        let host = info.listen == "0.0.0.0" || info.listen == "::" ? (ProcessInfo.processInfo.hostName) : info.listen
        guard let plain = info.url(host: host, withCode: false) else {
            print("the caption page is not listening yet (the daemon is starting, or its port was taken: see the log)")
            return
        }
        print("address: \(plain)")
        if let code = info.code, let paired = info.url(host: host, withCode: true) {
            print("code:    \(code)")
            print("pairs:   \(paired)")
        } else {
            print("pairing: read-only (the page shows captions; nothing can be done from it)")
        }
        if info.listen == "127.0.0.1" || info.listen == "::1" {
            print("note:    it listens on this machine only; set [web] listen = \"0.0.0.0\" for phones on the network")
        }
    }
}
