import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reading a config file safely: only a regular file of sane size, and only once it has stopped
/// changing, so that a reload never applies half of a file an editor is still writing.
public enum ConfigFile {
    /// The largest config file read. A config is a few KB; more is the wrong file.
    public static let maxBytes = 1 << 20

    /// The pause between the two reads of a file.
    public static let settle = Duration.milliseconds(50)

    /// Reads the text at `path`. Throws one line that says what is wrong and what to do when it
    /// is not a readable regular file, is too big, is not UTF-8, or keeps changing while read.
    ///
    /// The file is read twice, `settle` apart; it is taken only if both reads and the file's
    /// size, times and inode before and after agree. A file still changing after `patience` is
    /// refused.
    public static func read(
        _ path: String, settle: Duration = ConfigFile.settle, patience: Duration = .seconds(2)
    ) throws(ConfigError) -> String {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while true {
            let before = try status(path)
            let first = try contents(path, size: before.size)
            if try status(path) == before {
                // Read again a moment later, and take it only if nothing moved. (One read is
                // not enough: while `open(O_TRUNC)` runs, `stat` can show the new size, 0,
                // with the old times, so a file being rewritten looks old and empty.)
                pause(settle)
                let second = try contents(path, size: before.size)
                if try status(path) == before, second == first { return try text(first, path) }
            }
            guard clock.now < deadline else {
                throw ConfigError(
                    "\(path) changed while it was being read (is an editor still writing it?); nothing was changed: save it, then reload again")
            }
            pause(settle)
        }
    }

    /// What is compared before and after a read.
    struct Status: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var modified: timespec
        var changed: timespec

        static func == (a: Status, b: Status) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// The file's status, or the one-line reason it cannot be a config file.
    static func status(_ path: String) throws(ConfigError) -> Status {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = errno
            switch reason {
            case ENOENT, ENOTDIR:
                throw ConfigError("config file \(path) does not exist; pass an existing file with --config")
            case EACCES:
                throw ConfigError("config file \(path) cannot be read (permission denied); let parleyd's user read it, e.g. chmod 640 and its group")
            default:
                throw ConfigError("config file \(path) cannot be read (\(String(cString: strerror(reason)))); pass a readable file with --config")
            }
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFDIR:
            throw ConfigError("config file \(path) is a folder; pass the file inside it with --config, e.g. \((path as NSString).appendingPathComponent("parley.toml"))")
        default:
            let kind = [S_IFIFO: "a FIFO", S_IFCHR: "a device", S_IFBLK: "a device", S_IFSOCK: "a socket"][info.st_mode & S_IFMT] ?? "not a regular file"
            throw ConfigError("config file \(path) is \(kind), not a regular file; pass a TOML file with --config")
        }
        guard info.st_size <= maxBytes else {
            throw ConfigError(
                "config file \(path) is \(info.st_size / 1024) KB; a config is a few KB (at most \(maxBytes / 1024) KB), so check that --config names the right file")
        }
        return Status(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int(info.st_size), modified: info.st_mtim, changed: info.st_ctim)
    }

    /// The bytes of `path` (at most `maxBytes`, plus one to notice growth).
    static func contents(_ path: String, size: Int) throws(ConfigError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason = errno
            if reason == EACCES {
                throw ConfigError("config file \(path) cannot be read (permission denied); let parleyd's user read it, e.g. chmod 640 and its group")
            }
            throw ConfigError("config file \(path) cannot be opened (\(String(cString: strerror(reason)))); pass a readable file with --config")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= maxBytes {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ConfigError("config file \(path) cannot be read (\(String(cString: strerror(errno)))); pass a readable file with --config")
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return bytes
    }

    private static func text(_ bytes: [UInt8], _ path: String) throws(ConfigError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigError("config file \(path) is not UTF-8 text; save it as UTF-8")
        }
        return text
    }

    private static func pause(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
