import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Why a client call failed.
public enum ClientError: Error, CustomStringConvertible, Sendable {
    /// No daemon answers at the socket.
    case cannotConnect(path: String, reason: String)
    /// The connection broke or the reply was not a protocol line.
    case protocolFailure(String)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let reason):
            "cannot connect to \(path): \(reason). Is parleyd running? Try `systemctl status parleyd`, or pass --socket / set PARLEY_SOCKET"
        case .protocolFailure(let reason):
            "bad reply from parleyd: \(reason)"
        }
    }
}

/// A blocking client for the control socket: one request, one reply line.
public final class ControlClient {
    private let fd: Int32
    private var pending = Data()

    public init(path: String) throws(ClientError) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .cannotConnect(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            close(fd)
            throw .cannotConnect(path: path, reason: "the path is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .cannotConnect(path: path, reason: reason)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends one request line.
    public func send(_ request: Request) throws(ClientError) {
        let line: Data
        do {
            line = try JSONEncoder().encode(request) + Data([0x0A])
        } catch {
            throw .protocolFailure("cannot encode request: \(error)")
        }
        try writeAll(line)
    }

    /// Sends bytes as they are (for tests of what the daemon does with malformed input).
    public func sendRaw(_ bytes: Data) throws(ClientError) {
        try writeAll(bytes)
    }

    /// Reads the next line the daemon sends; nil when it closed the connection.
    public func readLine() throws(ClientError) -> Data? {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending.removeSubrange(pending.startIndex...newline)
                return Data(line)
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .protocolFailure(String(cString: strerror(errno)))
            }
            if count == 0 {
                if pending.isEmpty { return nil }
                defer { pending.removeAll() }
                return pending
            }
            pending.append(contentsOf: buffer[0..<count])
        }
    }

    /// The socket, for waiting on it with poll(2).
    public var fileDescriptor: Int32 { fd }

    /// Reads once (the caller knows data is waiting) and returns the complete lines; nil when
    /// the daemon closed the connection.
    public func readAvailableLines() throws(ClientError) -> [Data]? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return [] }
            throw .protocolFailure(String(cString: strerror(errno)))
        }
        if count == 0 { return nil }
        pending.append(contentsOf: buffer[0..<count])
        var lines: [Data] = []
        while let newline = pending.firstIndex(of: 0x0A) {
            lines.append(Data(pending[pending.startIndex..<newline]))
            pending.removeSubrange(pending.startIndex...newline)
        }
        return lines
    }

    /// Sends a request and returns the reply line (a result or an error).
    public func call(_ request: Request) throws(ClientError) -> Data {
        try send(request)
        guard let line = try readLine() else {
            throw .protocolFailure("the daemon closed the connection without replying")
        }
        return line
    }

    private func writeAll(_ data: Data) throws(ClientError) {
        var offset = 0
        while offset < data.count {
            let written = data.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                // send with MSG_NOSIGNAL: a daemon that closed the connection is an error, not SIGPIPE.
                return Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .protocolFailure(String(cString: strerror(errno)))
            }
            offset += written
        }
    }
}
