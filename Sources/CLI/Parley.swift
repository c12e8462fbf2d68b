import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyCore
import ParleyProtocol

/// parley: the command-line client for parleyd's control socket. The `parley` executable only
/// calls `Parley.main()`.
public struct Parley: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "parley",
        abstract: "Control and inspect a running parleyd.",
        // The generated line, every option spelled out, is 85 columns; they are listed below it.
        usage: "parley [<options>] <subcommand> [<options>]",
        discussion: """
            --socket, --timeout, --json and --utc may come before the subcommand (parley --socket S status) \
            or after it (parley status --socket S).
            Exit codes: 0 ok, 1 the daemon answered with an error, 2 usage, 3 cannot connect, 4 no answer within --timeout.
            """,
        version: ParleyVersion.string,
        subcommands: [
            Status.self, Say.self, Listen.self, Stop.self, Pause.self, Resume.self, Swap.self, SetCommand.self,
            ConfigCommand.self, Reload.self, HistoryCommand.self, Favorite.self, Unfavorite.self, Replay.self, SessionCommand.self,
            Watch.self, Version.self, Retry.self, Languages.self, Web.self,
        ])

    /// The client options before the subcommand (`parley --socket S status`). ArgumentParser
    /// parses the root's options wherever they are on the line, before the subcommand or after
    /// it, and gives each subcommand's `@OptionGroup` of the same type the values parsed here.
    @OptionGroup var options: ClientOptions

    /// No subcommand: `parley` alone shows the help; options without one (`parley --socket S`)
    /// are a usage error.
    public func run() throws {
        guard CommandLine.arguments.count > 1 else { throw CleanExit.helpRequest(self) }
        throw ValidationError("give a subcommand after the options; `parley --help` lists them")
    }

    /// Every message is one line (wrapped at 80 columns) in one style, "parley: <what happened>;
    /// <what to do>"; usage errors exit 2, as documented, rather than ArgumentParser's 64.
    public static func main() {
        if let problem = Usage.notUTF8(Usage.rawArguments()) {
            printError("parley: " + problem)
            Glibc.exit(2)
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            switch exitCode(for: error) {
            case .success:
                // --help, --version, `parley` alone: at most 80 columns, or the terminal's width.
                let width = ScreenText.columns(of: STDOUT_FILENO)
                print(Usage.fitted(help: fullMessage(for: error, columns: width), width: width))
                Glibc.exit(0)
            case .validationFailure:
                printError(Usage.message(message(for: error), arguments: Array(CommandLine.arguments.dropFirst())))
                Glibc.exit(2)
            case let code:
                // The message was printed already (ExitCode), or the error is one parley does
                // not expect (it says what happened, and exits 1).
                let text = message(for: error)
                if !text.isEmpty { printError("parley: " + Usage.sentence(text)) }
                Glibc.exit(code.rawValue)
            }
        }
    }
}

/// Options every subcommand takes.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: "The control socket (default: $PARLEY_SOCKET, else the daemon's default path, else /run/parley/control.sock).")
    var socket: String?

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @Option(
        name: .long,
        help: "Seconds to wait for parleyd's answer (default 30, and for `say` the time its words take to speak); 0 waits as long as it takes.")
    var timeout: Double?

    @Flag(name: .long, help: "Show and read times in UTC instead of local time.")
    var utc = false

    /// How long to wait for an answer when --timeout is not given.
    static let defaultTimeout = 30.0

    /// The client's limit for one answer: --timeout, or 30 s and `extra` seconds more when it
    /// was not given; nil: none.
    func answerTimeout(allowing extra: Double = 0) -> Duration? {
        let seconds = timeout ?? Self.defaultTimeout + extra
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : nil
    }

    func validate() throws {
        if let timeout, !(0...86_400).contains(timeout) { throw ValidationError("--timeout is \(timeout); give 0 to 86400 seconds") }
    }

    /// A control connection with this command's timeout (and `extra` seconds more when
    /// --timeout was not given).
    func connect(allowing extra: Double = 0) throws(ClientError) -> ControlClient {
        try ControlClient(path: socketPath, timeout: answerTimeout(allowing: extra))
    }

    var socketPath: String {
        if let socket { return socket }
        if let fromEnvironment = ProcessInfo.processInfo.environment["PARLEY_SOCKET"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return ControlSocketPath.clientPath()
    }

    /// Sends `request` and decodes a result of type `Payload`; prints errors and exits 1, 3 or 4.
    /// `whenLate` is added to the message when no answer comes in time; `allowing` is added to
    /// the default wait (not to a --timeout given).
    func call<Payload: Codable & Sendable>(
        _ request: Request, as _: Payload.Type, whenLate: String? = nil, allowing extra: Double = 0
    ) throws -> Payload {
        let line: Data
        do {
            line = try connect(allowing: extra).call(request)
        } catch {
            if case .timedOut = error, let whenLate {
                printError("parley: \(error); \(whenLate)")
            } else {
                printError("parley: \(error)")
            }
            throw ExitCode(error.exitCode)
        }
        let decoder = JSONDecoder()
        if let envelope = try? decoder.decode(Envelope.self, from: line), envelope.type == "error",
            let failure = try? decoder.decode(ErrorReply.self, from: line)
        {
            printError(daemonError(failure.data))
            throw ExitCode(1)
        }
        do {
            return try decoder.decode(ResultReply<Payload>.self, from: line).data
        } catch {
            printError(
                "parley: parleyd's answer could not be read (\(String(decoding: line.prefix(200), as: UTF8.self))); "
                    + "check that parley and parleyd are the same version (`parley version`)")
            throw ExitCode(1)
        }
    }

    /// The daemon's error as parley says it: its message (which says what to do), and its code
    /// only with --json, for scripts.
    func daemonError(_ error: ErrorReply.Detail) -> String {
        "parley: \(Usage.sentence(error.message))\(json ? " (\(error.code))" : "")"
    }

    /// Sends a command whose result is the daemon's status, and prints what Parley does now in
    /// words ("listening to a (en)").
    func statusCommand(_ request: Request) throws {
        let status = try call(request, as: StatusInfo.self)
        if json { return try printJSON(status) }
        print(LiveView.describe(status))
    }

    func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

/// `message` on stderr, in lines of at most 80 columns (continuation lines indented by two).
func printError(_ message: String) {
    ScreenText.writeAll(ScreenText.lines(message).map { $0 + "\n" }.joined(), to: STDERR_FILENO)
}

extension ClientError {
    /// 3: cannot connect; 4: no answer in time; 1: anything else.
    var exitCode: Int32 {
        switch self {
        case .cannotConnect: 3
        case .timedOut: 4
        case .protocolFailure: 1
        }
    }
}
