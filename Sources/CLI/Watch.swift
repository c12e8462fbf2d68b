import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyCore
import ParleyProtocol

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live view: mic level, who speaks, the words so far, the last turns.",
        discussion: """
            On a terminal it takes the alternate screen and redraws what changed (q or Ctrl-C quits); \
            otherwise it prints one plain line per event (the level at most once a second). When parleyd \
            goes away it says so and waits for it to come back.
            """)

    @OptionGroup var options: ClientOptions

    @Flag(name: .long, help: "Leave out the level events (plain and JSON output).")
    var quiet = false

    func run() throws {
        let view = LiveView()
        let client: ControlClient
        do {
            client = try subscribe(view)
        } catch {
            printError("parley: \(error)")
            throw ExitCode(error.exitCode)
        }
        if options.json || isatty(STDOUT_FILENO) == 0 {
            follow(client, view: view)
        } else {
            view.colour = true
            LiveView.Terminal.run(client: client, view: view, utc: options.utc) { try? subscribe(view) }
        }
    }

    /// The status, the last turns and the doubt threshold for `view`, then a subscription.
    private func subscribe(_ view: LiveView) throws(ClientError) -> ControlClient {
        if let status = fetch(.status, as: StatusInfo.self) { view.apply(status: status) }
        if let turns = fetch(.history(HistoryQuery(limit: 3)), as: [TurnInfo].self) { view.turns = turns }
        if let config = fetch(.config, as: EffectiveConfig.self) { view.minConfidence = config.settings.minConfidence }
        // The timeout bounds connecting and the subscribe answer; events then come when they come.
        let client = try options.connect()
        _ = try client.call(Request(.subscribe))
        return client
    }

    /// One request's result, or nil (without a word: the view does without it).
    private func fetch<Payload: Codable & Sendable>(_ command: Command, as _: Payload.Type) -> Payload? {
        guard let line = try? options.connect().call(Request(command)) else { return nil }
        return try? JSONDecoder().decode(ResultReply<Payload>.self, from: line).data
    }

    /// Plain lines (or the raw JSON events) for pipes, logs and dumb terminals. When parleyd goes
    /// away, a line on stderr says so, and another when it is back.
    private func follow(_ first: ControlClient, view: LiveView) {
        var client = first
        var levels = LevelLines()
        while true {
            while let line = try? client.readLine() {
                let type = (try? JSONDecoder().decode(Envelope.self, from: line))?.type ?? ""
                if quiet && type == EventType.level { continue }
                if options.json {
                    print(String(decoding: line, as: UTF8.self))
                } else if let text = view.apply(event: line) {
                    if type == EventType.level && !levels.due(at: .now) { continue }
                    print(text)
                }
                fflush(nil)
            }
            printError("parley: parleyd went away (\(LiveView.clock(utc: options.utc))); waiting for it to come back (Ctrl-C quits)")
            while true {
                usleep(500_000)
                if let again = try? subscribe(view) {
                    client = again
                    break
                }
            }
            printError("parley: parleyd is back (\(LiveView.clock(utc: options.utc)))")
        }
    }
}

/// How often plain `parley watch` prints the level: parleyd sends it about 25 times a second,
/// which in a file or a pipe is a flood; a line a second still shows the microphone is live.
struct LevelLines {
    static let interval: Duration = .seconds(1)
    private var last: ContinuousClock.Instant?

