import Foundation
import ParleyCore
import ParleyProtocol
import Testing

/// The typed requests against literal lines of the wire format (docs/protocol.md): every
/// command reads from what clients send today, and writes back the same JSON.
@Suite("Protocol commands")
struct ProtocolCommandTests {
    static let turn = #"{"id":5,"session_id":2,"speaker":"a","source_lang":"en","target_lang":"es","source_text":"hello","translated_text":"hola","favorite":false,"low_confidence":false,"status":"translated","created_at":"2026-11-22T08:00:00.000Z","timings":{"mt_ms":3}}"#
    static let session = #"{"id":2,"started_at":"2026-11-22T07:59:00.000Z","speaker_a":"en","speaker_b":"es"}"#

    static let importLine: String = #"{"type":"history_import","data":{"session":"# + session + #","turns":["# + turn + "]}}"

    static func time(_ text: String) -> HistoryTime {
        guard let time = HistoryTime(text) else { preconditionFailure("a test date that does not parse: \(text)") }
        return time
    }

    static func say(_ speaker: Speaker, _ text: String) -> SayRequest {
        guard let say = SayRequest(speaker: speaker, text: text) else { preconditionFailure("an empty test say") }
        return say
    }

    /// One line per command, as clients send it, and what it means.
    static let lines: [(String, Request)] = [
        (#"{"type":"status","id":7}"#, Request(.status, id: .number(7))),
        (#"{"type":"version"}"#, Request(.version)),
        (#"{"type":"subscribe","id":"sub"}"#, Request(.subscribe, id: .string("sub"))),
        (
            #"{"type":"history","data":{"limit":20,"offset":40,"search":"cafe","favorites":true,"speaker":"b","lang":"es","since":"2026-11-22","until":"2026-11-23T08:00:00.000Z","session":3}}"#,
            Request(
                .history(
                    HistoryQuery(
                        limit: 20, offset: 40, search: "cafe", favorites: true, speaker: .b, lang: "es", since: time("2026-11-22"),
                        until: time("2026-11-23T08:00:00.000Z"), session: 3)))
        ),
        (#"{"type":"history","data":{}}"#, Request(.history(HistoryQuery()))),
        (#"{"type":"say","id":1,"data":{"speaker":"a","text":"hello there"}}"#, Request(.say(say(.a, "hello there")), id: .number(1))),
        (#"{"type":"listen","data":{"speaker":"b"}}"#, Request(.listen(.b))),
        (#"{"type":"stop"}"#, Request(.stop)),
        (#"{"type":"pause"}"#, Request(.pause)),
        (#"{"type":"resume"}"#, Request(.resume)),
        (#"{"type":"swap","id":4}"#, Request(.swap, id: .number(4))),
        (
            #"{"type":"set","data":{"speaker_a":"en","speaker_b":"es","mode":"one-way","silence_ms":900,"echo_tail_ms":300,"min_confidence":0.4}}"#,
            Request(.set(SettingsChange(speakerA: "en", speakerB: "es", mode: .oneWay, silenceMs: 900, echoTailMs: 300, minConfidence: 0.4)))
        ),
        (#"{"type":"set","data":{"silence_ms":50}}"#, Request(.set(SettingsChange(silenceMs: 50)))),
        (#"{"type":"config"}"#, Request(.config)),
        (#"{"type":"reload"}"#, Request(.reload)),
        (#"{"type":"web"}"#, Request(.web)),
        (#"{"type":"favorite","data":{"id":12}}"#, Request(.favorite(TurnReference(id: 12)))),
        (#"{"type":"unfavorite","data":{"id":12}}"#, Request(.unfavorite(TurnReference(id: 12)))),
        (#"{"type":"history_delete","data":{"id":12}}"#, Request(.historyDelete(TurnReference(id: 12)))),
        (#"{"type":"history_clear","data":{"yes":true}}"#, Request(.historyClear)),
        (#"{"type":"undo"}"#, Request(.undo)),
        (#"{"type":"replay","data":{"id":12}}"#, Request(.replay(TurnReference(id: 12)))),
        (#"{"type":"session_new"}"#, Request(.sessionNew)),
        (
            #"{"type":"history_export","data":{"since":"2026-11-22","until":"2026-11-23T00:00:00Z"}}"#,
            Request(.historyExport(HistoryRange(since: time("2026-11-22"), until: time("2026-11-23T00:00:00Z"))))
        ),
        (#"{"type":"history_export","data":{}}"#, Request(.historyExport(HistoryRange()))),
        (importLine, Request(.historyImport(batch))),
        (#"{"type":"retry","data":{"id":9007199254740992}}"#, Request(.retry(TurnReference(id: 1 << 53)))),
        (#"{"type":"languages"}"#, Request(.languages)),
    ]

    static var batch: HistoryBatch {
        HistoryBatch(
            session: SessionInfo(id: 2, startedAt: "2026-11-22T07:59:00.000Z", endedAt: nil, speakerA: "en", speakerB: "es"),
            turns: [
                TurnInfo(
                    id: 5, sessionID: 2, speaker: .a, sourceLang: "en", targetLang: "es", sourceText: "hello", translatedText: "hola",
                    confidence: nil, favorite: false, status: .translated, error: nil, createdAt: "2026-11-22T08:00:00.000Z",
                    timings: .init(mtMs: 3))
            ])
    }

    static func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static func decode(_ line: String) throws(RequestError) -> Request {
        try Request(line: Data(line.utf8))
    }

    /// The error a line gets.
    static func failure(_ line: String) -> RequestError? {
        do {
            _ = try decode(line)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyCommandHasALine() {
        #expect(Set(Self.lines.map(\.1.command.name)) == Set(CommandName.allCases))
    }

    @Test(arguments: lines.indices)
    func readsTodaysLine(_ index: Int) throws {
        let (line, request) = Self.lines[index]
        #expect(try Self.decode(line) == request)
    }

    @Test(arguments: lines.indices)
    func writesTodaysLine(_ index: Int) throws {
        let (line, request) = Self.lines[index]
        let written = try JSONEncoder().encode(request)
        #expect(try JSONDecoder().decode(JSONValue.self, from: written) == Self.json(line))
        #expect(try JSONDecoder().decode(Request.self, from: written) == request)
    }

    @Test func commandsThatHaveAlwaysIgnoredTheirDataStillDo() throws {
        #expect(try Self.decode(#"{"type":"status","data":{"verbose":true}}"#) == Request(.status))
        #expect(try Self.decode(#"{"type":"swap","data":{}}"#) == Request(.swap))
    }

    @Test func whatIsNotARequestIsABadRequest() {
        for line in ["{not json", "[1, 2, 3]", "\u{01} garbage", #"{"type":7}"#, #"{"id":1}"#, #"{"type":"status","data":[1]}"#, ""] {
            let error = Self.failure(line)
            #expect(error?.code == .badRequest, "\(line)")
            #expect(error?.id == nil)
            #expect(error?.message.contains(#"{"type":"status"}"#) == true)
        }
    }

    @Test func anUnknownCommandIsNamedAndTheKnownOnesListed() throws {
        let error = try #require(Self.failure(#"{"type":"dance","id":7}"#))
        #expect(error.code == .unknownCommand)
        #expect(error.id == .number(7))
        #expect(error.message.hasPrefix(#"unknown command "dance"; known: status, version"#))
        for name in CommandName.allCases {
            #expect(error.message.contains(name.rawValue))
        }
    }

    /// A bad field: the error names the field and what it takes, with the request's id.
    @Test(arguments: [
        (#"{"type":"set","id":3,"data":{"silence_ms":20}}"#, ["data.silence_ms is 20", "from 50 to 10000"]),
        (#"{"type":"set","data":{"silence_ms":"long"}}"#, ["data.silence_ms must be a number, not string"]),
        (#"{"type":"set","data":{"silence_ms":900.5}}"#, ["data.silence_ms must be a whole number"]),
        (#"{"type":"set","data":{"echo_tail_ms":10001}}"#, ["data.echo_tail_ms", "from 0 to 10000"]),
        (#"{"type":"set","data":{"min_confidence":1.5}}"#, ["data.min_confidence is 1.5", "from 0.0 to 1.0"]),
        (#"{"type":"set","data":{"mode":"loud"}}"#, [#"data.mode must be "auto", "alternate", "one-way" or "manual", not "loud""#]),
        (#"{"type":"set","data":{}}"#, ["give at least one of speaker_a, speaker_b, mode, silence_ms, echo_tail_ms, min_confidence"]),
        (#"{"type":"set","data":{"volume":3}}"#, ["data.volume is not a field of this command; use speaker_a"]),
        (#"{"type":"say","data":{"speaker":"a","text":"   "}}"#, ["data.text must be the words to translate, and not empty"]),
        (#"{"type":"say","data":{"text":"hi"}}"#, [#"data.speaker is required: "a" or "b""#]),
        (#"{"type":"say","data":{"speaker":"c","text":"hi"}}"#, [#"data.speaker must be "a" or "b", not "c""#]),
        (#"{"type":"listen","data":{"speaker":1}}"#, ["data.speaker must be a string, not number"]),
        (#"{"type":"history","data":{"limit":-1}}"#, ["data.limit is -1", "from 1 to 10000"]),
        (#"{"type":"history","data":{"favorites":"yes"}}"#, ["data.favorites must be true or false, not string"]),
        (#"{"type":"history","data":{"since":"yesterday"}}"#, [#"data.since "yesterday" is not a date"#]),
        (#"{"type":"history_clear"}"#, ["send data.yes = true to confirm"]),
        (#"{"type":"favorite","data":{}}"#, ["data.id is required: the turn's id"]),
        (#"{"type":"replay","data":{"id":0}}"#, ["data.id is 0", "from 1 to 2147483647"]),
        (#"{"type":"retry"}"#, ["data.id is required: the id of an untranslated turn"]),
        (#"{"type":"reload","data":{"now":true}}"#, ["data.now is not a field of this command; it takes none"]),
        (#"{"type":"history_import","data":{"session":{"id":1},"turns":[]}}"#, ["data.session is not what `parley history export --format json` writes"]),
        (#"{"type":"history_import","data":{"turns":[]}}"#, ["data.session is required"]),
    ])
    func aBadFieldIsNamedWithWhatItTakes(_ line: String, _ fragments: [String]) throws {
        let error = try #require(Self.failure(line))
        #expect(error.code == .invalidField)
        for fragment in fragments {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
        if line.contains(#""id":3"#) { #expect(error.id == .number(3)) }
    }

    @Test func theBoundsAreTheSharedOnes() throws {
        let low = SettingBounds.silenceMs.lowerBound
        #expect(try Self.decode(#"{"type":"set","data":{"silence_ms":\#(low)}}"#) == Request(.set(SettingsChange(silenceMs: low))))
        #expect(Self.failure(#"{"type":"set","data":{"silence_ms":\#(low - 1)}}"#)?.code == .invalidField)
        let high = HistoryQuery.limits.upperBound
        #expect(try Self.decode(#"{"type":"history","data":{"limit":\#(high)}}"#) == Request(.history(HistoryQuery(limit: high))))
        #expect(Self.failure(#"{"type":"history","data":{"limit":\#(high + 1)}}"#)?.code == .invalidField)
    }

    @Test func onlyStatusAndVersionAreAnsweredOverTheClientLimit() {
        #expect(Set(CommandName.allCases.filter(\.answeredOverLimit)) == [.status, .version])
    }

    /// The commands docs/protocol.md says are logged with their peer, and `reload` and `retry`.
    @Test func changingCommandsAreTheDocumentedOnes() {
        #expect(
            Set(CommandName.allCases.filter(\.changesState)) == [
                .say, .listen, .stop, .pause, .resume, .swap, .set, .favorite, .unfavorite, .historyDelete, .historyClear, .undo, .replay,
                .sessionNew, .historyImport, .reload, .retry,
            ])
    }

    @Test func aSayNeedsWords() {
        #expect(SayRequest(speaker: .a, text: " \n ") == nil)
        #expect(SayRequest(speaker: .a, text: "hi")?.text == "hi")
    }

    @Test func thePageHasItsOwnActions() throws {
        #expect(WebActionName.known == "pair, say, replay, swap")
        #expect(WebActionName(rawValue: "history") == nil)
        #expect(Set(WebActionName.allCases.filter(\.needsPairing)) == [.say, .replay, .swap])
        #expect(try WebAction(.say, data: ["language": .string("es"), "text": .string("hola")], id: nil) == .say(language: "es", text: "hola"))
        #expect(throws: RequestError(.invalidField, "data.code must be the 6-digit code `parley web` shows", id: .number(1))) {
            try WebAction(.pair, data: [:], id: .number(1))
        }
    }

    @Test func theModesAreSpelledOutInOnePlace() {
        #expect(ConversationMode.spelledOut == #""auto", "alternate", "one-way" or "manual""#)
        #expect(SettingBounds.spelled(SettingBounds.silenceMs) == "50-10000")
        #expect(SettingBounds.spelled(SettingBounds.minConfidence) == "0-1")
    }
}
