import FoundationEssentials
import ParleyCore

/// The control protocol's requests, typed.
///
/// On the wire a request is `{"type": COMMAND, "id": optional, "data": {...}}` (docs/protocol.md).
/// `Request` reads and writes exactly that; what a command's `data` may hold, and in what range,
/// is checked here once, for the daemon, the CLI and the caption page alike. Adding a command
/// is adding a case to `Command` and to `CommandName`: every switch over them (the decoder,
/// the encoder, the daemon's dispatch) then fails to compile until it handles it.

/// Every command, by its name on the wire, in the order error messages list them.
public enum CommandName: String, Sendable, Codable, CaseIterable {
    case status, version, subscribe, history, say, listen, stop, pause, resume, swap, set, config, reload, web
    case favorite, unfavorite
    case historyDelete = "history_delete", historyClear = "history_clear"
    case undo, replay
    case sessionNew = "session_new", historyExport = "history_export", historyImport = "history_import"
    case retry, languages

    /// The command changes what the daemon does or what it has stored: the daemon logs it with
    /// the peer that sent it.
    public var changesState: Bool {
        switch self {
        case .say, .listen, .stop, .pause, .resume, .swap, .set, .reload, .favorite, .unfavorite, .historyDelete, .historyClear, .undo,
            .replay, .sessionNew, .historyImport, .retry:
            true
        case .status, .version, .subscribe, .history, .config, .web, .historyExport, .languages:
            false
        }
    }

    /// The command is answered even on a connection beyond the client limit, so a flood of idle
    /// clients cannot hide whether the daemon is alive.
    public var answeredOverLimit: Bool {
        switch self {
        case .status, .version:
            true
        case .subscribe, .history, .say, .listen, .stop, .pause, .resume, .swap, .set, .config, .reload, .web, .favorite, .unfavorite,
            .historyDelete, .historyClear, .undo, .replay, .sessionNew, .historyExport, .historyImport, .retry, .languages:
            false
        }
    }

    /// "status, version, subscribe, ...": every command, for error messages.
    public static var known: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// One command with its checked data.
public enum Command: Sendable, Equatable {
    /// What the daemon is doing now.
    case status
    /// The daemon's version and protocol.
    case version
    /// Events on this connection from now on.
    case subscribe
    /// Turns matching a query, newest first.
    case history(HistoryQuery)
    /// A typed turn.
    case say(SayRequest)
    /// Push-to-talk: this speaker is heard next.
    case listen(Speaker)
    /// Ends the utterance being heard, or cuts the speech being played.
    case stop
    /// Releases the microphone.
    case pause
    /// Takes the microphone back.
    case resume
    /// Exchanges the two speakers' languages.
    case swap
    /// Changes runtime settings.
    case set(SettingsChange)
    /// The settings in force (`EffectiveConfig`).
    case config
    /// Reads the config file again.
    case reload
    /// Where the caption page is, and its pairing code.
    case web
    /// Marks a turn as a favorite.
    case favorite(TurnReference)
    /// Unmarks a favorite.
    case unfavorite(TurnReference)
    /// Deletes a turn.
    case historyDelete(TurnReference)
    /// Deletes every turn; the wire's `data.yes = true` is the confirmation.
    case historyClear
    /// Deletes the last turn of the current session.
    case undo
    /// Speaks a stored turn's translation again.
    case replay(TurnReference)
    /// Starts a new session.
    case sessionNew
    /// Sessions and turns in a time range, oldest first.
    case historyExport(HistoryRange)
    /// Adds one exported session's turns.
    case historyImport(HistoryBatch)
    /// Translates an untranslated turn again.
    case retry(TurnReference)
    /// What each language can do.
    case languages

    /// The command's name on the wire.
    public var name: CommandName {
        switch self {
        case .status: .status
        case .version: .version
        case .subscribe: .subscribe
        case .history: .history
        case .say: .say
        case .listen: .listen
        case .stop: .stop
        case .pause: .pause
        case .resume: .resume
        case .swap: .swap
        case .set: .set
        case .config: .config
        case .reload: .reload
        case .web: .web
        case .favorite: .favorite
        case .unfavorite: .unfavorite
        case .historyDelete: .historyDelete
        case .historyClear: .historyClear
        case .undo: .undo
        case .replay: .replay
        case .sessionNew: .sessionNew
        case .historyExport: .historyExport
        case .historyImport: .historyImport
        case .retry: .retry
        case .languages: .languages
        }
    }
}

// MARK: - The data of the commands

/// `say`: who typed, and the words.
public struct SayRequest: Sendable, Equatable, Encodable {
    public let speaker: Speaker
    /// Not empty (nor only white space), at most `maxCharacters`, no U+FFFD.
    public let text: String