    /// Whether a level that came `now` is printed (and if so, the next waits a second more).
    mutating func due(at now: ContinuousClock.Instant) -> Bool {
        if let last, now - last < Self.interval { return false }
        last = now
        return true
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
    /// Whether who speaks is known (the `decided` of the last `state` event; absent: known).
    /// While auto mode has not decided, no side is named as the one speaking.
    var decided = true
    /// Whether `partial` is the expected language's guess (a `partial` with `decided` false):
    /// shown dimmed, marked as a guess.
    var partialGuessed = false
    var turns: [TurnInfo] = []
    /// Words recognized with less confidence are doubtful: shown in brackets (`min_confidence`).
    var minConfidence = 0.5
    /// Doubtful words are also coloured (on a terminal).
    var colour = false
    /// Shown instead of the state while parleyd is away.
    var away: String?

    /// The wall clock, local (or UTC), for saying when something happened.
    static func clock(utc: Bool) -> String {
        LocalTime.clock(utc: utc)
    }

    /// `text` with its doubtful words marked.
    func marked(_ text: String, words: [WordConfidence]?) -> String {
        WordConfidence.marking(text, words: words, below: minConfidence, colour: colour)
    }

    func apply(status: StatusInfo) {
        state = status.state
        speaker = status.speaker
        decided = status.decided ?? true
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
            return ScreenText.printf("level %.1f dB (peak %.1f)", Double(level.rmsDB), Double(level.peakDB))
        case EventType.state:
            guard let event = try? decoder.decode(Event<StateEvent>.self, from: line).data else { return nil }
            state = event.state
            speaker = event.speaker
            decided = event.decided ?? true
            if event.state == "listening" { partial = "" }
            return "state: \(describe(state: event.state, speaker: event.speaker))"
        case EventType.partial:
            guard let event = try? decoder.decode(Event<TextEvent>.self, from: line).data else { return nil }
            partial = event.text
            partialGuessed = event.decided == false
            if partialGuessed { return "partial (language not decided; \(event.language)'s guess): \(event.text)" }
            return "partial \(event.speaker): \(event.text)"
        case EventType.transcript:
            guard let event = try? decoder.decode(Event<TextEvent>.self, from: line).data else { return nil }
            partial = marked(event.text, words: event.words)
            partialGuessed = false
            let confidence = event.confidence.map { ScreenText.printf(" (confidence %.2f)", $0) } ?? ""
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
            if event.decided == false { return "\(type.replacing("_", with: " ")) (who speaks is not decided yet)" }
            return "\(type.replacing("_", with: " ")) \(event.speaker) (\(event.language))"
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

    /// What `status` says Parley is doing, in words ("listening to b (es)").
    static func describe(_ status: StatusInfo) -> String {
        let view = LiveView()
        view.apply(status: status)
        return view.describe(state: status.state, speaker: status.speaker)
    }

    /// Whether `speaker` is said to be the one speaking or listened to: not while auto mode
    /// has not decided who speaks (`decided`), in the states it decides in.
    private func named(_ speaker: String?, in state: String) -> String? {
        (state == "listening" || state == "hearing") && !decided ? nil : speaker
    }

    /// What Parley is doing, in words a person reads: the protocol's state names (`echo_guard`,
    /// `device_lost`) stay in `--json`. A side is named with its language: `b (es)`.
    func describe(state: String, speaker: String?) -> String {
        if named(speaker, in: state) == nil && speaker != nil {
            // Auto mode tells who speaks from the audio: neither side nor language is claimed.
            return state == "hearing" ? "hearing someone (which language is not decided yet)" : "listening to either side"
        }
        let side = speaker.map { "\($0) (\(languages[$0] ?? "?"))" }
        let other = speaker.map { $0 == "a" ? "b" : "a" }.map { "\($0) (\(languages[$0] ?? "?"))" }
        switch state {
        case "listening": return side.map { "listening to \($0)" } ?? "listening"
        case "hearing": return side.map { "hearing \($0)" } ?? "hearing"
        case "recognizing": return side.map { "recognizing \($0)" } ?? "recognizing"
        case "translating": return side.map { "translating \($0)" } ?? "translating"
        case "speaking": return other.map { "speaking to \($0)" } ?? "speaking"
        // Parley has just spoken and lets its voice die away before it listens again.
        case "echo_guard": return side.map { "speaking, then listening to \($0)" } ?? "speaking"
        case "paused": return "paused (microphone released)"
        case "idle": return "waiting for parley listen"
        case "device_lost": return "microphone lost; waiting for it to come back"
        default: return state.replacing("_", with: " ")
        }
    }

    /// Below this level the meter shows no bar and says "silent" (the caption page's meter ends there too).
    static let silentBelow: Float = -60

    /// The level meter line: the last level (or "silent") and a bar per level event, in a field
    /// as wide as the rest of the line (dots where it was silent or before any level came).
    func meter(width: Int) -> String {
        let bars: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        let empty: Character = "·"
        let label = "mic level " + (lastLevel > Self.silentBelow ? ScreenText.decibels(lastLevel).leftPadded(to: 6) + " dB " : "   silent ")
        let field = max(0, width - label.count)
        let recent = levels.suffix(field)
        let wave = String(repeating: empty, count: field - recent.count) + String(recent.map { level -> Character in
            guard level > Self.silentBelow else { return empty }
            return bars[min(bars.count - 1, Int((level - Self.silentBelow) / -Self.silentBelow * Float(bars.count)))]
        })
        return label + wave
    }

    /// The first line: what Parley is doing, and "q quits" at the right end when it fits (or
    /// after it, kept in one piece when the line wraps).
    func header(width: Int) -> String {
        let title = "\u{1B}[1mParley\u{1B}[0m  "
        let quits = "q\u{00A0}quits"
        if let away { return title + "\u{1B}[7m\(away)\u{1B}[0m" }
        // A side stays whole when the line wraps: "b (es)", not "b" then "(es)".
        let status = describe(state: state, speaker: speaker).replacing(" (", with: "\u{00A0}(")
        let used = ScreenText.visibleColumns(title + status)
        if used + 4 + quits.count <= width {
            return title + status + String(repeating: " ", count: width - used - quits.count) + quits
        }
        return title + status + "  " + quits
    }

    /// The screen's lines, each at most `width` columns (long text is wrapped between words),
    /// at most `height` of them.
    func render(width: Int, height: Int) -> [String] {
        var logical: [(text: String, hanging: Int?)] = [
            (header(width: width), nil), (meter(width: width), nil), ("", nil),
            (partial.isEmpty ? "" : partialGuessed ? "  \u{1B}[2m(guess) \(partial)\u{1B}[0m" : "  \u{1B}[1m\(partial)\u{1B}[0m", nil), ("", nil),
        ]
        // "#9   a en:  ..." over "     b es:  ...": both texts start in one column, whatever the
        // turns' ids, and a text's continuation lines start there too.
        let tagWidth = turns.map { "#\($0.id)".count }.max() ?? 0
        for turn in turns {
            let other = turn.speaker.other.rawValue
            let labels = ["\(turn.speaker.rawValue) \(turn.sourceLang):", "\(other) \(turn.targetLang):"]
            let labelWidth = labels.map(\.count).max() ?? 0
            let first = "#\(turn.id)".rightPadded(to: tagWidth) + "  " + labels[0].rightPadded(to: labelWidth) + "  "
            let second = "".rightPadded(to: tagWidth) + "  " + labels[1].rightPadded(to: labelWidth) + "  "
            logical.append((first + "\u{1B}[1m\(marked(turn.sourceText, words: turn.words))\u{1B}[0m", first.count))
            logical.append((second + "\u{1B}[1m\(turn.translatedText ?? "(untranslated)")\u{1B}[0m", second.count))
            logical.append(("", nil))
        }
        let wrapped = logical.flatMap { ScreenText.wrap($0.text, width: width, hanging: $0.hanging) }
        return Array(wrapped.prefix(max(1, height)))
    }

    /// The interactive terminal: the alternate screen, raw keys, redraws at 10 Hz of the lines
    /// that changed (all of them after a resize); the terminal is restored on the way out.
    enum Terminal {
        static func run(client first: ControlClient, view: LiveView, utc: Bool, reconnect: () -> ControlClient?) {
            tcgetattr(STDIN_FILENO, &savedTerminal)
            var raw = savedTerminal
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
            signal(SIGINT, restoreTerminalAndExit)
            signal(SIGTERM, restoreTerminalAndExit)
            // The alternate screen, no cursor, no automatic wrapping (lines are wrapped between words here).
            ScreenText.write(enterScreen)
            defer {
                tcsetattr(STDIN_FILENO, TCSANOW, &savedTerminal)
                ScreenText.write(leaveScreen)
            }
            var client: ControlClient? = first
            var screen = Screen()
            var lastDraw = ContinuousClock.now - .seconds(1)
            var lastAttempt = ContinuousClock.now
            while true {
                var descriptors = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)]
                if let client { descriptors.append(pollfd(fd: client.fileDescriptor, events: Int16(POLLIN), revents: 0)) }
                _ = poll(&descriptors, nfds_t(descriptors.count), 50)
                if descriptors[0].revents != 0 {
                    var key: UInt8 = 0
                    if read(STDIN_FILENO, &key, 1) == 1 && (key == UInt8(ascii: "q") || key == UInt8(ascii: "Q")) { return }
                }
                if let connected = client, descriptors.count > 1, descriptors[1].revents != 0 {
                    if let lines = try? connected.readAvailableLines() {
                        for line in lines { _ = view.apply(event: line) }
                    } else {
                        client = nil
                        view.away = "parleyd went away at \(LiveView.clock(utc: utc)); waiting for it to come back (q\u{00A0}quits)"
                        view.partial = ""
                        lastAttempt = .now
                    }
                }
                if client == nil && ContinuousClock.now - lastAttempt >= .milliseconds(500) {
                    lastAttempt = .now
                    if let again = reconnect() {
                        client = again
                        view.away = nil
                    }
                }
                if ContinuousClock.now - lastDraw >= .milliseconds(100) {
                    lastDraw = .now
                    var size = winsize()
                    _ = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size)
                    let width = size.ws_col > 0 ? Int(size.ws_col) : 80
                    let height = size.ws_row > 0 ? Int(size.ws_row) : 24
                    screen.draw(view.render(width: width, height: height), width: width, height: height)
                }
            }
        }

