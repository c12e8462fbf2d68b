import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyCore
import ParleyProtocol

// The conversation's commands: status, version, say, listen, stop, pause, resume, swap, set
// and config.

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what parleyd is doing.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let status = try options.call(Request(.status), as: StatusInfo.self)
        if options.json { return try options.printJSON(status) }
        for line in Self.lines(status) { print(line) }
    }

    /// The status as a person reads it, in lines of at most 80 columns: a label, then its value
    /// (wrapped under the value). Where a side's streaming model came from is left to `parley
    /// languages` and `--json`.
    static func lines(_ status: StatusInfo) -> [String] {
        func side(_ side: StatusInfo.Side) -> String {
            let hearing =
                side.hearable
                ? side.engine.map { "heard by \($0)" } ?? "can be heard"
                : "cannot be heard: \(side.hint ?? "no speech model") (can type with `parley say`)"
            return "\(side.language)  \(hearing)"
        }
        var rows = [
            ("state", "\(status.state)\(status.speaker.map { " (speaker \($0))" } ?? "")"),
            ("a", side(status.a)), ("b", side(status.b)),
            ("mode", status.mode), ("turns", "\(status.turns)"), ("session", status.sessionID.map(String.init) ?? "-"),
            ("devices", "capture \(status.captureDevice), playback \(status.playbackDevice)"),
            ("uptime", "\(Int(status.uptimeSeconds)) s"),
        ]
        if status.historyDegraded || status.historyProblem != nil {
            rows.append(("history", "\(status.historyProblem ?? "degraded")\(status.historyPending > 0 ? " (\(status.historyPending) waiting)" : "")"))
        }
        return rows.flatMap { label, value in ScreenText.lines(label.rightPadded(to: 10) + value, indent: 10) }
    }
}

struct Version: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the daemon's version and protocol.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let version = try options.call(Request(.version), as: VersionInfo.self)
        if options.json { return try options.printJSON(version) }
        print("parleyd \(version.version), protocol \(version.protocolVersion); parley \(ParleyVersion.string)")
    }
}

/// "a" or "b".
enum SpeakerArgument: String, ExpressibleByArgument, CaseIterable {
    case a, b

    var speaker: Speaker {
        switch self {
        case .a: .a
        case .b: .b
        }
    }
}

struct Say: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Type a turn: it is translated, spoken to the other side and logged.")

    @OptionGroup var options: ClientOptions

    @Option(name: .long, help: "Who is typing: a or b.")
    var speaker: SpeakerArgument

    @Argument(help: "The words to translate (at most \(SayRequest.maxCharacters) characters).")
    var text: [String]

    /// The request; nil when the words are missing, too long or not UTF-8.
    var request: SayRequest? { SayRequest(speaker: speaker.speaker, text: text.joined(separator: " ")) }

    /// Seconds `say` waits for each character more than other commands (unless --timeout is
    /// given): its answer comes once the translation was spoken, and espeak-ng speaks about 15
    /// characters a second, a translation being up to a quarter longer; this leaves twice that.
    static let speakingAllowance = 0.15

    /// What is wrong with `words` as the text of `parley say`, in the CLI's words; nil: nothing.
    static func problem(with words: String) -> String? {
        switch SayRequest.problem(with: words) {
        case nil:
            nil
        case .empty:
            "give the words to translate"
        case .tooLong(let characters):
            "the text is \(characters) characters, and a typed turn is at most \(SayRequest.maxCharacters); say it in parts, a sentence or two each"
        case .notUTF8:
            "the text holds U+FFFD (\u{FFFD}), the mark of bytes that were not UTF-8; type it again in UTF-8"
        }
    }

    func validate() throws {
        if let problem = Self.problem(with: text.joined(separator: " ")) { throw ValidationError(problem) }
    }

    func run() throws {
        guard let request else { throw ValidationError(Self.problem(with: text.joined(separator: " ")) ?? "give the words to translate") }
        let sent = Date()
        // parleyd answers once the translation was spoken: the default wait allows for it.
        let turn = try options.call(
            Request(.say(request)),
            as: TurnInfo.self,
            whenLate: "the turn may still be translated and stored (see `parley history`), so do not send it again at once",
            allowing: Self.speakingAllowance * Double(request.text.count))
        // A turn identical to the one before it is not stored again: parleyd answers with the
        // stored one, made before this request was sent (timestamps have milliseconds).
        let repeated = LocalTime.parseInstant(turn.createdAt).map { $0 < sent.addingTimeInterval(-0.001) } ?? false
        let note = "the same as turn #\(turn.id) just before it (\(LocalTime.display(turn.createdAt, utc: options.utc))): not stored again"
        if options.json {
            if repeated { printError("parley: \(note)") }
            return try options.printJSON(turn)
        }
        if repeated { print(note) }
        print("\(turn.speaker.rawValue) \(turn.sourceLang): \(turn.sourceText)")
        print("\(turn.speaker.other.rawValue) \(turn.targetLang): \(turn.translatedText ?? "(untranslated: \(turn.error ?? "error"))")")
    }
}

