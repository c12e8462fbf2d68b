#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One address of one of this machine's network interfaces.
public struct InterfaceAddress: Sendable, Equatable {
    /// The interface's name ("wlan0", "eth0", "lo").
    public var interface: String
    /// The address, numeric ("192.168.1.20", "fe80::1").
    public var address: String
    public var isIPv4: Bool
    /// The interface is up (IFF_UP) and has a link (IFF_RUNNING): a bridge without a cable or
    /// container, such as docker0 when nothing runs, is up but not running.
    public var isRunning: Bool
    public var isLoopback: Bool

    public init(interface: String, address: String, isIPv4: Bool, isRunning: Bool = true, isLoopback: Bool = false) {
        self.interface = interface
        self.address = address
        self.isIPv4 = isIPv4
        self.isRunning = isRunning
        self.isLoopback = isLoopback
    }

    /// This machine's interface addresses (getifaddrs), IPv4 and IPv6; empty if they cannot be read.
    public static func current() -> [InterfaceAddress] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0, let first else { return [] }
        defer { freeifaddrs(first) }
        var found: [InterfaceAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            guard let socketAddress = entry.pointee.ifa_addr else { continue }
            let family = Int32(socketAddress.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            guard getnameinfo(socketAddress, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { continue }
            let flags = Int32(entry.pointee.ifa_flags)
            found.append(
                InterfaceAddress(
                    interface: String(cString: entry.pointee.ifa_name), address: String(decoding: host.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self),
                    isIPv4: family == AF_INET, isRunning: flags & Int32(IFF_UP) != 0 && flags & Int32(IFF_RUNNING) != 0,
                    isLoopback: flags & Int32(IFF_LOOPBACK) != 0))
        }
        return found
    }
}

/// Which addresses to give a phone for the caption page.
public enum PageHosts {
    /// Whether `listen` is the wildcard address (0.0.0.0 or ::, however written): the page is
    /// then served on every address of the machine.
    public static func isWildcard(_ listen: String) -> Bool {
        if let octets = ipv4Octets(listen) { return octets.allSatisfy { $0 == 0 } }
        var address = in6_addr()
        guard inet_pton(AF_INET6, listen, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { $0.allSatisfy { $0 == 0 } }
    }

    /// Whether `listen` is a loopback address (127.0.0.0/8 or ::1): only this machine can open the page.
    public static func isLoopback(_ listen: String) -> Bool {
        if let octets = ipv4Octets(listen) { return octets[0] == 127 }
        var address = in6_addr()
        guard inet_pton(AF_INET6, listen, &address) == 1 else { return false }
        return withUnsafeBytes(of: &address) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
    }

    /// The hosts a phone can open the page at, best first. For a page served on one address,
    /// that address. For a page served on every address (`isWildcard`), this machine's IPv4
    /// addresses on interfaces that are running, loopback left out: a phone on the same network
    /// reaches those, whereas a host name often does not resolve on a phone. Private LAN
    /// addresses (10/8, 172.16/12, 192.168/16) come first, link-local ones (169.254/16) last.
    /// Empty when the machine has no such address.
    public static func hosts(listen: String, interfaces: [InterfaceAddress]) -> [String] {
        guard isWildcard(listen) else { return [listen] }
        var seen = Set<String>()
        let candidates = interfaces.filter { interface in
            guard interface.isIPv4, interface.isRunning, !interface.isLoopback, let octets = ipv4Octets(interface.address) else { return false }
            return octets[0] != 127 && octets[0] != 0 && seen.insert(interface.address).inserted
        }
        // A stable sort: within a rank, the system's order of interfaces.
        return candidates.enumerated()
            .sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }
            .map(\.element.address)
    }

    /// The four numbers of a dotted IPv4 address; nil for anything else.
    static func ipv4Octets(_ text: String) -> [UInt8]? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }
}

extension InterfaceAddress {
    /// 0: a private LAN address; 1: another (a public or carrier address); 2: link-local, which
    /// a phone reaches only on a direct link.
    fileprivate var rank: Int {
        guard let octets = PageHosts.ipv4Octets(address) else { return 1 }
        switch (octets[0], octets[1]) {
        case (10, _), (192, 168): return 0
        case (172, 16...31): return 0
        case (169, 254): return 2
        default: return 1
        }
    }
}
