import Foundation
internal import HTTPTypes
internal import Hummingbird
internal import HummingbirdWebSocket
import Logging
internal import NIOCore
internal import NIOWebSocket
import ParleyControl
import ParleyCore
import ParleyProtocol
import ServiceLifecycle
import Synchronization

/// How the caption page is served.
public struct WebSettings: Sendable {
    /// The address to listen on (`[web] listen`).
    public var listen: String
    /// 0 lets the system choose (`[web] port`).
    public var port: Int
    /// The code a page must give to act; nil: the page only reads (`[web] pairing = "read-only"`).
    public var code: String?
    /// Pages connected at once; the next one is told `too_many_clients` and closed.
    public var maxConnections: Int
    /// The longest message a page may send; a longer one is refused and its connection closed.
    public var maxMessageBytes: Int
    /// Turns sent to a page when it connects.
    public var recentTurns: Int

    public init(listen: String, port: Int, code: String?, maxConnections: Int = 16, maxMessageBytes: Int = 4096, recentTurns: Int = 10) {
        self.listen = listen
        self.port = port
        self.code = code
        self.maxConnections = maxConnections
        self.maxMessageBytes = maxMessageBytes
        self.recentTurns = recentTurns
    }

    /// A random 6-digit pairing code, from the system's secure generator.
    public static func randomCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }
}

/// The caption page: one static page and a WebSocket that follows the daemon's events.
///
/// Reading needs only the address. Acting (a typed reply, a replay, a swap) needs the pairing
/// code, given in the page's address (`?code=`) or in a `pair` message; no other command is
/// reachable. Every action goes to the same `ControlHandler` as the control socket's requests.
/// Nothing a page sends is logged with its text.
public final class WebServer: Service, Sendable {
    public let settings: WebSettings
    private let handler: any ControlHandler
    private let events: EventBus
    private let logger: Logger
    private let onListening: @Sendable (Int) -> Void
    private let boundPort = Atomic<Int>(-1)
    private let connected = Atomic<Int>(0)
    /// After a wrong code, the next try (from any page) waits a second, so the code cannot be
    /// guessed quickly whatever the number of connections.
    private let pairingTries: RateLimit
    /// Wrong codes one connection may give before it is closed.
    public static let maxWrongCodes = 5

    public init(
        settings: WebSettings, handler: any ControlHandler, events: EventBus, logger: Logger, clock: ParleyClock = .continuous,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.settings = settings
        self.pairingTries = RateLimit(once: .seconds(1), clock: clock)
        self.handler = handler
        self.events = events
        self.logger = logger
        self.onListening = onListening
    }

    /// The port listened on; nil until the server listens.
    public var port: Int? {
        let port = boundPort.load(ordering: .relaxed)
        return port < 0 ? nil : port
    }

    /// What `parley web` shows.
    public func info(enabled: Bool = true) -> WebInfo {
        WebInfo(
            enabled: enabled, listen: settings.listen, port: port, pairing: settings.code == nil ? "read-only" : "code",
            code: settings.code, maxConnections: settings.maxConnections, maxMessageBytes: settings.maxMessageBytes)
    }