struct Listen: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Push-to-talk: listen to speaker a or b next.")

    @OptionGroup var options: ClientOptions

    @Argument(help: "a or b.")
    var speaker: SpeakerArgument

    func run() throws {
        try options.statusCommand(Request(.listen(speaker.speaker)))
    }
}

struct Stop: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "End the utterance being heard now, or cut the speech being played.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let status = try options.call(Request(.stop), as: StatusInfo.self)
        if options.json { return try options.printJSON(status) }
        print(Self.said(status))
    }

    /// What the stop did, in words: "stopped speaking", "stopped hearing a (en): ...", or
    /// "nothing to stop" and what Parley is doing.
    static func said(_ status: StatusInfo) -> String {
        let view = LiveView()
        view.apply(status: status)
        switch status.stopped {
        case .speech?:
            return "stopped speaking"
        case .utterance?:
            let side = status.speaker.map { " \($0) (\(view.languages[$0] ?? "?"))" } ?? ""
            return "stopped hearing\(side): what was said so far is translated"
        case nil:
            return "nothing to stop: \(view.describe(state: status.state, speaker: status.speaker))"
        }
    }
}

struct Pause: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Release the microphone (a turn in flight finishes first).")

    @OptionGroup var options: ClientOptions

    func run() throws { try options.statusCommand(Request(.pause)) }
}

struct Resume: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Take the microphone back.")

    @OptionGroup var options: ClientOptions

    func run() throws { try options.statusCommand(Request(.resume)) }
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
        let settings = try options.call(Request(.swap), as: RuntimeSettings.self)
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

    @Option(name: .long, help: "\(ConversationMode.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mode: String?

    @Option(name: .customLong("silence-ms"), help: "Silence that ends an utterance (\(SettingBounds.spelled(SettingBounds.silenceMs))).")
    var silenceMs: Int?

    @Option(name: .customLong("echo-tail-ms"), help: "Audio ignored after Parley speaks (\(SettingBounds.spelled(SettingBounds.echoTailMs))).")
    var echoTailMs: Int?

    @Option(
        name: .customLong("min-confidence"),
        help: "Flag utterances recognized with less confidence (\(SettingBounds.spelled(SettingBounds.minConfidence))).")
    var minConfidence: Double?

    /// `--mode` in any case ("Auto", "ONE-WAY"); nil when not given or not a mode.
    static func mode(_ text: String?) -> ConversationMode? {
        text.flatMap { ConversationMode(rawValue: $0.lowercased()) }
    }

    /// What to send; the bounds are the daemon's (`SettingBounds`), so a value out of them is a
    /// usage error here rather than a round trip. Languages and the mode are read in any case.
    var change: SettingsChange {
        SettingsChange(
            speakerA: speakerA?.lowercased(), speakerB: speakerB?.lowercased(), mode: Self.mode(mode), silenceMs: silenceMs,
            echoTailMs: echoTailMs, minConfidence: minConfidence)
    }

    func validate() throws {
        // A mode that is given but not read is said so, before "give at least one setting".
        if let mode, Self.mode(mode) == nil {
            throw ValidationError("--mode is \"\(mode)\"; give \(ConversationMode.spelledOut)")
        }
        if change.isEmpty {
            throw ValidationError("give at least one setting to change, e.g. --silence-ms 900")
        }
        func check<T: Comparable>(_ value: T?, _ bounds: ClosedRange<T>, _ option: String) throws {
            if let value, !bounds.contains(value) {
                throw ValidationError("\(option) is \(value); give \(bounds.lowerBound) to \(bounds.upperBound)")
            }
        }
        try check(silenceMs, SettingBounds.silenceMs, "--silence-ms")
        try check(echoTailMs, SettingBounds.echoTailMs, "--echo-tail-ms")
        try check(minConfidence, SettingBounds.minConfidence, "--min-confidence")
    }

    func run() throws {
        let settings = try options.call(Request(.set(change)), as: RuntimeSettings.self)
        if options.json { return try options.printJSON(settings) }
        settings.show()
    }
}

struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "config", abstract: "Show the settings in force.")

    @OptionGroup var options: ClientOptions

    func run() throws {
        let config = try options.call(Request(.config), as: EffectiveConfig.self)
        try options.printJSON(config)
    }
}
