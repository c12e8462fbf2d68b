import Foundation
import HummingbirdWSClient
import Logging
import NIOWebSocket
import ParleyControl
import ParleyCore
import ParleyProtocol
import ParleyRuntime
import ParleyTesting
import Testing
@testable import ParleyWeb

/// The caption page in a headless Chromium against the page server on in-memory engines
/// (WebTests' server): it speaks its reader's language, names what Parley does in words, shows
/// the last turn after a reload and says in which language to type.
extension WebBrowserTests {
    /// What the page says on its own (not the words people said, nor the language buttons, which
    /// name each language in itself): texts, placeholders, labels and titles, hidden ones too.
    static let pageWords = """
        (() => {
          const said = (element) => element.closest("#turns, #heard, #said") || (element.parentElement && element.parentElement.closest("#langs"));
          const found = [document.title];
          document.querySelectorAll("body *").forEach((element) => {
            if (said(element) || element.tagName === "SCRIPT") return;
            element.childNodes.forEach((node) => { if (node.nodeType === 3 && node.textContent.trim()) found.push(node.textContent.trim()); });
            ["placeholder", "aria-label", "title"].forEach((name) => { const value = element.getAttribute(name); if (value) found.push(value); });
          });
          return JSON.stringify(found);
        })()
        """

    /// The English words of the table, cut where the page fills a blank: none of them may show in another language's view.
    static var englishPieces: [String] {
        (PageText.table["en"] ?? [:]).filter { $0.key != "name" }.values.flatMap { phrase in
            phrase.replacingOccurrences(of: "{language}", with: "\u{0}").replacingOccurrences(of: "{percent}", with: "\u{0}")
                .split(separator: "\u{0}").map { $0.trimmingCharacters(in: .whitespaces) }
        }.filter { $0.count >= 4 }
    }

