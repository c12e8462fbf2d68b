import ArgumentParser
import Foundation
import ParleyConversation
import ParleyProtocol

/// parley: the command-line client for parleyd's control socket.
@main
struct Parley: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parley",
        abstract: "Control and inspect a running parleyd.",
        discussion: "Exit codes: 0 ok, 1 the daemon answered with an error, 2 usage, 3 cannot connect, 4 no answer within --timeout.",
        version: ParleyVersion.string,
        subcommands: [
            Status.self, Say.self, Listen.self, Stop.self, Pause.self, Resume.self, Swap.self, SetCommand.self,
            ConfigCommand.self, Reload.self, HistoryCommand.self, Favorite.self, Unfavorite.self, Replay.self, SessionCommand.self,
            Watch.self, Version.self, Retry.self, Languages.self, Web.self,
        ])

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
    @Option(name: .long, help: "The control socket (default: $PARLEY_SOCKET, else the daemon's default path, else /run/parley/control.sock).")
    var socket: String?

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @Option(name: .long, help: "Seconds to wait for parleyd's answer; 0 waits as long as it takes.")
    var timeout: Double = 30

    /// The client's limit for one answer; nil: none.
    var answerTimeout: Duration? {
        timeout > 0 ? .milliseconds(Int64((timeout * 1000).rounded(.up))) : nil
    }

    func validate() throws {
        guard timeout >= 0, timeout <= 86_400 else { throw ValidationError("--timeout is \(timeout); give 0 to 86400 seconds") }
    }

    /// A control connection with this command's timeout.
    func connect() throws(ClientError) -> ControlClient {
        try ControlClient(path: socketPath, timeout: answerTimeout)
    }

    var socketPath: String {
        if let socket { return socket }
        if let fromEnvironment = ProcessInfo.processInfo.environment["PARLEY_SOCKET"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        return ControlSocketPath.clientPath()
    }

    /// Sends `request` and decodes a result of type `Payload`; prints errors and exits 1, 3 or 4.
    /// `whenLate` is added to the message when no answer comes in time.
    func call<Payload: Codable & Sendable>(_ request: Request, as _: Payload.Type, whenLate: String? = nil) throws -> Payload {
        let line: Data
        do {
            line = try connect().call(request)
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

    /// Sends a command whose result is the daemon's status, and prints it.
    func statusCommand(_ request: Request) throws {
        let status = try call(request, as: StatusInfo.self)
        if json { return try printJSON(status) }
        print("state \(status.state)\(status.speaker.map { " (speaker \($0))" } ?? "")")
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
    /// 3: cannot connect; 4: no answer in time; 1: anything else.
    var exitCode: Int32 {
        switch self {
        case .cannotConnect: 3
        case .timedOut: 4
        case .protocolFailure: 1
        }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what parleyd is doing.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let status = try options.call(Request(type: "status"), as: StatusInfo.self)
        if options.json { return try options.printJSON(status) }
        func side(_ name: String, _ side: StatusInfo.Side) -> String {
            let hearing = side.hearable ? "can be heard\(side.model.map { " (model: \($0))" } ?? "")" : "cannot be heard: \(side.hint ?? "no speech model") (can type with `parley say`)"
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
        if status.historyDegraded || status.historyProblem != nil {
            print("history   \(status.historyProblem ?? "degraded")\(status.historyPending > 0 ? " (\(status.historyPending) waiting)" : "")")
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

/// "a" or "b".
enum SpeakerArgument: String, ExpressibleByArgument, CaseIterable {
    case a, b
}

struct Say: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Type a turn: it is translated, spoken to the other side and logged.")

    @OptionGroup var options: ClientOptions

    @Option(name: .long, help: "Who is typing: a or b.")
    var speaker: SpeakerArgument

    @Argument(help: "The words to translate.")
    var text: [String]

    func validate() throws {
        if text.joined(separator: " ").trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("give the words to translate")
        }
    }

    func run() throws {
        let turn = try options.call(
            Request(type: "say", data: ["speaker": .string(speaker.rawValue), "text": .string(text.joined(separator: " "))]),
            as: TurnInfo.self,
            whenLate: "the turn may still be translated and stored (see `parley history`), so do not send it again at once")
        if options.json { return try options.printJSON(turn) }
        print("\(turn.speaker) \(turn.sourceLang): \(turn.sourceText)")
        print("\(turn.speaker == "a" ? "b" : "a") \(turn.targetLang): \(turn.translatedText ?? "(untranslated: \(turn.error ?? "error"))")")
    }
}

struct Listen: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Push-to-talk: listen to speaker a or b next.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "a or b.")
    var speaker: SpeakerArgument

    func run() throws {
        try options.statusCommand(Request(type: "listen", data: ["speaker": .string(speaker.rawValue)]))
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "End the utterance being heard now, or cut the speech being played.")

    @OptionGroup var options: ClientOptions

    func run() throws { try options.statusCommand(Request(type: "stop")) }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Release the microphone (a turn in flight finishes first).")

    @OptionGroup var options: ClientOptions

    func run() throws { try options.statusCommand(Request(type: "pause")) }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Take the microphone back.")

    @OptionGroup var options: ClientOptions

    func run() throws { try options.statusCommand(Request(type: "resume")) }
}

extension RuntimeSettings {
    func show() {
        print("a \(speakerA), b \(speakerB), mode \(mode.rawValue), silence \(silenceMs) ms, echo tail \(echoTailMs) ms, min confidence \(minConfidence)")
    }
}

struct Swap: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Exchange the two speakers' languages, from the next turn.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let settings = try options.call(Request(type: "swap"), as: RuntimeSettings.self)
        if options.json { return try options.printJSON(settings) }
        settings.show()
    }
}

struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Change settings while running; languages and mode apply from the next turn.")

    @OptionGroup var options: ClientOptions

    @Option(name: .customLong("speaker-a"), help: "Speaker A's language (ISO 639-1).")
    var speakerA: String?

    @Option(name: .customLong("speaker-b"), help: "Speaker B's language (ISO 639-1).")
    var speakerB: String?

    @Option(name: .long, help: "alternate, one-way or manual.")
    var mode: String?

    @Option(name: .customLong("silence-ms"), help: "Silence that ends an utterance (50-10000).")
    var silenceMs: Int?

    @Option(name: .customLong("echo-tail-ms"), help: "Audio ignored after Parley speaks (0-10000).")
    var echoTailMs: Int?

    @Option(name: .customLong("min-confidence"), help: "Flag utterances recognized with less confidence (0-1).")
    var minConfidence: Double?

    func validate() throws {
        if speakerA == nil && speakerB == nil && mode == nil && silenceMs == nil && echoTailMs == nil && minConfidence == nil {
            throw ValidationError("give at least one setting to change, e.g. --silence-ms 900")
        }
    }

    func run() throws {
        var data: [String: JSONValue] = [:]
        if let speakerA { data["speaker_a"] = .string(speakerA) }
        if let speakerB { data["speaker_b"] = .string(speakerB) }
        if let mode { data["mode"] = .string(mode) }
        if let silenceMs { data["silence_ms"] = .number(Double(silenceMs)) }
        if let echoTailMs { data["echo_tail_ms"] = .number(Double(echoTailMs)) }
        if let minConfidence { data["min_confidence"] = .number(minConfidence) }
        let settings = try options.call(Request(type: "set", data: data), as: RuntimeSettings.self)
        if options.json { return try options.printJSON(settings) }
        settings.show()
    }
}

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "Show the settings in force.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let config = try options.call(Request(type: "config"), as: JSONValue.self)
        try options.printJSON(config)
    }
}

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live view: mic level, who speaks, the words so far, the last turns.",
        discussion: "On a terminal it redraws 10 times a second (q or Ctrl-C quits); otherwise it prints one plain line per event.")

    @OptionGroup var options: ClientOptions

    @Flag(name: .long, help: "Leave out the level events (plain and JSON output).")
    var quiet = false

    func run() throws {
        let client: ControlClient
        let view = LiveView()
        do {
            if let status = try? options.call(Request(type: "status"), as: StatusInfo.self) { view.apply(status: status) }
            if let turns = try? options.call(Request(type: "history", data: ["limit": .number(3)]), as: [TurnInfo].self) {
                view.turns = turns
            }
            struct InForce: Codable { var settings: RuntimeSettings }
            if let config = try? options.call(Request(type: "config"), as: InForce.self) { view.minConfidence = config.settings.minConfidence }
            // The timeout bounds connecting and the subscribe answer; events then come when they come.
            client = try options.connect()
            _ = try client.call(Request(type: "subscribe"))
        } catch {
            printError("parley: \(error)")
            throw ExitCode(error.exitCode)
        }
        if options.json || isatty(STDOUT_FILENO) == 0 {
            try follow(client, view: view)
        } else {
            view.colour = true
            try LiveView.Terminal.run(client: client, view: view)
        }
    }

    /// Plain lines (or the raw JSON events) for pipes, logs and dumb terminals.
    private func follow(_ client: ControlClient, view: LiveView) throws {
        while let line = try? client.readLine() {
            let type = (try? JSONDecoder().decode(Envelope.self, from: line))?.type ?? ""
            if quiet && type == EventType.level { continue }
            if options.json {
                print(String(decoding: line, as: UTF8.self))
            } else if let text = view.apply(event: line) {
                print(text)
            }
            fflush(nil)
        }
    }
}

