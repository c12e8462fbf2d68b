import Foundation
import ParleyCore
import Testing
import ParleyProtocol
@testable import ParleyCLI

/// `parley watch`'s screen, drawn by `LiveView.render` without a terminal: what a person reads
/// at 40 columns, turns whose two lines line up, a meter that says when the microphone is
/// silent, and no protocol state names.
@Suite struct WatchViewTests {
    static func turn(id: Int64, source: String = "go forward ten meters", translated: String? = "avanzar diez metros") -> TurnInfo {
        TurnInfo(
            id: id, sessionID: 1, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: source, translatedText: translated,
            confidence: 0.9, favorite: false, status: .translated, error: nil, createdAt: "2026-11-26T08:00:00.000Z", timings: .init())
    }

    static func view(state: String = "listening", speaker: String? = "b") -> LiveView {
        let view = LiveView()
        view.state = state
        view.speaker = speaker
        view.languages = ["a": "en", "b": "es"]
        return view
    }

    /// A line as a terminal shows it: without its SGR escapes.
    static func plain(_ line: String) -> String {
        line.replacingOccurrences(of: "\u{1B}\\[[0-9;?]*[A-Za-z]", with: "", options: .regularExpression)
    }

    @Test(arguments: [40, 41, 50, 80])
    func theHeaderKeepsQQuitsTogetherAndFits(width: Int) {
        let lines = Self.view().render(width: width, height: 24).map(Self.plain)
        for line in lines { #expect(ScreenText.visibleColumns(line) <= width, "\(line)") }
        let header = lines.prefix { !$0.hasPrefix("mic level") }.joined(separator: "\n")
        #expect(header.contains("q\u{00A0}quits"), "\(header)")
        for line in lines { #expect(!line.hasSuffix(" q") && !line.hasPrefix("quits"), "q is cut from quits: \(lines)") }
    }

    @Test func theHeaderAtFortyColumnsIsTwoCleanLines() {
        let view = Self.view(state: "echo_guard", speaker: "b")
        let lines = view.render(width: 40, height: 24).map(Self.plain)
        #expect(lines[0].hasPrefix("Parley  speaking, then listening to"), "\(lines)")
        #expect(lines[1].trimmingCharacters(in: .whitespaces).hasSuffix("q\u{00A0}quits"), "\(lines)")
    }

    @Test func stateNamesAreWordsAPersonReads() {
        let view = Self.view()
        let cases: [(String, String?, String)] = [
            ("listening", "b", "listening to b (es)"), ("hearing", "a", "hearing a (en)"),
            ("speaking", "a", "speaking to b (es)"), ("echo_guard", "b", "speaking, then listening to b (es)"),
            ("device_lost", nil, "microphone lost; waiting for it to come back"), ("paused", "a", "paused (microphone released)"),
        ]
        for (state, speaker, said) in cases {
            view.state = state
            view.speaker = speaker
            let header = Self.plain(view.render(width: 120, height: 24)[0]).replacingOccurrences(of: "\u{00A0}", with: " ")
            #expect(header.hasPrefix("Parley  \(said)"), "\(state): \(header)")
            #expect(!header.contains("_") && !header.contains("guard") && !header.contains("speaker "), "\(header)")
        }
        // A pipe's plain line says it in the same words.
        let line = #"{"type":"state","data":{"state":"echo_guard","speaker":"b"}}"#
        #expect(view.apply(event: Data(line.utf8)) == "state: speaking, then listening to b (es)")
    }

    /// Auto mode, before the audio tells who speaks (issue 38): the Spanish speaker after an
    /// English turn is not said to be "hearing a (en)", and the English lane's guess at their
    /// words is shown as a guess; once decided (or from a daemon that does not say), as before.
    @Test func untilWhoSpeaksIsDecidedNoSideIsClaimedAndTheLiveWordsAreAGuess() {
        let view = Self.view()
        func header() -> String { Self.plain(view.render(width: 120, height: 24)[0]).replacingOccurrences(of: "\u{00A0}", with: " ") }
        let start = #"{"type":"speech_start","data":{"speaker":"a","language":"en","decided":false}}"#
        #expect(view.apply(event: Data(start.utf8)) == "speech start (who speaks is not decided yet)")
        let hearing = #"{"type":"state","data":{"state":"hearing","speaker":"a","decided":false}}"#
        #expect(view.apply(event: Data(hearing.utf8)) == "state: hearing someone (which language is not decided yet)")
        #expect(header().hasPrefix("Parley  hearing someone"), "\(header())")
        #expect(!header().contains("(en)") && !header().contains("(es)"), "\(header())")
        let guess = #"{"type":"partial","data":{"speaker":"a","language":"en","text":"the way they","decided":false}}"#
        let line = view.apply(event: Data(guess.utf8)) ?? ""
        #expect(line.contains("not decided") && line.contains("guess") && !line.hasPrefix("partial a:"), "\(line)")
        let shown = view.render(width: 120, height: 24).map(Self.plain)
        #expect(shown.contains("  (guess) the way they"), "\(shown)")
        let listening = #"{"type":"state","data":{"state":"listening","speaker":"b","decided":false}}"#
        #expect(view.apply(event: Data(listening.utf8)) == "state: listening to either side")

        // What `status` says when watch starts (or parleyd comes back).
        var status = CLIUsageTests.status(a: .init(language: "en", hearable: true), b: .init(language: "es", hearable: true))
        status.decided = false
        view.apply(status: status)
        #expect(header().hasPrefix("Parley  listening to either side"), "\(header())")

        // Decided, or not said (an older daemon): the side, as before.
        let known = #"{"type":"state","data":{"state":"hearing","speaker":"a","decided":true}}"#
        #expect(view.apply(event: Data(known.utf8)) == "state: hearing a (en)")
        let old = #"{"type":"state","data":{"state":"listening","speaker":"b"}}"#
        #expect(view.apply(event: Data(old.utf8)) == "state: listening to b (es)")
        let started = #"{"type":"speech_start","data":{"speaker":"b","language":"es","decided":true}}"#
        #expect(view.apply(event: Data(started.utf8)) == "speech start b (es)")
        let sure = #"{"type":"partial","data":{"speaker":"a","language":"en","text":"go forward","decided":true}}"#
        #expect(view.apply(event: Data(sure.utf8)) == "partial a: go forward")
        #expect(view.render(width: 120, height: 24).map(Self.plain).contains("  go forward"))
    }

    @Test(arguments: [Int64(7), 42, 1234])
    func aTurnsTwoLinesStartTheirTextInOneColumn(id: Int64) {
        let view = Self.view()
        view.turns = [Self.turn(id: id), Self.turn(id: 3)]
        let lines = view.render(width: 80, height: 40).map(Self.plain)
        for turn in [id, 3] {
            let first = try? #require(lines.firstIndex { $0.hasPrefix("#\(turn) ") })
            guard let first else { continue }
            let source = lines[first], target = lines[first + 1]
            let sourceColumn = source.range(of: "go forward").map { source.distance(from: source.startIndex, to: $0.lowerBound) }
            let targetColumn = target.range(of: "avanzar").map { target.distance(from: target.startIndex, to: $0.lowerBound) }
            #expect(sourceColumn != nil && sourceColumn == targetColumn, "\n\(source)\n\(target)")
            let sourceLabel = source.range(of: "a en:").map { source.distance(from: source.startIndex, to: $0.lowerBound) }
            let targetLabel = target.range(of: "b es:").map { target.distance(from: target.startIndex, to: $0.lowerBound) }
            #expect(sourceLabel != nil && sourceLabel == targetLabel, "\n\(source)\n\(target)")
        }
    }

    @Test func aLongTurnContinuesUnderItsText() {
        let view = Self.view()
        view.turns = [Self.turn(id: 5, source: "go forward ten meters and then turn left at the second door on the right")]
        let lines = view.render(width: 40, height: 40).map(Self.plain)
        let first = try? #require(lines.firstIndex { $0.hasPrefix("#5 ") })
        guard let first else { return }
        let column = lines[first].range(of: "go forward").map { lines[first].distance(from: lines[first].startIndex, to: $0.lowerBound) }
        let continuation = lines[first + 1]
        #expect(column != nil && continuation.prefix { $0 == " " }.count == column, "\(lines)")
        for line in lines { #expect(line.count <= 40, "\(line)") }
    }

    @Test func aSilentMicrophoneShowsAnEmptyBarAndSaysSo() {
        let view = Self.view()
        for _ in 0..<10 { _ = view.apply(event: Data(#"{"type":"level","data":{"rms_db":-96,"peak_db":-96}}"#.utf8)) }
        let meter = Self.plain(view.render(width: 40, height: 24).first { Self.plain($0).hasPrefix("mic level") } ?? "")
        #expect(meter.hasPrefix("mic level    silent "), "\(meter)")
        #expect(!meter.contains("-96"), "\(meter)")
        #expect(meter.count == 40 && meter.hasSuffix("····"), "an empty bar across the line: \(meter)")

        _ = view.apply(event: Data(#"{"type":"level","data":{"rms_db":-20,"peak_db":-10}}"#.utf8))
        let loud = Self.plain(view.render(width: 40, height: 24).first { Self.plain($0).hasPrefix("mic level") } ?? "")
        #expect(loud.hasPrefix("mic level  -20.0 dB "), "\(loud)")
        #expect(loud.hasSuffix("·▆"), "the last level's bar at the right end: \(loud)")
    }

    @Test func decimalsAreWrittenAsPrintfWritesThem() {
        #expect(ScreenText.decimal(-42.04, places: 1) == "-42.0")
        #expect(ScreenText.decimal(-0.04, places: 1) == "0.0")
        #expect(ScreenText.decimal(3.14159, places: 2) == "3.14")
        #expect(ScreenText.decimal(0.5, places: 2) == "0.50")
        #expect(ScreenText.decimal(7, places: 0) == "7")
    }
}