    static func expected(_ language: String, _ key: String, _ named: String? = nil) -> String {
        let phrase = PageText.table[language]?[key] ?? "?"
        return named.map { phrase.replacingOccurrences(of: "{language}", with: PageText.table[language]?["lang_\($0)"] ?? $0) } ?? phrase
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: WebBrowserTests.chromium),
            "Debian's chromium is not installed (make deps installs it): the page is not tested in a browser"))
    func everyLanguagesViewShowsNoEnglishAndNoStateNames() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let browser = try HeadlessChromium(in: dir)
        defer { browser.stop() }
        try await browser.withTab { tab in
            for language in PageText.languages {
                // The reader's side speaks `language`, the other English (Spanish for an English reader).
                let other = language == "en" ? "es" : "en"
                try await tab.speak(language)
                try await WebTests().withServer(languages: (other, language)) { port, conversation in
                    var words: Set<String> = []
                    func read(_ tab: inout DevTools) async throws {
                        words.formUnion(try JSONDecoder().decode([String].self, from: Data(try await tab.evaluate(Self.pageWords).utf8)))
                    }
                    // Unpaired: the pairing form, then a wrong code.
                    try await tab.open("http://127.0.0.1:\(port)/")
                    try await tab.waitFor("the \(language) page connected") { $0.connected && !$0.pairHidden }
                    #expect(try await tab.evaluate("document.documentElement.lang") == language, "the browser's language opens the view")
                    let listening = Self.expected(language, "state_listening", other)
                    try await tab.waitFor("\(language): listening") { $0.who == listening }
                    try await read(&tab)
                    try await tab.type(WebTests.code == "000000" ? "111111" : "000000", into: "code")
                    try await tab.click("#pair button")
                    let wrong = Self.expected(language, "error_wrong_code")
                    try await tab.waitFor("\(language): the wrong code refused") { $0.notice == wrong }
                    try await read(&tab)

                    // Paired (a second after the wrong code, which the server makes the next try wait for;
                    // its clock is the conversation's, which the test moves): the reply box, then every
                    // state Parley can be in.
                    conversation.clock.advance(by: .seconds(1))
                    try await tab.open("about:blank")
                    try await tab.open("http://127.0.0.1:\(port)/#code=\(WebTests.code)")
                    let paired = try await tab.waitFor("the \(language) page paired") { $0.connected && !$0.replyHidden }
                    #expect(paired.send == Self.expected(language, "say_in", language))
                    #expect(try await tab.evaluate(#"document.getElementById("text").placeholder"#) == Self.expected(language, "reply_hint", language))
                    try await read(&tab)
                    let states: [(String, String?, String)] = [
                        ("hearing", "a", Self.expected(language, "state_hearing", other)),
                        ("recognizing", "a", Self.expected(language, "state_recognizing")),
                        ("translating", "a", Self.expected(language, "state_translating")),
                        ("speaking", "a", Self.expected(language, "state_speaking")),
                        ("paused", "b", Self.expected(language, "state_paused")),
                        // Parley's voice dying away, as the reader hears it: still speaking.
                        ("echo_guard", "b", Self.expected(language, "state_speaking")),
                        ("idle", nil, Self.expected(language, "state_idle")),
                        ("device_lost", nil, Self.expected(language, "state_device_lost")),
                        ("listening", "b", Self.expected(language, "state_listening", language)),
                    ]
                    for (name, speaker, shown) in states {
                        conversation.events.publish(EventType.state, StateEvent(state: name, speaker: speaker))
                        try await tab.waitFor("\(language): \(name) shown as \(shown)") { $0.who == shown }
                        try await read(&tab)
                    }

                    // The page's own words in this view: translated, and no protocol names.
                    for key in ["last_turns", "pairing_code", "pair", "repeat", "swap", "connection", "level", "typed_reply"] {
                        #expect(words.contains(Self.expected(language, key)), "\(language): \(key) not shown in \(words.sorted())")
                    }
                    for word in words {
                        #expect(!word.contains("_") && !word.lowercased().contains("echo"), "\(language): \(word)")
                    }
                    if language != "en" {
                        for word in words {
                            for english in Self.englishPieces where word.contains(english) {
                                Issue.record("the \(language) view shows English: \"\(english)\" in \"\(word)\"")
                            }
                        }
                    } else {
                        // The check above can fail: the English view is made of those words.
                        #expect(words.contains { word in Self.englishPieces.contains { word.contains($0) } })
                    }

                    // The other language's button shows the page in it, and the page keeps that choice.
                    try await tab.click("#langs button[aria-pressed=false]")
                    let switched = try await tab.waitFor("\(language): shown in \(other)") { $0.send == Self.expected(other, "say_in", other) }
                    #expect(switched.who == Self.expected(other, "state_listening", language))
                    try await tab.open("about:blank")
                    try await tab.open("http://127.0.0.1:\(port)/")
                    try await tab.waitFor("\(language): still in \(other) after a reload") {
                        $0.connected && $0.send == Self.expected(other, "say_in", other)
                    }
                }
            }
        }
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: WebBrowserTests.chromium),
            "Debian's chromium is not installed (make deps installs it): the page is not tested in a browser"))
    func aReloadShowsTheLastTurnAtTheTop() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let browser = try HeadlessChromium(in: dir)
        defer { browser.stop() }
        try await WebTests().withServer { port, conversation in
            // Paused, typed turns need no audio to pass (as in WebTests).
            #expect(await TestConversation.until { conversation.interpreter.snapshot.state == "listening" })
            conversation.interpreter.pause()
            #expect(await TestConversation.until { conversation.interpreter.snapshot.state == "paused" })
            try await browser.withTab { tab in
                try await tab.speak("es")
                try await tab.open("http://127.0.0.1:\(port)/#code=\(WebTests.code)")
                try await tab.waitFor("the page paired") { $0.connected && !$0.replyHidden }
                #expect(try await tab.evaluate(#"document.getElementById("text").placeholder"#) == "Escribe aquí en español")
                try await tab.type("buenos días", into: "text")
                try await tab.click("#send")
                let shown = try await tab.waitFor("the typed turn at the top") { $0.turns.count == 1 && !$0.said.isEmpty }
                #expect(shown.heard == "buenos días" && shown.said == "[en] buenos días", "\(shown)")

                try await tab.open("about:blank")
                try await tab.open("http://127.0.0.1:\(port)/")
                let reloaded = try await tab.waitFor("the page again") { $0.connected && $0.turns.count == 1 }
                #expect(reloaded.heard == "buenos días" && reloaded.said == "[en] buenos días", "the last turn at the top: \(reloaded)")
            }
            conversation.interpreter.resume()
        }
    }
}

extension DevTools {
    /// The browser's languages from the next page on, as a phone set to `language` gives them
    /// (navigator.languages: `language`-XX, then `language`), instead of the ones set before.
    mutating func speak(_ language: String) async throws {
        _ = try await send("Page.enable")
        if let script = languageScript { _ = try await send("Page.removeScriptToEvaluateOnNewDocument", ["identifier": script]) }
        let source = """
            Object.defineProperty(navigator, "languages", { configurable: true, get: () => ["\(language)-XX", "\(language)"] });
            Object.defineProperty(navigator, "language", { configurable: true, get: () => "\(language)-XX" });
            """
        languageScript = try await send("Page.addScriptToEvaluateOnNewDocument", ["source": .string(source)])["identifier"]
    }
}