    /// Nil when `problem(with: text)` finds something wrong.
    public init?(speaker: Speaker, text: String) {
        guard Self.problem(with: text) == nil else { return nil }
        self.speaker = speaker
        self.text = text
    }

    /// The most characters a typed turn may have. A turn's answer comes once its translation
    /// was spoken, which takes espeak-ng about a second for every 15 characters.
    public static let maxCharacters = 500

    /// What is wrong with the words of a `say`.
    public enum Problem: Sendable, Equatable {
        /// Empty, or only white space.
        case empty
        /// More than `maxCharacters` characters (it has `characters`).
        case tooLong(characters: Int)
        /// Holds U+FFFD, the replacement character: text that was not UTF-8 was converted on the way.
        case notUTF8

        /// What the daemon answers (`invalid_field`).
        public var message: String {
            switch self {
            case .empty:
                SayRequest.emptyText
            case .tooLong(let characters):
                "data.text is \(characters) characters, and a typed turn is at most \(SayRequest.maxCharacters); send it in parts, a sentence or two each"
            case .notUTF8:
                "data.text holds U+FFFD, the replacement character, so it was not UTF-8 where it came from; send the words as UTF-8"
            }
        }
    }

    /// What is wrong with `text` as the words of a `say`, or nil when nothing is.
    public static func problem(with text: String) -> Problem? {
        // Foundation's whitespacesAndNewlines is Unicode's White_Space, scalar by scalar.
        if text.unicodeScalars.allSatisfy(\.properties.isWhitespace) { return .empty }
        let characters = text.count
        if characters > maxCharacters { return .tooLong(characters: characters) }
        if text.unicodeScalars.contains("\u{FFFD}") { return .notUTF8 }
        return nil
    }

    /// What an empty `say` is told (`invalid_field`).
    public static let emptyText = "data.text must be the words to translate, and not empty"
}

/// A stored turn, by its id (`favorite`, `unfavorite`, `history_delete`, `replay`, `retry`).
public struct TurnReference: Sendable, Equatable, Encodable {
    public var id: Int64

    public init(id: Int64) { self.id = id }

    /// The ids a request may name.
    public static let ids: ClosedRange<Int> = 1...Int(Int32.max)
    /// `retry` has always taken any id a double holds exactly.
    public static let retryIDs: ClosedRange<Int> = 1...(1 << 53)
}


/// `history`: which turns, and which page of them. Absent fields do not filter.
public struct HistoryQuery: Sendable, Equatable, Encodable {
    /// In `HistoryQuery.limits`; `defaultLimit` when absent.
    public var limit: Int?
    /// Turns skipped, for paging; in `offsets`.
    public var offset: Int?
    /// Words to find, each as a prefix.
    public var search: String?
    /// Only favorites, when true.
    public var favorites: Bool?
    public var speaker: Speaker?
    /// The language spoken or translated into.
    public var lang: String?
    /// From (inclusive).
    public var since: HistoryTime?
    /// Before.
    public var until: HistoryTime?
    /// A session id, in `sessions`.
    public var session: Int64?

    public init(
        limit: Int? = nil, offset: Int? = nil, search: String? = nil, favorites: Bool? = nil, speaker: Speaker? = nil, lang: String? = nil,
        since: HistoryTime? = nil, until: HistoryTime? = nil, session: Int64? = nil
    ) {
        self.limit = limit
        self.offset = offset
        self.search = search
        self.favorites = favorites
        self.speaker = speaker
        self.lang = lang
        self.since = since
        self.until = until
        self.session = session
    }

    /// How many turns one request may ask for.
    public static let limits: ClosedRange<Int> = 1...10_000
    /// Turns answered when the request gives no limit.
    public static let defaultLimit = 50
    public static let offsets: ClosedRange<Int> = 0...Int(Int32.max)
    public static let sessions: ClosedRange<Int> = 1...Int(Int32.max)

