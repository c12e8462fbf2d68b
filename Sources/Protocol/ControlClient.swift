import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Why a client call failed.
public enum ClientError: Error, CustomStringConvertible, Sendable {
    /// No daemon answers at the socket.
    case cannotConnect(path: String, reason: String)
    /// The connection broke or the reply was not a protocol line.
    case protocolFailure(String)
    /// No reply within the client's timeout.
    case timedOut(path: String, after: Duration)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let reason):
            "cannot connect to \(path) (\(reason.lowercasingFirstLetter)); is parleyd running (`systemctl status parleyd`)? Or give its socket: --socket or PARLEY_SOCKET"
        case .protocolFailure(let reason):
            "the connection to parleyd failed (\(reason.lowercasingFirstLetter)); check that it still runs (`parley status`) and see its log"
        case .timedOut(let path, let after):
            "parleyd at \(path) did not answer within \(after.wholeSeconds) s; check `parley status` and the daemon's log (`journalctl -u parleyd`), or wait longer with --timeout SECONDS (0: no limit)"
        }
    }
}

/// A blocking client for the control socket: one request, one reply line.
public final class ControlClient {
    private let fd: Int32
    private let path: String
    private var pending = Data()
    /// How long connecting, sending and `call` may take; nil: no limit. `readLine` (events
    /// after `subscribe`) always waits as long as it takes.
    public let timeout: Duration?

    public init(path: String, timeout: Duration? = nil) throws(ClientError) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw .cannotConnect(path: path, reason: String(cString: strerror(errno))) }
        self.path = path
        self.timeout = timeout
        if let timeout, timeout > .zero {
            // Bounds connect (a daemon whose queue is full) and writes (one that stopped reading).
            let components = timeout.components
            var limit = timeval(tv_sec: Int(components.seconds), tv_usec: Int(components.attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
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
            let code = errno
            close(fd)
            if code == EAGAIN || code == EWOULDBLOCK || code == EINPROGRESS {
                throw .cannotConnect(path: path, reason: "parleyd is not taking connections (its queue is full)")
            }
            throw .cannotConnect(path: path, reason: String(cString: strerror(code)))
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends one request line.
    public func send(_ request: Request) throws(ClientError) {
        try sendLine(request)
    }

    /// Sends a request as it is, command and data unchecked (for tests of the daemon's answers).
    public func send(_ request: RawRequest) throws(ClientError) {
        try sendLine(request)
    }

    private func sendLine(_ request: some Encodable) throws(ClientError) {
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

    /// Reads the next line the daemon sends; nil when it closed the connection. With `within`,
    /// gives up with `timedOut` once that has passed; without, waits as long as it takes.
    public func readLine(within limit: Duration? = nil) throws(ClientError) -> Data? {
        try readLine(until: limit.map { ContinuousClock.now + $0 }, limit: limit)
    }

    /// Reads the next line, giving up with `timedOut` at `deadline` (`limit` after the start;
    /// the client's timeout when not given).
    private func readLine(until deadline: ContinuousClock.Instant?, limit: Duration? = nil) throws(ClientError) -> Data? {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                let line = pending[pending.startIndex..<newline]
                pending.removeSubrange(pending.startIndex...newline)
                return Data(line)
            }
            if let deadline, let waited = limit ?? timeout {
                let left = deadline - .now
                guard left > .zero else { throw .timedOut(path: path, after: waited) }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
                let ready = poll(&poller, 1, Int32(clamping: milliseconds))
                if ready < 0 && errno != EINTR { throw .protocolFailure(String(cString: strerror(errno))) }
                if ready <= 0 { continue }
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

    /// Sends a request and returns the reply line (a result or an error), within `timeout`.
    public func call(_ request: Request) throws(ClientError) -> Data {
        let deadline = timeout.flatMap { $0 > .zero ? ContinuousClock.now + $0 : nil }
        try send(request)
        return try reply(until: deadline)
    }

    /// Sends a request as it is, command and data unchecked, and returns the reply line.
    public func call(_ request: RawRequest) throws(ClientError) -> Data {
        let deadline = timeout.flatMap { $0 > .zero ? ContinuousClock.now + $0 : nil }
        try send(request)
        return try reply(until: deadline)
    }

    private func reply(until deadline: ContinuousClock.Instant?) throws(ClientError) -> Data {
        guard let line = try readLine(until: deadline) else {
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
                if errno == EAGAIN || errno == EWOULDBLOCK, let timeout { throw .timedOut(path: path, after: timeout) }
                throw .protocolFailure(String(cString: strerror(errno)))
            }
            offset += written
        }
    }
}

extension String {
    /// "No such file or directory" as it reads inside a sentence: "no such file or directory".
    /// A word in capitals ("EOF", "PT") is kept as it is.
    var lowercasingFirstLetter: String {
        guard let first, first.isUppercase, dropFirst().first?.isUppercase != true else { return self }
        return first.lowercased() + dropFirst()
    }
}

extension Duration {
    /// Whole seconds, rounded up, for messages.
    var wholeSeconds: Int64 {
        components.seconds + (components.attoseconds > 0 ? 1 : 0)
    }
}