/// What `parley watch` shows, updated from events.
final class LiveView {
    var state = "?"
    var speaker: String?
    var languages: [String: String] = [:]
    var levels: [Float] = []
    var lastLevel: Float = -96
    var partial = ""
    var turns: [TurnInfo] = []
    /// Words recognized with less confidence are doubtful: shown in brackets (`min_confidence`).
    var minConfidence = 0.5
    /// Doubtful words are also coloured (on a terminal).
    var colour = false

    /// `text` with its doubtful words marked.
    func marked(_ text: String, words: [WordConfidence]?) -> String {
        WordConfidence.marking(text, words: words, below: minConfidence, colour: colour)
    }

    func apply(status: StatusInfo) {
        state = status.state
        speaker = status.speaker
        languages = ["a": status.a.language, "b": status.b.language]
    }

    /// Updates the view; returns a plain line describing the event, if it is worth one.
    func apply(event line: Data) -> String? {
        let decoder = JSONDecoder()
        guard let type = (try? decoder.decode(Envelope.self, from: line))?.type else { return nil }
        struct Event<Payload: Decodable>: Decodable { var data: Payload }
        switch type {
        case EventType.level:
            guard let level = try? decoder.decode(Event<LevelEvent>.self, from: line).data else { return nil }
            lastLevel = level.rmsDB
            levels.append(level.rmsDB)
            if levels.count > 400 { levels.removeFirst(levels.count - 400) }
            return String(format: "level %.1f dB (peak %.1f)", level.rmsDB, level.peakDB)
        case EventType.state:
            guard let event = try? decoder.decode(Event<StateEvent>.self, from: line).data else { return nil }
            state = event.state
            speaker = event.speaker
            if event.state == "listening" { partial = "" }
            return "state \(event.state)\(event.speaker.map { " (\($0))" } ?? "")"
        case EventType.partial:
            guard let event = try? decoder.decode(Event<TextEvent>.self, from: line).data else { return nil }
            partial = event.text
            return "partial \(event.speaker): \(event.text)"
        case EventType.transcript:
            guard let event = try? decoder.decode(Event<TextEvent>.self, from: line).data else { return nil }
            partial = marked(event.text, words: event.words)
            let confidence = event.confidence.map { String(format: " (confidence %.2f)", $0) } ?? ""
            return "heard \(event.speaker) (\(event.language)): \(marked(event.text, words: event.words))\(confidence)"
        case EventType.translation:
            guard let event = try? decoder.decode(Event<TextEvent>.self, from: line).data else { return nil }
            return "translated (\(event.language)): \(event.text)"
        case EventType.turn:
            guard let turn = try? decoder.decode(Event<TurnInfo>.self, from: line).data else { return nil }
            turns.insert(turn, at: 0)
            turns = Array(turns.prefix(3))
            partial = ""
            return "turn #\(turn.id) \(turn.speaker) \(turn.sourceLang): \(marked(turn.sourceText, words: turn.words)) -> \(turn.targetLang): \(turn.translatedText ?? "(untranslated)")"
        case EventType.turnUpdated:
            guard let turn = try? decoder.decode(Event<TurnInfo>.self, from: line).data else { return nil }
            turns = turns.map { $0.id == turn.id ? turn : $0 }
            return "turn #\(turn.id) now \(turn.status): \(turn.translatedText ?? turn.error ?? "")"
        case EventType.noSpeech:
            partial = ""
            return "nothing recognized"
        case EventType.speechStart, EventType.speechEnd, EventType.speakingStart, EventType.speakingEnd:
            guard let event = try? decoder.decode(Event<SpeakerEvent>.self, from: line).data else { return nil }
            return "\(type.replacingOccurrences(of: "_", with: " ")) \(event.speaker) (\(event.language))"
        case EventType.error:
            guard let event = try? decoder.decode(Event<ErrorEvent>.self, from: line).data else { return nil }
            return "error: \(event.message)"
        case EventType.lagged:
            struct Lagged: Decodable { var missed: Int }
            guard let event = try? decoder.decode(Event<Lagged>.self, from: line).data else { return nil }
            return "(missed \(event.missed) events)"
        default:
            return nil
        }
    }

