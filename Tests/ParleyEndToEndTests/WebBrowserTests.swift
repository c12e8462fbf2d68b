import Foundation
import ParleyCore
import HummingbirdWSClient
import Logging
import NIOWebSocket
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyProtocol
import ParleyWebLink

/// The caption page in a real headless Chromium (Debian's chromium), driven through the Chrome
/// DevTools Protocol, against a live parleyd with the real engines: a recording spoken into a
/// virtual microphone (a private PulseAudio server) shows up on the page, a reply typed into the
/// page is spoken (ALSA's file plugin records what is played) and stored, and a wrong pairing
/// code is refused. The page is opened at the address read back from the QR code `parley web`
/// prints.
@Suite("The caption page in a headless Chromium", .serialized, .startsProcesses)
struct WebBrowserTests {
    static let chromium = "/usr/bin/chromium"

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: WebBrowserTests.chromium),
            "Debian's chromium is not installed (make deps installs it): the page is not tested in a browser"))
    func spokenWordsShowUpATypedReplyIsSpokenAndAWrongCodeIsRefused() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }

        // The microphone is PulseAudio's (recordings are spoken into it when the page is ready);
        // what parleyd plays goes to a file.
        let rig = PulseAudioRig(directory: dir)
        try rig.start(echo: false)
        defer { rig.stop() }
        let played = dir.appendingPathComponent("played.raw")
        try """
            pcm.pmic { type pulse; device "mic.monitor" }
            pcm.parleyout { type file; slave.pcm "null"; file "\(played.path)"; format "raw" }
            """.write(to: dir.appendingPathComponent(".asoundrc"), atomically: true, encoding: .utf8)
        let config = try EndToEnd.writeConfig(
            in: dir,
            extra: """
                [audio]
                capture_device = "pmic"
                playback_device = "parleyout"
                [web]
                enabled = true
                listen = "127.0.0.1"
                port = 0
                """)
        let (daemon, _, daemonLog) = try EndToEnd.start(
            try EndToEnd.binary("parleyd"), ["--config", config.path], in: dir, environment: rig.environment, tag: "parleyd")
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        // The browser starts while the daemon loads its models.
        let browser = try HeadlessChromium(in: dir)
        defer { browser.stop() }

        let cli = CLI(socket: dir.appendingPathComponent("control.sock").path, directory: dir, log: daemonLog)
        try await cli.waitFor("parleyd listening, its page served", timeout: 60) {
            let info = try? JSONDecoder().decode(WebInfo.self, from: Data(try cli.run(["web", "--json"]).utf8))
            return info?.port != nil
        }
        let info = try JSONDecoder().decode(WebInfo.self, from: Data(try cli.run(["web", "--json"]).utf8))
        let code = try #require(info.code)

        // What `parley web` prints: the address, and a QR code of the address that pairs.
        let printed = try cli.run(["web", "--qr", "always"])
        let lines = printed.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let address = try #require(lines.first { $0.hasPrefix("address: ") }?.dropFirst(9)).trimmingCharacters(in: .whitespaces)
        let pairs = try #require(lines.first { $0.hasPrefix("pairs: ") }?.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let codeLines = lines.filter { $0.hasPrefix(QRCode.blackOnWhite) }
        try #require(!codeLines.isEmpty, "no QR code in: \(printed)")
        let scanned = try WebLinkTests.scan(WebLinkTests.pbm(try WebLinkTests.modules(of: codeLines)))
        #expect(scanned == pairs && scanned == "\(address)#code=\(code)", "the QR code opens the page, paired")

        let microphone = rig.microphone
        try await browser.withTab { tab in
            // A phone set to Spanish: the page opens in the Spanish side's view.
            try await tab.speak("es")

            // c. The address alone: the page reads, and a wrong code is refused.
            try await tab.open(address)
            try await tab.waitFor("the page connected, asking for the code") { $0.connected && !$0.pairHidden && $0.replyHidden }
            let wrong = code == "000000" ? "111111" : "000000"
            try await tab.type(wrong, into: "code")
            try await tab.click("#pair button")
            let refused = try await tab.waitFor("the refusal shown") { $0.notice == Self.expected("es", "error_wrong_code") }
            #expect(refused.replyHidden && !refused.pairHidden, "no reply box without the right code")
            #expect(try cli.turns().isEmpty, "nothing is stored")

            // a. A recording spoken into the microphone: live words, then the turn and its translation.
            _ = try await tab.evaluate(
                """
                window.parleyHeard = [];
                new MutationObserver(() => {
                  const heard = document.getElementById("heard");
                  window.parleyHeard.push({ partial: heard.classList.contains("partial"), text: heard.textContent });
                }).observe(document.getElementById("heard"), { childList: true, characterData: true, subtree: true, attributes: true });
                true
                """)
            try await cli.waitFor("parleyd listening", timeout: 30) { try cli.status()?.state == "listening" }
            try microphone.say("\(EndToEnd.testData)/goforward.raw")
            try await cli.waitFor("the spoken turn stored, then listening again", timeout: 60) {
                try cli.turns().count == 1 && cli.status()?.state == "listening"
            }
            let spoken = try #require(try cli.turns().first)
            #expect(spoken.sourceText.contains("go forward"), "\(spoken.sourceText)")
            let translation = try #require(spoken.translatedText)
            let shown = try await tab.waitFor("the turn on the page") { $0.turns.count == 1 }
            #expect(shown.turns[0].contains(spoken.sourceText) && shown.turns[0].contains(translation), "\(shown.turns)")
            #expect(shown.heard == spoken.sourceText && shown.said == translation)
            let heard = try JSONDecoder().decode([Heard].self, from: Data(try await tab.evaluate("JSON.stringify(window.parleyHeard)").utf8))
            // Live words (shown dimmed while the person speaks), some of them the turn's, then the turn.
            let live = heard.filter { $0.partial && $0.text.contains { $0.isLetter } }
            #expect(live.contains { !Set(EndToEnd.words($0.text)).isDisjoint(with: EndToEnd.words(spoken.sourceText)) }, "no live words: \(heard)")
            #expect(heard.last.map { !$0.partial && $0.text == spoken.sourceText } == true, "\(heard)")

            // b. The address in the QR code pairs; a reply typed in the page's language (Spanish) is spoken and stored.
            let before = (try? Data(contentsOf: played).count) ?? 0
            try await tab.open("about:blank")
            try await tab.open(scanned)
            let paired = try await tab.waitFor("the page paired by its address") { $0.connected && !$0.replyHidden && $0.pairHidden }
            #expect(!paired.location.contains(code), "the code is taken out of the address bar")
            #expect(paired.send == "Decir en español")
            let reply = "buenos días"
            try await tab.type(reply, into: "text")
            try await tab.click("#send")
            try await cli.waitFor("the typed reply stored and spoken", timeout: 60) {
                try cli.turns().count == 2 && cli.status()?.state == "listening"
            }
            let typed = try #require(try cli.turns().first)
            #expect(typed.sourceText == reply && typed.speaker == .b && typed.sourceLang == "es")
            let spokenReply = try #require(typed.translatedText)
            let replyShown = try await tab.waitFor("the reply on the page") { $0.turns.count == 2 }
            #expect(replyShown.turns[0].contains(reply) && replyShown.turns[0].contains(spokenReply), "\(replyShown.turns)")
            let audio = WAVBytes.samples(try Data(contentsOf: played).dropFirst(before & ~1))
            EndToEnd.expectSpeechLike(audio, rate: 22_050)
            try EndToEnd.expectSpokenTranslation(audio, text: spokenReply, voice: "en", in: dir)
        }
        #expect(daemon.isRunning, "parleyd is still running: \((try? String(contentsOf: daemonLog, encoding: .utf8)) ?? "")")
    }

    struct Heard: Decodable, CustomStringConvertible {
        var partial: Bool
        var text: String
        var description: String { (partial ? "~" : "") + text }
    }
}