        static let enterScreen = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[2J"
        static let leaveScreen = "\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l"
    }

    /// What is on the screen, so that a redraw writes only the lines that changed.
    struct Screen {
        private var shown: [String] = []
        private var width = 0
        private var height = 0

        mutating func draw(_ lines: [String], width: Int, height: Int) {
            let output = frame(lines, width: width, height: height)
            if !output.isEmpty { ScreenText.write(output) }
        }

        /// What to write to show `lines`: each line that changed, from its row's first column.
        /// The rest of a shorter line is erased after it (ESC[K); a line that fills the width is
        /// not followed by ESC[K, which with autowrap off would erase its last column, where the
        /// cursor stays.
        mutating func frame(_ lines: [String], width: Int, height: Int) -> String {
            var output = ""
            if width != self.width || height != self.height {
                // Resized: the terminal may have moved or cut what it showed; draw it all again.
                output += "\u{1B}[2J"
                shown = []
                self.width = width
                self.height = height
            }
            for (row, line) in lines.enumerated() where row >= shown.count || shown[row] != line {
                let erase = ScreenText.visibleColumns(line) < width ? "\u{1B}[K" : ""
                output += "\u{1B}[\(row + 1);1H\u{1B}[0m" + line + "\u{1B}[0m" + erase
            }
            if shown.count > lines.count {
                for row in lines.count..<shown.count { output += "\u{1B}[\(row + 1);1H\u{1B}[2K" }
            }
            shown = lines
            return output
        }
    }
}
