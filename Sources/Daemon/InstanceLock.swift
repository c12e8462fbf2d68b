import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One parleyd per control socket and per history: an exclusive `flock` on a lock file beside
/// each, held until the process exits (the kernel drops it even after `kill -9`), with the
/// holder's pid inside so a second parleyd can say which instance is running.
final class InstanceLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Takes the lock of `resource` (a path: the lock is `resource.lock`). Throws when another
    /// process holds it; returns nil, after a notice, when no lock file can be made there (a
    /// read-only folder), since refusing to start would be worse than running unguarded.
    /// A missing folder is made with `folderMode`, the mode its owner would give it (the
    /// socket's folder 0750, the history's 0700).
    static func acquire(for resource: String, what: String, folderMode: Int, logger: (String) -> Void) throws(DaemonFailure) -> InstanceLock? {
        let path = resource + ".lock"
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: folderMode])
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            logger("cannot make the lock file \(path) (\(String(cString: strerror(errno)))); a second parleyd on this \(what) would not be stopped")
            return nil
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(descriptor)
            let who = Int32(holder).map { "parleyd (pid \($0))" } ?? "another parleyd"
            throw DaemonFailure(
                .alreadyRunning,
                "\(who) is already running with the \(what) \(resource); talk to it with `parley`, or stop it first (systemctl stop parleyd, or kill \(Int32(holder).map(String.init) ?? "it"))")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pid.withCString { write(descriptor, $0, strlen($0)) }
        return InstanceLock(descriptor: descriptor)
    }
}