    /// The screen, `width` columns wide.
    func render(width: Int) -> [String] {
        let bars: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        let columns = max(10, width - 12)
        let wave = String(levels.suffix(columns).map { level -> Character in
            guard level > -60 else { return " " }
            return bars[min(bars.count - 1, Int((level + 60) / 60 * Float(bars.count)))]
        })
        let who = speaker.map { "speaker \($0) (\(languages[$0] ?? "?"))" } ?? "nobody"
        var lines = [
            "\u{1B}[1mParley\u{1B}[0m  \(state.replacingOccurrences(of: "_", with: " ")): \(who)" + String(repeating: " ", count: 4) + "q quits",
            String(format: "%6.1f dB ", lastLevel) + wave,
            "",
            partial.isEmpty ? "" : "\u{1B}[1m  \(partial)\u{1B}[0m",
            "",
        ]
        for turn in turns {
            let other = turn.speaker == "a" ? "b" : "a"
            lines.append("#\(turn.id)  \(turn.speaker) \(turn.sourceLang):  \u{1B}[1m\(marked(turn.sourceText, words: turn.words))\u{1B}[0m")
            lines.append("     \(other) \(turn.targetLang):  \u{1B}[1m\(turn.translatedText ?? "(untranslated)")\u{1B}[0m")
            lines.append("")
        }
        return lines
    }

