import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Sockets handed over by systemd socket activation (sd_listen_fds(3)): `$LISTEN_PID` is this
/// process, `$LISTEN_FDS` counts descriptors from 3 up, `$LISTEN_FDNAMES` names them.
public enum SocketActivation {
    /// The first descriptor systemd passes.
    public static let firstDescriptor: Int32 = 3

    /// The descriptors passed to this process, by name (unnamed ones are "unknown", as systemd
    /// says). Empty when the process was not socket-activated. The variables are removed from
    /// the environment and the descriptors marked close-on-exec, so child processes neither see
    /// nor inherit them.
    public static func listenDescriptors(
        environment: [String: String] = ProcessInfo.processInfo.environment, unsetEnvironment: Bool = true
    ) -> [(name: String, descriptor: Int32)] {
        defer {
            if unsetEnvironment {
                unsetenv("LISTEN_PID")
                unsetenv("LISTEN_FDS")
                unsetenv("LISTEN_FDNAMES")
            }
        }
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap(Int32.init), count > 0, count < 1024
        else { return [] }
        let names = environment["LISTEN_FDNAMES"].map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        return (0..<count).map { index in
            let descriptor = firstDescriptor + index
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
            let name = Int(index) < names.count && !names[Int(index)].isEmpty ? names[Int(index)] : "unknown"
            return (name, descriptor)
        }
    }

    /// The passed descriptor that is a listening Unix stream socket: the control socket.
    public static func controlSocket(environment: [String: String] = ProcessInfo.processInfo.environment) -> Int32? {
        listenDescriptors(environment: environment).first { isListeningUnixStream($0.descriptor) }?.descriptor
    }

    /// Whether `descriptor` is a Unix-domain stream socket that listens.
    public static func isListeningUnixStream(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var listening: Int32 = 0
        var domain = sockaddr_storage()
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &size) == 0, type == Int32(SOCK_STREAM.rawValue) else { return false }
        size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening != 0 else { return false }
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &domain) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return named == 0 && Int32(domain.ss_family) == AF_UNIX
    }
}
