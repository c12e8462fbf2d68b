import Foundation
import ParleyProtocol

/// What a request gets back.
public enum ControlReply: Sendable {
    /// One reply line (without the newline).
    case line(Data)
    /// A reply line, then the subscription's events until the client goes away.
    case subscribe(Data, Subscription)
}

/// Who is on the other end of a connection (SO_PEERCRED).
public struct Peer: Sendable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}

/// Answers control requests. Implementations never throw: every failure is an error reply.
///
/// Requests arrive decoded and checked (`Request`); lines that are not requests, unknown
/// commands and bad data are answered by the server without reaching the handler.
public protocol ControlHandler: Sendable {
    /// `peer` is nil when the kernel would not say who connected.
    func reply(to request: Request, from peer: Peer?) async -> ControlReply
}

/// Encodes replies the same way everywhere.
public enum Replies {
    public static func result<Payload: Codable & Sendable>(_ payload: Payload, id: JSONValue?) -> Data {
        encode(ResultReply(id: id, data: payload))
    }

    public static func error(_ code: ErrorCode, _ message: String, id: JSONValue?) -> Data {
        encode(ErrorReply(id: id, code: code, message: message))
    }

    /// The error reply to a request that could not be read as sent (with its id, if it had one).
    public static func error(_ error: RequestError) -> Data {
        self.error(error.code, error.message, id: error.id)
    }

    private static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value) { return data }
        return Data(#"{"type":"error","data":{"code":"internal","message":"reply could not be encoded"}}"#.utf8)
    }
}
