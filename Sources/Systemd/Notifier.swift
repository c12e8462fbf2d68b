import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd how the service is doing (sd_notify(3)), natively: one datagram per message
/// to the Unix socket named by `$NOTIFY_SOCKET`. No libsystemd.
///
/// Without `$NOTIFY_SOCKET` (not started by systemd as `Type=notify`) every call does nothing.
public final class SystemdNotifier: Sendable {
    /// The socket address, with a leading NUL for an abstract socket ("@name" in the variable).
    private let address: [UInt8]?
    private let socket: Int32
    /// How often systemd expects `WATCHDOG=1` (`WatchdogSec=`); nil when it does not.
    public let watchdogInterval: Duration?
    private let lastPing = Mutex<ContinuousClock.Instant?>(nil)
    /// Whether start-up's READY=1 has gone out; a reload before it must not claim readiness.
    private let readySent = Mutex(false)

    /// Reads `$NOTIFY_SOCKET` and `$WATCHDOG_USEC` from `environment`. When `unsetEnvironment` is
    /// set they are removed from the process's environment, so child processes (the Apertium
    /// pipelines) cannot speak for the daemon.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, unsetEnvironment: Bool = true) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        var interval: Duration?
        if let usec = environment["WATCHDOG_USEC"].flatMap(UInt64.init), usec > 0 {
            // WATCHDOG_PID, when set, names the process that must ping: only if it is us.
            let forUs = environment["WATCHDOG_PID"].flatMap(Int32.init).map { $0 == getpid() } ?? true
            if forUs { interval = .microseconds(Int64(clamping: usec)) }
        }
        watchdogInterval = path == nil ? nil : interval
        if unsetEnvironment {
            unsetenv("NOTIFY_SOCKET")
            unsetenv("WATCHDOG_USEC")
            unsetenv("WATCHDOG_PID")
        }
        guard let path, path.hasPrefix("/") || path.hasPrefix("@") else {
            address = nil
            socket = -1
            return
        }
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        address = bytes
        socket = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    deinit {
        if socket >= 0 { close(socket) }
    }

    /// Whether systemd is listening.
    public var isEnabled: Bool { address != nil && socket >= 0 }

    /// Sends one notification, e.g. "READY=1\nSTATUS=listening". Returns whether it was sent.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard let address, socket >= 0 else { return false }
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard address.count < capacity else { return false }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: address)
        }
        // An abstract address is exactly its bytes; a path is NUL-terminated.
        let length = MemoryLayout<sa_family_t>.size + address.count + (address.first == 0 ? 0 : 1)
        let payload = Array(message.utf8)
        let sent = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                payload.withUnsafeBytes { bytes in
                    sendto(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), address, socklen_t(length))
                }
            }
        }
        return sent == payload.count
    }

    /// READY=1 with a status line: start-up is over.
    public func ready(status: String) {
        readySent.withLock { $0 = true }
        notify("READY=1\nSTATUS=\(Self.oneLine(status))\nMAINPID=\(getpid())")
    }

    /// STATUS=: what the service is doing, shown by `systemctl status`.
    public func status(_ status: String) {
        notify("STATUS=\(Self.oneLine(status))")
    }

    /// STOPPING=1: shutdown has begun.
    public func stopping(status: String = "stopping") {
        notify("STOPPING=1\nSTATUS=\(Self.oneLine(status))")
    }

    /// RELOADING=1 as a configuration reload begins (once the service is ready).
    public func reloading() {
        if readySent.withLock({ $0 }) { notify("RELOADING=1") }
    }

    /// READY=1 as a reload ends (only if start-up had already said so).
    public func reloaded() {
        if readySent.withLock({ $0 }) { notify("READY=1") }
    }

    /// WATCHDOG=1, at most twice per watchdog interval however often it is called: the capture
    /// loop calls it every period.
    public func watchdog(now: ContinuousClock.Instant = .now) {
        guard let interval = watchdogInterval else { return }
        let due = lastPing.withLock { last -> Bool in
            if let last, now - last < interval / 2 { return false }
            last = now
            return true
        }
        if due { notify("WATCHDOG=1") }
    }

    private static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ")
    }
}