    /// Serves until graceful shutdown or cancellation; open pages are closed normally, and
    /// reconnect by themselves to the next daemon.
    public func run() async throws {
        let router = Router()
        router.get("/") { _, _ in Self.asset(WebPage.html, type: "text/html; charset=utf-8") }
        router.get("/app.js") { _, _ in Self.asset(WebPage.script, type: "text/javascript; charset=utf-8") }
        router.get("/app.css") { _, _ in Self.asset(WebPage.style, type: "text/css; charset=utf-8") }
        var serverLogger = logger
        // Hummingbird's own request logs would name the page's address, code included.
        serverLogger.logLevel = max(logger.logLevel, .warning)
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(
                // Frames larger than twice the message limit are refused by the decoder; the
                // limit itself is checked per message, with a clear error.
                configuration: .init(ws: .init(maxFrameSize: max(2 * settings.maxMessageBytes, 1 << 14)))
            ) { [self] head, channel, _ in
                guard Self.path(of: head) == "/ws", Self.sameOrigin(head) else { return .dontUpgrade }
                let code = Self.query(of: head)["code"]
                let peer = channel.remoteAddress?.ipAddress ?? "unknown"
                return .upgrade([:]) { inbound, outbound, _ in
                    await self.serve(inbound: inbound, outbound: outbound, code: code, peer: peer)
                }
            },
            configuration: .init(address: .hostname(settings.listen, port: settings.port), serverName: nil),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? settings.port
                boundPort.store(port, ordering: .relaxed)
                logger.notice("caption page listening", metadata: ["address": "\(settings.listen)", "port": "\(port)"])
                onListening(port)
            },
            logger: serverLogger)
        try await app.run()
    }

    // MARK: - One page

    private func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, code: String?, peer: String) async {
        let count = connected.add(1, ordering: .relaxed).newValue
        defer { connected.subtract(1, ordering: .relaxed) }
        guard count <= settings.maxConnections else {
            try? await send(
                Replies.error(.tooManyClients, "\(settings.maxConnections) pages are open already; close one, then reload this page", id: nil),
                to: outbound)
            try? await outbound.close(.policyViolation, reason: "too many pages")
            return
        }
        logger.info("caption page connected", metadata: ["peer": "\(peer)"])
        defer { logger.info("caption page closed", metadata: ["peer": "\(peer)"]) }
        var connection = Connection()
        var pairingProblem: Data?
        if let code {
            pairingProblem = pair(code, &connection, id: nil)
        }
        // Subscribed before the hello is made: no event falls between the two.
        let subscription = events.subscribe()
        defer { subscription.cancel() }
        do {
            try await send(await hello(paired: connection.paired), to: outbound)
            if let pairingProblem { try await send(pairingProblem, to: outbound) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    while let line = await subscription.next() {
                        try await self.send(line, to: outbound)
                    }
                }
                defer { group.cancelAll() }
                for try await message in inbound.messages(maxSize: settings.maxMessageBytes) {
                    let bytes: Data
                    switch message {
                    case .text(let text): bytes = Data(text.utf8)
                    case .binary(let buffer): bytes = Data(buffer.readableBytesView)
                    }
                    guard bytes.count <= settings.maxMessageBytes else {
                        try await send(
                            Replies.error(
                                .messageTooLarge,
                                "a message may be \(settings.maxMessageBytes) bytes at most, not \(bytes.count); this connection is closed",
                                id: nil),
                            to: outbound)
                        try await outbound.close(.messageTooLarge, reason: "message too large")
                        return
                    }
                    let answer = await respond(to: bytes, &connection, peer: peer)
                    try await send(answer, to: outbound)
                    if connection.wrongCodes >= Self.maxWrongCodes {
                        try await outbound.close(.policyViolation, reason: "too many wrong codes")
                        return
                    }
                }
            }
        } catch {
            // The page went away while something was sent to it.
        }
    }

    private struct Connection {
        var paired = false
        var wrongCodes = 0
    }

    /// The answer to one message from a page.
    private func respond(to bytes: Data, _ connection: inout Connection, peer: String) async -> Data {
        guard let request = try? JSONDecoder().decode(RawRequest.self, from: bytes) else {
            return Replies.error(.badRequest, #"send JSON: {"type": "say", "id": 1, "data": {"language": "es", "text": "..."}}"#, id: nil)
        }
        let id = request.id
        guard let name = WebActionName(rawValue: request.type) else {
            return Replies.error(.unknownCommand, "the page can send \(WebActionName.known); nothing else", id: id)
        }
        if name.needsPairing {
            guard settings.code != nil else {
                return Replies.error(.unavailable, "this page only reads: [web] pairing is \"read-only\"", id: id)
            }
            guard connection.paired else {
                return Replies.error(.pairingRequired, "type the pairing code that `parley web` shows first", id: id)
            }
            // The command only: what a page says is never logged.
            logger.notice("web command", metadata: ["command": "\(name.rawValue)", "peer": "\(peer)"])
        }
        let action: WebAction
        do {
            action = try WebAction(name, data: request.data ?? [:], id: id)
        } catch {
            return Replies.error(error)
        }
        switch action {
        case .pair(let code):
            return pair(code, &connection, id: id) ?? Replies.result(PairResult(paired: true), id: id)
        case .say(let language, let text):
            guard let status = await call(.status, as: StatusInfo.self) else {
                return Replies.error(.unavailable, "the daemon did not answer; try again", id: id)
            }
            let speaker: Speaker? = status.a.language == language ? .a : status.b.language == language ? .b : nil
            guard let speaker else {
                return Replies.error(
                    .invalidField, "nobody speaks \"\(language)\" now: the languages are \(status.a.language) and \(status.b.language)",
                    id: id)
            }
            guard let say = SayRequest(speaker: speaker, text: text) else {
                return Replies.error(.invalidField, SayRequest.problem(with: text)?.message ?? SayRequest.emptyText, id: id)
            }
            return await line(ControlRequest(.say(say), id: id))
        case .replay:
            let recent = await call(.history(HistoryQuery(limit: 20)), as: [TurnInfo].self) ?? []
            guard let last = recent.first(where: { $0.translatedText != nil }) else {
                return Replies.error(.notFound, "no translation to replay yet", id: id)
            }
            return await line(ControlRequest(.replay(TurnReference(id: last.id)), id: id))
        case .swap:
            return await line(ControlRequest(.swap, id: id))
        }
    }

    /// Checks a pairing code; nil when it is right (the connection is then paired).
    private func pair(_ code: String, _ connection: inout Connection, id: JSONValue?) -> Data? {
        guard let expected = settings.code else {
            return Replies.error(.unavailable, "this page only reads: [web] pairing is \"read-only\"", id: id)
        }
        if !pairingTries.allows {
            connection.wrongCodes += 1
            return Replies.error(.wrongCode, "a wrong code was given a moment ago; wait a second and type the code again", id: id)
        }
        guard Self.constantTimeEqual(code, expected) else {
            pairingTries.record()
            connection.wrongCodes += 1
            logger.notice("wrong pairing code from a caption page")
            return Replies.error(.wrongCode, "wrong pairing code; `parley web` on the device shows the right one", id: id)
        }
        connection.paired = true
        return nil
    }

    private func hello(paired: Bool) async -> Data {
        guard let status = await call(.status, as: StatusInfo.self) else {
            return Replies.error(.unavailable, "the daemon did not answer", id: nil)
        }
        let turns = await call(.history(HistoryQuery(limit: settings.recentTurns)), as: [TurnInfo].self) ?? []
        let minimum = await call(.config, as: EffectiveConfig.self)?.settings.minConfidence ?? 0.5
        let hello = WebHello(
            status: status, turns: turns, minConfidence: minimum, paired: paired,
            pairing: settings.code == nil ? "read-only" : "code", maxMessageBytes: settings.maxMessageBytes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(EventMessage(type: "hello", data: hello))) ?? Replies.error(.internalError, "hello not encoded", id: nil)
    }

    /// The reply line of a request to the daemon.
    private func line(_ request: ControlRequest) async -> Data {
        switch await handler.reply(to: request, from: nil) {
        case .line(let data): return data
        case .subscribe(let data, let subscription):
            subscription.cancel()
            return data
        }
    }

    /// A request's result, decoded; nil on an error reply.
    private func call<Payload: Codable & Sendable>(_ command: Command, as _: Payload.Type) async -> Payload? {
        let reply = await line(ControlRequest(command))
        return try? JSONDecoder().decode(ResultReply<Payload>.self, from: reply).data
    }

    private func send(_ line: Data, to outbound: WebSocketOutboundWriter) async throws {
        // One frame per message: frames of two writers never interleave.
        try await outbound.write(.text(String(decoding: line, as: UTF8.self)))
    }

    // MARK: - HTTP

    private static func asset(_ body: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-store"
        // The page's address may hold the pairing code: it is never sent elsewhere.
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("Content-Security-Policy")!] =
            "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func path(of head: HTTPRequest) -> String {
        String((head.path ?? "/").split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "/")
    }

    static func query(of head: HTTPRequest) -> [String: String] {
        let parts = (head.path ?? "").split(separator: "?", maxSplits: 1)
        guard parts.count == 2 else { return [:] }
        var query: [String: String] = [:]
        for pair in parts[1].split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let value = String(kv[1]).removingPercentEncoding else { continue }
            query[String(kv[0])] = value
        }
        return query
    }

    /// A browser always sends Origin on a WebSocket: a page of another site (which could read
    /// the captions through the phone's browser) is refused. Clients that are not browsers may
    /// send none, or one without the port.
    static func sameOrigin(_ head: HTTPRequest) -> Bool {
        let origins = head.headerFields[values: .origin]
        guard !origins.isEmpty else { return true }
        guard let authority = head.authority, let own = URL(string: "http://\(authority)"), let ownHost = own.host else { return false }
        return origins.allSatisfy { origin in
            guard let url = URL(string: origin), let host = url.host, ["http", "https", "ws", "wss"].contains(url.scheme ?? "") else { return false }
            return host == ownHost && (url.port == nil || url.port == own.port)
        }
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// `pair`'s result.
struct PairResult: Codable, Sendable {
    var paired: Bool
}

/// A request to the daemon (Hummingbird has a `Request` of its own).
typealias ControlRequest = ParleyProtocol.Request