/// parley, run against one daemon.
struct CLI {
    let socket: String
    let directory: URL
    let log: URL

    /// What `parley ARGUMENTS` printed; throws when it fails (records no issue: it is polled).
    func run(_ arguments: [String]) throws -> String {
        let result = try EndToEnd.run(try EndToEnd.binary("parley"), arguments + ["--socket", socket], in: directory, timeout: 60)
        guard result.status == 0 else { throw Failed(description: "parley \(arguments.joined(separator: " ")): \(result.stderr)") }
        return result.stdout
    }

    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    func status() throws -> StatusInfo? {
        try? JSONDecoder().decode(StatusInfo.self, from: Data(try run(["status", "--json"]).utf8))
    }

    /// The stored turns, newest first.
    func turns() throws -> [TurnInfo] {
        try JSONDecoder().decode([TurnInfo].self, from: Data(try run(["history", "--json"]).utf8))
    }

    /// Polls `condition` until it holds; fails the test after `timeout` seconds.
    func waitFor(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if (try? condition()) == true { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("timed out waiting for \(what); parleyd said: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        throw CancellationError()
    }
}

/// A headless Chromium with its DevTools on a port of its choosing.
final class HeadlessChromium {
    let process: Process
    let profile: URL
    let log: URL

    init(in directory: URL) throws {
        profile = directory.appendingPathComponent("chromium")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-sync", "--disable-background-networking", "--disable-component-update",
            "--mute-audio", "--password-store=basic", "--user-data-dir=\(profile.path)", "--remote-debugging-port=0",
            // The WebSocket client sends this Origin; DevTools refuses any origin not named.
            "--remote-allow-origins=ws://127.0.0.1",
            "--window-size=412,915", "about:blank",
        ]
        (process, _, log) = try EndToEnd.start(
            WebBrowserTests.chromium, arguments, in: directory, environment: ["HOME": directory.path], tag: "chromium")
    }

    /// The DevTools WebSocket of a new tab. (The browser's own WebSocket makes the tab:
    /// FoundationNetworking's HTTP client fails on DevTools' /json answers.)
    func page(timeout: TimeInterval = 60) async throws -> String {
        let deadline = Date(timeIntervalSinceNow: timeout)
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        var problem = "no \(portFile.path)"
        while Date() < deadline && process.isRunning {
            let lines = ((try? String(contentsOf: portFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            if lines.count == 2, let port = Int(lines[0]) {
                let made = TargetID()
                do {
                    try await WebSocketClient.connect(
                        url: "ws://127.0.0.1:\(port)\(lines[1])", configuration: .init(maxFrameSize: 1 << 24),
                        logger: Logger(label: "parley.test.devtools")
                    ) { inbound, outbound, _ in
                        var browser = DevTools(iterator: inbound.messages(maxSize: 1 << 24).makeAsyncIterator(), outbound: outbound)
                        if case .string(let id)? = try await browser.send("Target.createTarget", ["url": .string("about:blank")])["targetId"] {
                            made.value.withLock { $0 = id }
                        }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                    if let id = made.value.withLock({ $0 }) { return "ws://127.0.0.1:\(port)/devtools/page/\(id)" }
                    problem = "no target made"
                } catch {
                    problem = "\(error)"
                }
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record("chromium gave no page (\(problem), running: \(process.isRunning)): \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        throw CancellationError()
    }

    /// The tab the browser made, handed out of the WebSocket's handler.
    private final class TargetID: Sendable {
        let value = Mutex<String?>(nil)
    }

    /// Drives a new tab through DevTools: `body` gets the tab, which behaves as if it had the
    /// focus, as a phone's one tab does; the connection is closed when `body` returns.
    func withTab(_ body: @escaping @Sendable (inout DevTools) async throws -> Void) async throws {
        let page = try await page()
        try await WebSocketClient.connect(
            url: page, configuration: .init(maxFrameSize: 1 << 24), logger: Logger(label: "parley.test.devtools")
        ) { inbound, outbound, _ in
            var tab = DevTools(iterator: inbound.messages(maxSize: 1 << 24).makeAsyncIterator(), outbound: outbound)
            _ = try await tab.send("Emulation.setFocusEmulationEnabled", ["enabled": .bool(true)])
            try await body(&tab)
            try await outbound.close(.normalClosure, reason: nil)
        }
    }

    /// Ends the browser and the processes it started.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        if !EndToEnd.wait(process, timeout: 15) { Issue.record("chromium did not stop on SIGTERM") }
    }
}

/// One browser tab, driven through the Chrome DevTools Protocol.
struct DevTools {
    var iterator: WebSocketInboundMessageStream.AsyncIterator
    let outbound: WebSocketOutboundWriter
    var nextID = 1
    /// The script that sets the browser's languages (`speak`), if any.
    var languageScript: JSONValue?

    /// What the page shows, read in one go.
    struct PageState: Decodable {
        var connected: Bool
        var who: String
        var heard: String
        var said: String
        var notice: String
        var pairHidden: Bool
        var replyHidden: Bool
        var send: String
        var turns: [String]
        var location: String
    }

    /// Runs a DevTools command; its result.
    mutating func send(_ method: String, _ params: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        let id = nextID
        nextID += 1
        let message = JSONValue.object(["id": .number(Double(id)), "method": .string(method), "params": .object(params)])
        try await outbound.write(.text(String(decoding: try JSONEncoder().encode(message), as: UTF8.self)))
        while let frame = try await iterator.next() {
            guard case .text(let text) = frame, let reply = try? JSONDecoder().decode(Reply.self, from: Data(text.utf8)), reply.id == id else {
                continue  // an event
            }
            if let error = reply.error { throw DevToolsError(description: "\(method): \(error)") }
            return reply.result ?? [:]
        }
        throw DevToolsError(description: "the browser closed the connection during \(method)")
    }

    private struct Reply: Decodable {
        var id: Int?
        var result: [String: JSONValue]?
        var error: JSONValue?
    }

    struct DevToolsError: Error, CustomStringConvertible {
        var description: String
    }

    /// The string value of a JavaScript expression in the page.
    mutating func evaluate(_ expression: String) async throws -> String {
        let result = try await send("Runtime.evaluate", ["expression": .string(expression), "returnByValue": .bool(true)])
        if let exception = result["exceptionDetails"] { throw DevToolsError(description: "\(expression): \(exception)") }
        guard case .object(let value)? = result["result"] else { return "" }
        switch value["value"] {
        case .string(let text)?: return text
        case .bool(let flag)?: return String(flag)
        case .number(let number)?: return String(number)
        default: return ""
        }
    }

    mutating func open(_ url: String) async throws {
        _ = try await send("Page.navigate", ["url": .string(url)])
    }

    /// Types `text` into the field `id` as a person would (focus, then input events).
    mutating func type(_ text: String, into id: String) async throws {
        _ = try await evaluate("document.getElementById(\"\(id)\").focus(); true")
        _ = try await send("Input.insertText", ["text": .string(text)])
    }

    mutating func click(_ selector: String) async throws {
        _ = try await evaluate("document.querySelector(\"\(selector)\").click(); true")
    }

    /// What the page shows now.
    mutating func state() async throws -> PageState? {
        let json = try await evaluate(
            """
            (() => {
              const $ = (id) => document.getElementById(id);
              // A page still being parsed (or the one before it) is not read.
              if (document.readyState === "loading") return "";
              if (["link", "who", "heard", "said", "notice", "pair", "reply", "send", "turns"].some((id) => !$(id))) return "";
              return JSON.stringify({
                connected: $("link").classList.contains("on"), who: $("who").textContent, heard: $("heard").textContent,
                said: $("said").textContent, notice: $("notice").textContent, pairHidden: $("pair").hidden,
                replyHidden: $("reply").hidden, send: $("send").textContent,
                turns: Array.from(document.querySelectorAll("#turns li")).map((item) => item.textContent), location: location.href });
            })()
            """)
        return try? JSONDecoder().decode(PageState.self, from: Data(json.utf8))
    }

    /// Reads the page until `condition` holds; fails the test after `timeout` seconds.
    @discardableResult
    mutating func waitFor(_ what: String, timeout: TimeInterval = 30, _ condition: (PageState) -> Bool) async throws -> PageState {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var last: PageState?
        var lastError: (any Error)?
        while Date() < deadline {
            // A page being replaced can throw while it is read; it is read again until the deadline.
            do {
                if let state = try await state() {
                    if condition(state) { return state }
                    last = state
                }
            } catch {
                lastError = error
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let shown = last.map { "\($0)" } ?? "nothing"
        let failure = lastError.map { "; reading it last failed with: \($0)" } ?? ""
        Issue.record("timed out waiting for \(what); the page showed: \(shown)\(failure)")
        throw CancellationError()
    }
}
