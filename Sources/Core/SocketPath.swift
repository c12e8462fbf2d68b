#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Where the control socket lives when the config or the command line does not say.
public enum ControlSocketPath {
    /// `$RUNTIME_DIRECTORY/control.sock` under systemd, `$XDG_RUNTIME_DIR/parley/control.sock`
    /// for a user session, `/run/parley/control.sock` for root, else a per-user folder in /tmp.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["RUNTIME_DIRECTORY"], !runtime.isEmpty {
            // systemd may list several directories separated by colons; ours is the first.
            let first = runtime.split(separator: ":").first.map(String.init) ?? runtime
            return first + "/control.sock"
        }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty {
            return xdg + "/parley/control.sock"
        }
        if getuid() == 0 {
            return systemPath
        }
        return "/tmp/parley-\(getuid())/control.sock"
    }

    /// The system service's socket (systemd's RuntimeDirectory=parley).
    public static let systemPath = "/run/parley/control.sock"

    /// Where a client looks: the daemon's default path for this environment, or the system
    /// service's socket when there is none there (a user in group parley talking to the service).
    public static func clientPath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) -> String {
        let own = defaultPath(environment: environment)
        return !exists(own) && exists(systemPath) ? systemPath : own
    }
}
