import ArgumentParser
import Foundation
import ParleyProtocol

/// parley: the command-line client for parleyd's control socket.
@main
struct Parley: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley",
        abstract: "Control and inspect a running parleyd.",
        discussion: "Exit codes: 0 ok, 1 the daemon answered with an error, 2 usage, 3 cannot connect.",
        version: ParleyVersion.string,
        subcommands: [Status.self, HistoryCommand.self, Version.self])

    /// Usage errors exit 2, as documented, rather than ArgumentParser's 64.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Options every subcommand takes.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: "The control socket (default: $PARLEY_SOCKET, else the daemon's default path).")
    var socket: String?

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    var socketPath: String {
        if let socket { return socket }
        if let fromEnvironment = ProcessInfo.processInfo.environment["PARLEY_SOCKET"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return ControlSocketPath.defaultPath()
    }

    /// Sends `request` and decodes a result of type `Payload`; prints errors and exits 1 or 3.
    func call<Payload: Codable & Sendable>(_ request: Request, as _: Payload.Type) throws -> Payload {
        let line: Data
        do {
            line = try ControlClient(path: socketPath).call(request)
        } catch {
            printError("parley: \(error)")
            throw ExitCode(error.isConnectionFailure ? 3 : 1)
        }
        let decoder = JSONDecoder()
        if let envelope = try? decoder.decode(Envelope.self, from: line), envelope.type == "error",
            let failure = try? decoder.decode(ErrorReply.self, from: line)
        {
            printError("parley: \(failure.data.message) (\(failure.data.code))")
            throw ExitCode(1)
        }
        do {
            return try decoder.decode(ResultReply<Payload>.self, from: line).data
        } catch {
            printError("parley: unexpected reply from parleyd: \(String(decoding: line.prefix(200), as: UTF8.self))")
            throw ExitCode(1)
        }
    }

    func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

extension ClientError {
    var isConnectionFailure: Bool {
        if case .cannotConnect = self { return true }
        return false
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what parleyd is doing.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let status = try options.call(Request(type: "status"), as: StatusInfo.self)
        if options.json { return try options.printJSON(status) }
        func side(_ name: String, _ side: StatusInfo.Side) -> String {
            let hearing = side.hearable ? "can be heard" : "cannot be heard: \(side.hint ?? "no speech model") (can type with `parley say`)"
            return "\(name)         \(side.language)  \(hearing)"
        }
        print("state     \(status.state)\(status.speaker.map { " (speaker \($0))" } ?? "")")
        print(side("a", status.a))
        print(side("b", status.b))
        print("mode      \(status.mode)")
        print("turns     \(status.turns)")
        print("session   \(status.sessionID.map(String.init) ?? "-")")
        print("devices   capture \(status.captureDevice), playback \(status.playbackDevice)")
        print("uptime    \(Int(status.uptimeSeconds)) s")
    }
}

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "Show past turns, newest first.")

    @OptionGroup var options: ClientOptions

    @Option(name: .long, help: "How many turns to show (1-10000).")
    var limit: Int = 20

    func validate() throws {
        guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 10000") }
    }

    func run() throws {
        let turns = try options.call(Request(type: "history", data: ["limit": .number(Double(limit))]), as: [TurnInfo].self)
        if options.json { return try options.printJSON(turns) }
        if turns.isEmpty { print("no turns yet") }
        for turn in turns {
            let other = turn.speaker == "a" ? "b" : "a"
            print("#\(turn.id)  \(turn.createdAt)  \(turn.speaker) \(turn.sourceLang) -> \(turn.targetLang)")
            print("  \(turn.speaker): \(turn.sourceText)")
            print("  \(other): \(turn.translatedText ?? "(untranslated: \(turn.error ?? "error"))")")
        }
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's version and protocol.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let version = try options.call(Request(type: "version"), as: VersionInfo.self)
        if options.json { return try options.printJSON(version) }
        print("parleyd \(version.version), protocol \(version.protocolVersion); parley \(ParleyVersion.string)")
    }
}
