import Foundation
import ParleyControl
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRuntime
import ParleyTesting
import Testing
@testable import ParleyWeb

/// The caption page on a phone (issue 38, tried in Chromium at 390x844), in a headless
/// Chromium against WebTests' server on in-memory engines: the reply box stays in reach with
/// 10 turns, the live area shows the current turn only, the turns read as the live area does
/// with each line tagged with its own language, a language not yet decided is not claimed, and
/// pairing says what happened.
extension WebBrowserTests {
    static var browserMissing: Bool { !FileManager.default.isExecutableFile(atPath: WebBrowserTests.chromium) }

    /// A paused conversation (typed turns need no audio to pass, as in WebTests) and a tab the
    /// size of a phone, in `language`, paired.
    func onAPhone(
        language: String = "es", paired: Bool = true,
        _ body: @escaping @Sendable (inout DevTools, Int, TestConversation) async throws -> Void
    ) async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let browser = try HeadlessChromium(in: dir)
        defer { browser.stop() }
        try await WebTests().withServer { port, conversation in
            #expect(await TestConversation.until { conversation.interpreter.snapshot.state == "listening" })
            conversation.interpreter.pause()
            #expect(await TestConversation.until { conversation.interpreter.snapshot.state == "paused" })
            try await browser.withTab { tab in
                try await tab.phone()
                try await tab.speak(language)
                if paired {
                    try await tab.open("http://127.0.0.1:\(port)/#code=\(WebTests.code)")
                    try await tab.waitFor("the page paired") { $0.connected && !$0.replyHidden }
                } else {
                    try await tab.open("http://127.0.0.1:\(port)/")
                    try await tab.waitFor("the page connected") { $0.connected && !$0.pairHidden }
                }
                try await body(&tab, port, conversation)
            }
            conversation.interpreter.resume()
        }
    }

    /// Where an element is, in CSS pixels of the viewport.
    struct Box: Decodable, CustomStringConvertible {
        var id: String
        var top: Double
        var bottom: Double
        var left: Double
        var right: Double
        var description: String { "\(id) \(left)-\(right) x \(top)-\(bottom)" }
    }

    @Test(.enabled(if: !WebBrowserTests.browserMissing, "Debian's chromium is not installed (make deps installs it)"))
    func atPhoneSizeTheReplyBoxStaysInReachWithTenTurnsInTheirOwnScrollingArea() async throws {
        try await onAPhone { tab, port, conversation in
            for index in 1...10 {
                _ = try await conversation.interpreter.say(index % 2 == 0 ? .b : .a, text: "turn number \(index) with a few more words to wrap")
            }
            try await tab.open("about:blank")
            try await tab.open("http://127.0.0.1:\(port)/")
            try await tab.waitFor("10 turns shown") { $0.connected && !$0.replyHidden && $0.turns.count == 10 }
            let json = try await tab.evaluate(
                """
                JSON.stringify({
                  width: innerWidth, height: innerHeight,
                  scrolls: document.scrollingElement.scrollHeight,
                  list: { scrollHeight: document.getElementById("history").scrollHeight, clientHeight: document.getElementById("history").clientHeight },
                  boxes: ["text", "send", "repeat", "swap", "heard", "langs"].map((id) => {
                    const box = document.getElementById(id).getBoundingClientRect();
                    return { id: id, top: box.top, bottom: box.bottom, left: box.left, right: box.right };
                  }) })
                """)
            struct Layout: Decodable {
                struct Scroll: Decodable {
                    var scrollHeight: Double
                    var clientHeight: Double
                }
                var width: Double
                var height: Double
                var scrolls: Double
                var list: Scroll
                var boxes: [Box]
            }
            let layout = try JSONDecoder().decode(Layout.self, from: Data(json.utf8))
            #expect(layout.width == 390 && layout.height == 844, "the phone's viewport")
            for box in layout.boxes {
                #expect(box.top >= 0 && box.bottom <= layout.height && box.left >= 0 && box.right <= layout.width, "out of reach: \(box)")
                #expect(box.bottom > box.top, "\(box.id) is shown")
            }
            #expect(layout.scrolls <= layout.height + 1, "the page itself does not scroll (\(layout.scrolls) px)")
            #expect(layout.list.scrollHeight > layout.list.clientHeight, "the 10 turns scroll in their own area: \(layout.list)")
        }
    }

    @Test(.enabled(if: !WebBrowserTests.browserMissing, "Debian's chromium is not installed (make deps installs it)"))
    func theTurnsReadAsTheLiveAreaDoesEachLineTaggedWithItsLanguage() async throws {
        try await onAPhone { tab, port, conversation in
            _ = try await conversation.interpreter.say(.a, text: "where is the station")
            _ = try await conversation.interpreter.say(.b, text: "dónde está la estación")
            try await tab.open("about:blank")
            try await tab.open("http://127.0.0.1:\(port)/")
            try await tab.waitFor("2 turns shown") { $0.connected && $0.turns.count == 2 }
            struct Line: Decodable, Equatable {
                var lang: String
                var tag: String
                var text: String
            }
            let json = try await tab.evaluate(
                """
                JSON.stringify(Array.from(document.querySelectorAll("#turns li")).map((item) =>
                  Array.from(item.children).map((line) => ({
                    lang: line.lang, tag: line.querySelector(".tag").textContent,
                    text: line.textContent.slice(line.querySelector(".tag").textContent.length) }))))
                """)
            let turns = try JSONDecoder().decode([[Line]].self, from: Data(json.utf8))
            // Newest first; whoever spoke, and whichever language the page is in (Spanish): the
            // speaker's words, then the translation, as the live area shows them.
            #expect(
                turns == [
                    [Line(lang: "es", tag: "es", text: "dónde está la estación"), Line(lang: "en", tag: "en", text: "[en] dónde está la estación")],
                    [Line(lang: "en", tag: "en", text: "where is the station"), Line(lang: "es", tag: "es", text: "[es] where is the station")],
                ], "\(turns)")
            let shown = try #require(try await tab.state())
            #expect(shown.heard == "dónde está la estación" && shown.said == "[en] dónde está la estación", "the live area: \(shown)")
        }
    }

    @Test(.enabled(if: !WebBrowserTests.browserMissing, "Debian's chromium is not installed (make deps installs it)"))
    func whileATypedReplyIsSpokenTheLiveAreaShowsItsTurnOnly() async throws {
        try await onAPhone { tab, _, conversation in
            try await tab.type("buenos días", into: "text")
            try await tab.click("#send")
            try await tab.waitFor("the first turn shown") { $0.turns.count == 1 && $0.said == "[en] buenos días" }
            // Every state of the live area after each event the page handled.
            _ = try await tab.evaluate(
                """
                window.parleyLive = [];
                new MutationObserver(() => {
                  window.parleyLive.push({ heard: document.getElementById("heard").textContent, said: document.getElementById("said").textContent });
                }).observe(document.getElementById("live"), { childList: true, characterData: true, subtree: true });
                true
                """)
            // A reply typed on this page, then one typed elsewhere (`parley say`), each while the turn before it is shown.
            try await tab.type("hasta luego", into: "text")
            try await tab.click("#send")
            try await tab.waitFor("the reply shown") { $0.turns.count == 2 && $0.said == "[en] hasta luego" }
            _ = try await conversation.interpreter.say(.a, text: "good night")
            try await tab.waitFor("the turn said elsewhere shown") { $0.turns.count == 3 && $0.said == "[es] good night" }
            // Its translation repeated from this page (a replay is stored as no turn), then another turn typed elsewhere.
            let replayed = try await conversation.history.recentTurns(limit: 1).first?.id
            _ = try await tab.evaluate(
                """
                window.parleyWho = [];
                new MutationObserver(() => { window.parleyWho.push(document.getElementById("who").textContent); })
                  .observe(document.getElementById("who"), { childList: true, characterData: true, subtree: true });
                true
                """)
            try await tab.click("#repeat")
            #expect(await TestConversation.until { conversation.interpreter.snapshot.state == "paused" && conversation.synthesizer.texts.count == 4 })
            // The page, too, has seen the replay end (its events may reach the page after the
            // daemon's own state has moved on): what a person types next is a new turn.
            let paused = Self.expected("es", "state_paused")
            var whoSeen: [String] = []
            for _ in 0..<600 {
                whoSeen = (try? JSONDecoder().decode([String].self, from: Data(try await tab.evaluate("JSON.stringify(window.parleyWho)").utf8))) ?? []
                if whoSeen.count > 1, whoSeen.last == paused { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(whoSeen.count > 1 && whoSeen.last == paused, "\(whoSeen)")
            _ = try await conversation.interpreter.say(.a, text: "thank you")
            try await tab.waitFor("the last turn shown") { $0.turns.count == 4 && $0.said == "[es] thank you" }
            #expect(try await conversation.history.recentTurns(limit: 2).map(\.id).last == replayed, "the replay stored no turn")
            struct Live: Decodable, CustomStringConvertible {
                var heard: String
                var said: String
                var description: String { "\(heard) / \(said)" }
            }
            let seen = try JSONDecoder().decode([Live].self, from: Data(try await tab.evaluate("JSON.stringify(window.parleyLive)").utf8))
            #expect(seen.contains { $0.said == "[en] hasta luego" }, "\(seen)")
            for live in seen where live.said == "[en] hasta luego" {
                #expect(live.heard == "hasta luego", "the translation under the words of another turn: \(seen)")
            }
            for live in seen where live.said == "[es] good night" {
                #expect(live.heard == "" || live.heard == "good night", "the translation under the words of another turn: \(seen)")
            }
            for live in seen where live.said == "[es] thank you" {
                #expect(live.heard == "" || live.heard == "thank you", "the translation under the words of another turn: \(seen)")
            }
            let shown = try #require(try await tab.state())
            #expect(shown.heard == "thank you", "the turn once stored: \(shown)")
        }
    }

    @Test(.enabled(if: !WebBrowserTests.browserMissing, "Debian's chromium is not installed (make deps installs it)"))
    func untilAutoModeDecidesWhoSpeaksThePageClaimsNoLanguageAndShowsTheWordsAsAGuess() async throws {
        try await onAPhone { tab, _, conversation in
            // The Spanish reader; auto mode expects the English side (a) and has not decided.
            conversation.events.publish(EventType.state, StateEvent(state: "listening", speaker: "a", decided: false))
            try await tab.waitFor("listening, no language") { $0.who == Self.expected("es", "state_listening_any") }
            conversation.events.publish(EventType.speechStart, SpeakerEvent(speaker: "a", language: "en", decided: false))
            conversation.events.publish(EventType.state, StateEvent(state: "hearing", speaker: "a", decided: false))
            try await tab.waitFor("hearing, no language") { $0.who == Self.expected("es", "state_hearing_any") }
            conversation.events.publish(EventType.partial, TextEvent(speaker: "a", language: "en", text: "the way they", decided: false))
            let guessed = try await tab.waitFor("the guess shown") { $0.heard == "the way they" }
            #expect(!guessed.who.contains(Self.expected("es", "lang_en")), "\(guessed.who)")
            #expect(try await tab.evaluate(#"document.getElementById("heard").className"#).split(separator: " ").contains("guess"))
            #expect(try await tab.evaluate(#"document.getElementById("heard").title"#) == Self.expected("es", "guessed_words"))
            // Decided (the transcript comes), and in a mode where it is known from the start.
            conversation.events.publish(EventType.transcript, TextEvent(speaker: "b", language: "es", text: "de qué manera"))
            try await tab.waitFor("the words heard") { $0.heard == "de qué manera" }
            #expect(try await tab.evaluate(#"document.getElementById("heard").className"#) == "big")
            conversation.events.publish(EventType.state, StateEvent(state: "hearing", speaker: "b", decided: true))
            try await tab.waitFor("hearing Spanish") { $0.who == Self.expected("es", "state_hearing", "es") }
            // A daemon that does not say (before `decided`): as before, the side is named.
            conversation.events.publish(EventType.state, StateEvent(state: "listening", speaker: "a"))
            try await tab.waitFor("listening to English") { $0.who == Self.expected("es", "state_listening", "en") }
        }
    }

    @Test(.enabled(if: !WebBrowserTests.browserMissing, "Debian's chromium is not installed (make deps installs it)"))
    func aPageOpenedWhileAutoModeListensClaimsNoLanguage() async throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let browser = try HeadlessChromium(in: dir)
        defer { browser.stop() }
        try await WebTests().withServer(mode: .auto) { port, conversation in
            #expect(await TestConversation.until { conversation.interpreter.snapshot.state == "listening" })
            try await browser.withTab { tab in
                try await tab.speak("es")
                try await tab.open("http://127.0.0.1:\(port)/")
                let shown = try await tab.waitFor("the page connected") { $0.connected && !$0.who.isEmpty && $0.who != Self.expected("es", "connecting") }
                #expect(shown.who == Self.expected("es", "state_listening_any"), "\(shown)")
            }
        }
    }

    @Test(.enabled(if: !WebBrowserTests.browserMissing, "Debian's chromium is not installed (make deps installs it)"))
    func pairingEmptiesAWrongCodeConfirmsTheRightOneAndItsPlaceholderFits() async throws {
        try await onAPhone(paired: false) { tab, _, conversation in
            // Every language's placeholder fits the field at 390 px (measured in the field's font).
            let placeholders = PageText.languages.map { PageText.table[$0]?["pairing_code"] ?? "" }
            let encoded = String(decoding: try JSONEncoder().encode(placeholders), as: UTF8.self)
            let json = try await tab.evaluate(
                """
                (() => {
                  const field = document.getElementById("code"), style = getComputedStyle(field);
                  const context = document.createElement("canvas").getContext("2d");
                  context.font = style.font;
                  const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
                  return JSON.stringify(\(encoded).map((text) => ({ text: text, width: context.measureText(text).width, room: room })));
                })()
                """)
            struct Fit: Decodable {
                var text: String
                var width: Double
                var room: Double
            }
            for fit in try JSONDecoder().decode([Fit].self, from: Data(json.utf8)) {
                #expect(fit.width <= fit.room, "\"\(fit.text)\" is cut: \(fit.width) px in \(fit.room)")
            }
            #expect(try await tab.evaluate(#"document.getElementById("code").placeholder"#) == Self.expected("es", "pairing_code"))

            // A wrong code: said, taken out of the field, and the field ready for the next.
            try await tab.type(WebTests.code == "000000" ? "111111" : "000000", into: "code")
            try await tab.click("#pair button")
            try await tab.waitFor("the wrong code refused") { $0.notice == Self.expected("es", "error_wrong_code") }
            #expect(try await tab.evaluate(#"document.getElementById("code").value"#) == "")
            #expect(try await tab.evaluate("document.activeElement.id") == "code")

            // The right one (a second later: the server's clock is the conversation's): confirmed.
            conversation.clock.advance(by: .seconds(1))
            try await tab.type(WebTests.code, into: "code")
            try await tab.click("#pair button")
            let paired = try await tab.waitFor("the pairing confirmed") { !$0.replyHidden && $0.pairHidden }
            #expect(paired.notice == Self.expected("es", "paired"), "\(paired)")
        }
    }
}

extension DevTools {
    /// The viewport of a phone 390 CSS pixels wide and 844 high (an iPhone 14), touch and all.
    mutating func phone() async throws {
        _ = try await send(
            "Emulation.setDeviceMetricsOverride",
            ["width": .number(390), "height": .number(844), "deviceScaleFactor": .number(3), "mobile": .bool(true)])
    }
}