    /// The interactive terminal: raw keys, redraws at 10 Hz, restores the terminal on the way out.
    enum Terminal {
        static func run(client: ControlClient, view: LiveView) throws {
            tcgetattr(STDIN_FILENO, &savedTerminal)
            var raw = savedTerminal
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
            signal(SIGINT, restoreTerminalAndExit)
            defer {
                tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
                print("\u{1B}[?25h", terminator: "")
            }
            print("\u{1B}[?25l", terminator: "")
            var descriptors = [
                pollfd(fd: client.fileDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
            ]
            var lastDraw = Date.distantPast
            while true {
                _ = poll(&descriptors, 2, 50)
                if descriptors[0].revents != 0 {
                    guard let lines = try client.readAvailableLines() else { return }
                    for line in lines { _ = view.apply(event: line) }
                }
                if descriptors[1].revents != 0 {
                    var key: UInt8 = 0
                    if read(STDIN_FILENO, &key, 1) == 1 && (key == UInt8(ascii: "q") || key == UInt8(ascii: "Q")) { return }
                }
                if Date().timeIntervalSince(lastDraw) >= 0.1 {
                    lastDraw = Date()
                    var size = winsize()
                    _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size)
                    let width = size.ws_col > 0 ? Int(size.ws_col) : 80
                    let screen = view.render(width: width).map { "\u{1B}[2K" + $0 }.joined(separator: "\n")
                    print("\u{1B}[H\u{1B}[J" + screen, terminator: "")
                    fflush(nil)
                }
            }
        }
    }
}

/// The terminal settings `parley watch` found, restored on the way out.
nonisolated(unsafe) var savedTerminal = termios()

/// SIGINT during `parley watch`: give the terminal back as it was, then exit.
func restoreTerminalAndExit(_: Int32) {
    tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
    let reset = "\u{1B}[?25h\n"
    _ = reset.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
    _exit(0)
}
