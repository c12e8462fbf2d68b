import FoundationEssentials

/// `web`: where the caption page is served and the code that pairs a page (`parley web`).
public struct WebInfo: Sendable, Codable, Equatable {
    /// False when `[web] enabled` is off; the other fields are then what would be used.
    public var enabled: Bool
    /// The address the page is served on (`[web] listen`).
    public var listen: String
    /// The port it listens on (the one the system chose when `[web] port` is 0); nil until it listens.
    public var port: Int?
    /// "code" or "read-only" (`[web] pairing`).
    public var pairing: String
    /// The 6-digit code that lets a page act; nil when the page only reads or is off.
    public var code: String?
    /// Connections the page server takes at once.
    public var maxConnections: Int
    /// The longest message a page may send, in bytes.
    public var maxMessageBytes: Int

    public init(enabled: Bool, listen: String, port: Int?, pairing: String, code: String?, maxConnections: Int, maxMessageBytes: Int) {
        self.enabled = enabled
        self.listen = listen
        self.port = port
        self.pairing = pairing
        self.code = code
        self.maxConnections = maxConnections
        self.maxMessageBytes = maxMessageBytes
    }

    enum CodingKeys: String, CodingKey {
        case enabled, listen, port, pairing, code
        case maxConnections = "max_connections", maxMessageBytes = "max_message_bytes"
    }

    /// The page's address for `host` (the listen address, or this machine's LAN address when it
    /// listens on all of them); with the code in it when `withCode`, so opening it pairs. The
    /// code is in the fragment (`#code=`), which a browser never sends in a request: it stays
    /// out of the server's and any proxy's logs.
    public func url(host: String, withCode: Bool) -> String? {
        guard let port else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let fragment = withCode ? code.map { "#code=\($0)" } ?? "" : ""
        return "http://\(bracketed):\(port)/\(fragment)"
    }
}

/// The caption page's first message on its WebSocket: what to show before any event comes.
public struct WebHello: Sendable, Codable, Equatable {
    /// The daemon's `status`.
    public var status: StatusInfo
    /// The last turns, newest first.
    public var turns: [TurnInfo]
    /// Words less sure than this are marked doubtful (`min_confidence`).
    public var minConfidence: Double
    /// Whether this connection may act (say, replay, swap).
    public var paired: Bool
    /// "code" or "read-only".
    public var pairing: String
    public var maxMessageBytes: Int

    public init(status: StatusInfo, turns: [TurnInfo], minConfidence: Double, paired: Bool, pairing: String, maxMessageBytes: Int) {
        self.status = status
        self.turns = turns
        self.minConfidence = minConfidence
        self.paired = paired
        self.pairing = pairing
        self.maxMessageBytes = maxMessageBytes
    }

    enum CodingKeys: String, CodingKey {
        case status, turns, paired, pairing
        case minConfidence = "min_confidence", maxMessageBytes = "max_message_bytes"
    }
}

/// What the caption page may send on its WebSocket, by name; nothing else is reachable from it.
public enum WebActionName: String, Sendable, CaseIterable {
    case pair, say, replay, swap

    /// Only a paired page may do it (`pair` is how a page becomes paired).
    public var needsPairing: Bool {
        switch self {
        case .pair: false
        case .say, .replay, .swap: true
        }
    }

    /// "pair, say, replay, swap", for error messages.
    public static var known: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

/// A caption page's message, with its data checked. The page names a side by its language (it
/// shows languages, not "a" and "b"); the web server turns an action into a control `Command`.
public enum WebAction: Sendable, Equatable {
    /// `{"code": "123456"}`: the code `parley web` shows.
    case pair(code: String)
    /// `{"language": "es", "text": "..."}`: a typed turn for whoever speaks `language` now.
    case say(language: String, text: String)
    /// The latest translated turn, spoken again.
    case replay
    /// The two languages exchanged.
    case swap

    /// The action `name` with its `data` checked; `invalid_field` says what to send instead.
    public init(_ name: WebActionName, data: [String: JSONValue], id: JSONValue?) throws(RequestError) {
        switch name {
        case .pair:
            guard case .string(let code)? = data["code"] else {
                throw RequestError(.invalidField, "data.code must be the 6-digit code `parley web` shows", id: id)
            }
            self = .pair(code: code)
        case .say:
            guard case .string(let language)? = data["language"] else {
                throw RequestError(.invalidField, "data.language must be the language of the words, such as \"es\"", id: id)
            }
            guard case .string(let text)? = data["text"] else {
                throw RequestError(.invalidField, "data.text must be the words to translate", id: id)
            }
            self = .say(language: language, text: text)
        case .replay:
            self = .replay
        case .swap:
            self = .swap
        }
    }
}