    enum CodingKeys: String, CodingKey, CaseIterable {
        case limit, offset, search, favorites, speaker, lang, since, until, session
    }
}

/// `history_export`: a time range; absent ends are open.
public struct HistoryRange: Sendable, Equatable, Encodable {
    public var since: HistoryTime?
    public var until: HistoryTime?

    public init(since: HistoryTime? = nil, until: HistoryTime? = nil) {
        self.since = since
        self.until = until
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case since, until
    }
}

/// `history_import`: one exported session and some of its turns.
public struct HistoryBatch: Sendable, Equatable, Encodable {
    public var session: SessionInfo
    public var turns: [TurnInfo]

    public init(session: SessionInfo, turns: [TurnInfo]) {
        self.session = session
        self.turns = turns
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case session, turns
    }
}

/// A moment in a request: ISO 8601 (`2026-11-22T08:00:00Z`, fractions of a second allowed) or a
/// day (`2026-11-22`, midnight UTC). It is sent as it was written.
public struct HistoryTime: Sendable, Equatable, Encodable {
    /// As written.
    public let text: String
    public let date: Date

    /// Nil when `text` is neither form.
    public init?(_ text: String) {
        guard let date = Self.parse(text) else { return nil }
        self.text = text
        self.date = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// A moment or a day as the protocol reads them (also the timestamps of an export).
    public static func parse(_ text: String) -> Date? {
        ISOTimestamp.parseInternet(text, fractional: true) ?? ISOTimestamp.parseInternet(text, fractional: false)
            ?? ISOTimestamp.parseDay(text)
    }

    /// A moment as the protocol writes it (turns, sessions, exports): ISO 8601 in UTC, with
    /// milliseconds (`2026-11-22T05:19:17.975Z`). `parse` reads it back.
    public static func format(_ date: Date) -> String { ISOTimestamp.format(date) }
}

// MARK: - The request on the wire

/// A request whose command is known and whose data is checked.
public struct Request: Sendable, Equatable, Codable {
    /// Echoed in the reply.
    public var id: JSONValue?
    public var command: Command

    public init(_ command: Command, id: JSONValue? = nil) {
        self.command = command
        self.id = id
    }

    private enum Key: String, CodingKey {
        case type, id, data
    }

    /// Reads a request line's object. A value that is not a request object throws a
    /// `DecodingError`; an unknown command or bad data throws a `RequestError` that says what to
    /// send instead (and carries the request's `id`).
    public init(from decoder: any Decoder) throws {
        let raw = try RawRequest(from: decoder)
        id = raw.id
        command = try Command(type: raw.type, data: raw.data ?? [:], id: raw.id)
    }

    /// Writes `{"type", "id", "data"}`; `data` only for commands that have some.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(command.name, forKey: .type)
        try container.encodeIfPresent(id, forKey: .id)
        switch command {
        case .status, .version, .subscribe, .stop, .pause, .resume, .swap, .config, .reload, .web, .undo, .sessionNew, .languages:
            break
        case .history(let query): try container.encode(query, forKey: .data)
        case .say(let say): try container.encode(say, forKey: .data)
        case .listen(let speaker): try container.encode(["speaker": speaker], forKey: .data)
        case .set(let change): try container.encode(change, forKey: .data)
        case .favorite(let turn), .unfavorite(let turn), .historyDelete(let turn), .replay(let turn), .retry(let turn):
            try container.encode(turn, forKey: .data)
        case .historyClear: try container.encode(["yes": true], forKey: .data)
        case .historyExport(let range): try container.encode(range, forKey: .data)
        case .historyImport(let batch): try container.encode(batch, forKey: .data)
        }
    }

    /// Decodes one request line. Anything that is not a JSON request object is `bad_request`.
    public init(line: Data) throws(RequestError) {
        do {
            self = try JSONDecoder().decode(Request.self, from: line)
        } catch let error as RequestError {
            throw error
        } catch {
            throw RequestError(.badRequest, #"not a request: send one JSON object per line, like {"type":"status"}"#, id: nil)
        }
    }
}

/// Any request as it is on the wire, command and data unchecked: what a client sends to test
/// the daemon's answers to requests it does not know.
public struct RawRequest: Sendable, Codable, Equatable {
    public var type: String
    public var id: JSONValue?
    public var data: [String: JSONValue]?

