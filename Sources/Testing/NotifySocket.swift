import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Stands in for systemd's notification socket: a Unix datagram socket the test reads.
public final class NotifySocket: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let name: String
    private let fd: Int32

    /// `name` is a path, or "@name" for an abstract socket.
    public init(name: String) throws {
        self.name = name
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "no socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (bytes.first == 0 ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failure(description: "cannot bind \(name): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// The next datagram, or nil after `timeout` seconds.
    public func receive(timeout: TimeInterval) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Messages until one satisfies `done` (included) or `timeout` passes.
    public func messages(timeout: TimeInterval, until done: (String) -> Bool = { _ in false }) -> [String] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var received: [String] = []
        while Date() < deadline, let message = receive(timeout: deadline.timeIntervalSinceNow) {
            received.append(message)
            if done(message) { break }
        }
        return received
    }
}
