import ArgumentParser
import ParleyProtocol

struct Reload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read the daemon's config file again (as SIGHUP does).",
        discussion: """
            Languages, mode, silence_ms, echo_tail_ms, min_confidence and the log level change at once; \
            other sections are listed as needing a restart. An invalid file changes nothing (exit 1).
            """)

    @OptionGroup var options: ClientOptions

    func run() throws {
        let info = try options.call(Request(.reload), as: ReloadInfo.self)
        if options.json { return try options.printJSON(info) }
        print("applied:        \(info.applied.isEmpty ? "nothing changed" : info.applied.joined(separator: ", "))")
        if !info.restartNeeded.isEmpty {
            print("restart needed: \(info.restartNeeded.joined(separator: ", ")) (systemctl restart parleyd)")
        }
        info.settings.show()
    }
}