    public init(type: String, id: JSONValue? = nil, data: [String: JSONValue]? = nil) {
        self.type = type
        self.id = id
        self.data = data
    }
}

/// A request the daemon will not carry out as sent: the error reply's code and message.
public struct RequestError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// The request's id, when it had one.
    public var id: JSONValue?

    public init(_ code: ErrorCode, _ message: String, id: JSONValue?) {
        self.code = code
        self.message = message
        self.id = id
    }

    public var description: String { message }
}

// MARK: - Reading data

extension Command {
    /// The command `type` names, with its `data` checked; throws `unknown_command` or
    /// `invalid_field` with what to send instead.
    public init(type: String, data: [String: JSONValue], id: JSONValue? = nil) throws(RequestError) {
        guard let name = CommandName(rawValue: type) else {
            throw RequestError(.unknownCommand, "unknown command \"\(type)\"; known: \(CommandName.known)", id: id)
        }
        do {
            self = try Self.read(name, RequestFields(data: data))
        } catch {
            throw RequestError(.invalidField, error.description, id: id)
        }
    }

    private static func read(_ name: CommandName, _ fields: RequestFields) throws(FieldError) -> Command {
        switch name {
        // These have always ignored their data.
        case .status: return .status
        case .version: return .version
        case .subscribe: return .subscribe
        case .stop: return .stop
        case .pause: return .pause
        case .resume: return .resume
        case .swap: return .swap
        case .config: return .config
        // These take no data.
        case .reload: return try fields.none(.reload)
        case .web: return try fields.none(.web)
        case .undo: return try fields.none(.undo)
        case .sessionNew: return try fields.none(.sessionNew)
        case .languages: return try fields.none(.languages)
        case .history:
            return .history(try HistoryQuery(fields))
        case .say:
            try fields.allowOnly(["speaker", "text"])
            let speaker = try fields.speaker("speaker")
            let text = try fields.string("text") ?? ""
            guard let say = SayRequest(speaker: speaker, text: text) else {
                throw FieldError(SayRequest.problem(with: text)?.message ?? SayRequest.emptyText)
            }
            return .say(say)
        case .listen:
            try fields.allowOnly(["speaker"])
            return .listen(try fields.speaker("speaker"))
        case .set:
            return .set(try SettingsChange(fields))
        case .favorite: return .favorite(try fields.turn())
        case .unfavorite: return .unfavorite(try fields.turn())
        case .historyDelete: return .historyDelete(try fields.turn())
        case .replay: return .replay(try fields.turn())
        case .retry:
            try fields.allowOnly(["id"])
            guard let id = try fields.int("id", in: TurnReference.retryIDs) else {
                throw FieldError("data.id is required: the id of an untranslated turn (see `parley history`)")
            }
            return .retry(TurnReference(id: Int64(id)))
        case .historyClear:
            try fields.allowOnly(["yes"])
            guard try fields.bool("yes") == true else {
                throw FieldError("history_clear deletes every turn, favorites too; send data.yes = true to confirm")
            }
            return .historyClear
        case .historyExport:
            try fields.allowOnly(HistoryRange.CodingKeys.allCases.map(\.rawValue))
            return .historyExport(HistoryRange(since: try fields.time("since"), until: try fields.time("until")))
        case .historyImport:
            try fields.allowOnly(HistoryBatch.CodingKeys.allCases.map(\.rawValue))
            return .historyImport(HistoryBatch(session: try fields.decoded(SessionInfo.self, "session"), turns: try fields.decoded([TurnInfo].self, "turns")))
        }
    }
}

extension HistoryQuery {
    fileprivate init(_ fields: RequestFields) throws(FieldError) {
        try fields.allowOnly(CodingKeys.allCases.map(\.rawValue))
        self.init(
            limit: try fields.int("limit", in: Self.limits), offset: try fields.int("offset", in: Self.offsets),
            search: try fields.string("search"), favorites: try fields.bool("favorites"),
            speaker: fields.isAbsent("speaker") ? nil : try fields.speaker("speaker"), lang: try fields.string("lang"),
            since: try fields.time("since"), until: try fields.time("until"), session: try fields.int("session", in: Self.sessions).map(Int64.init))
    }
}

extension SettingsChange {
    fileprivate init(_ fields: RequestFields) throws(FieldError) {
        let keys = CodingKeys.allCases.map(\.rawValue)
        try fields.allowOnly(keys)
        guard !fields.data.isEmpty else { throw FieldError("give at least one of \(keys.joined(separator: ", "))") }
        var mode: ConversationMode?
        if let name = try fields.string("mode") {
            guard let parsed = ConversationMode(rawValue: name) else {
                throw FieldError("data.mode must be \(ConversationMode.spelledOut), not \"\(name)\"")
            }
            mode = parsed
        }
        self.init(
            speakerA: try fields.string("speaker_a"), speakerB: try fields.string("speaker_b"), mode: mode,
            silenceMs: try fields.int("silence_ms", in: SettingBounds.silenceMs), echoTailMs: try fields.int("echo_tail_ms", in: SettingBounds.echoTailMs),
            minConfidence: try fields.number("min_confidence", in: SettingBounds.minConfidence))
    }
}

/// A field of a request that is missing, of the wrong type or out of range.
struct FieldError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads a request's `data` strictly; every message names the field and what it takes.
struct RequestFields {
    let data: [String: JSONValue]

    func allowOnly(_ known: [String]) throws(FieldError) {
        for key in data.keys.sorted() where !known.contains(key) {
            throw FieldError(
                known.isEmpty
                    ? "data.\(key) is not a field of this command; it takes none"
                    : "data.\(key) is not a field of this command; use \(known.joined(separator: ", "))")
        }
    }

    /// `command`, when the request has no data (an empty object is none).
    func none(_ command: Command) throws(FieldError) -> Command {
        try allowOnly([])
        return command
    }

    /// Missing or null.
    func isAbsent(_ key: String) -> Bool {
        switch data[key] {
        case nil, .null?: true
        default: false
        }
    }

    func string(_ key: String) throws(FieldError) -> String? {
        switch data[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw FieldError("data.\(key) must be a string, not \(other.typeName)")
        }
    }

    func bool(_ key: String) throws(FieldError) -> Bool? {
        switch data[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw FieldError("data.\(key) must be true or false, not \(other.typeName)")
        }
    }

    func number(_ key: String, in range: ClosedRange<Double>) throws(FieldError) -> Double? {
        switch data[key] {
        case nil, .null?: return nil
        case .number(let value)? where range.contains(value): return value
        case .number(let value)?: throw FieldError("data.\(key) is \(value); use a number from \(range.lowerBound) to \(range.upperBound)")
        case let other?: throw FieldError("data.\(key) must be a number, not \(other.typeName)")
        }
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(FieldError) -> Int? {
        switch data[key] {
        case .number(let value)? where value != value.rounded():
            throw FieldError("data.\(key) must be a whole number")
        case .number(let value)? where !(Double(range.lowerBound)...Double(range.upperBound)).contains(value):
            throw FieldError("data.\(key) is \(Self.spelled(value)); use a whole number from \(range.lowerBound) to \(range.upperBound)")
        default:
            return try number(key, in: Double(range.lowerBound)...Double(range.upperBound)).map { Int($0) }
        }
    }

    func speaker(_ key: String) throws(FieldError) -> Speaker {
        guard let raw = try string(key) else { throw FieldError("data.\(key) is required: \"a\" or \"b\"") }
        guard let speaker = Speaker(rawValue: raw) else { throw FieldError("data.\(key) must be \"a\" or \"b\", not \"\(raw)\"") }
        return speaker
    }

    /// `data.id`, a stored turn's id; the command takes nothing else.
    func turn() throws(FieldError) -> TurnReference {
        try allowOnly(["id"])
        guard let value = try int("id", in: TurnReference.ids) else { throw FieldError("data.id is required: the turn's id") }
        return TurnReference(id: Int64(value))
    }

    func time(_ key: String) throws(FieldError) -> HistoryTime? {
        guard let text = try string(key) else { return nil }
        guard let time = HistoryTime(text) else {
            throw FieldError("data.\(key) \"\(text)\" is not a date; use ISO 8601 such as 2026-11-22 or 2026-11-22T08:00:00Z")
        }
        return time
    }

    /// A required field holding a value of one of the protocol's result types.
    func decoded<T: Decodable>(_ type: T.Type, _ key: String) throws(FieldError) -> T {
        guard let value = data[key] else { throw FieldError("data.\(key) is required") }
        do {
            return try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
        } catch {
            throw FieldError("data.\(key) is not what `parley history export --format json` writes: \(error)")
        }
    }

    /// 12 rather than 12.0; other numbers as Swift prints them.
    private static func spelled(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
