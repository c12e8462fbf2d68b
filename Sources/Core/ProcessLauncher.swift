import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Starts child processes one at a time.
///
/// On Linux, Foundation's `Process` learns that a child exited when a socket shared only with
/// that child reaches end of file. While one `run()` is between creating that socket and
/// spawning, another `run()` on another thread can spawn a child that inherits it; the first
/// child's exit then goes unnoticed (`isRunning` stays true, `waitUntilExit` never returns)
/// for as long as the second child lives. Every launch in Parley, and in its tests, goes
/// through this lock.
public enum ProcessLauncher {
    /// The standard library's mutex rather than Foundation's NSLock: NSLock would link
    /// Foundation's class hierarchy, and with it ICU (about 40 MB), into the `parley` CLI, which
    /// links ParleyCore.
    private static let lock = Mutex<Void>(())

    public static func run(_ process: Process) throws {
        try withLock { try process.run() }
    }

    /// Runs `body`, which spawns children some other way (`posix_spawn`), under the same lock.
    public static func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try lock.withLock { _ throws(E) in try body() }
    }

    /// Spawns `arguments` (the first is the program, looked up in PATH) with `stdin` and
    /// `stdout` as its standard input and output, and every signal at its default and none
    /// blocked, as from a shell: parleyd ignores SIGPIPE and its threads block signals, and a
    /// child inherits both. `stderrToNull` sends its standard error to /dev/null, else it is
    /// parleyd's. `group`: the process group to join (0: a new one it leads); nil stays in
    /// parleyd's. The
    /// caller holds the launch lock (`withLock`) while it makes the pipes and spawns. Returns
    /// the process id, or errno's text.
    public static func spawn(
        _ arguments: [String], stdin: Int32, stdout: Int32, stderrToNull: Bool, group: pid_t? = nil
    ) -> Result<pid_t, SpawnError> {
        guard let program = arguments.first else { return .failure(SpawnError(code: EINVAL)) }
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        if stderrToNull { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        // Every other descriptor is closed in the child. Parleyd opens its own close-on-exec,
        // but Foundation's `Pipe` does not: a worker spawned while Apertium read a `Process`'s
        // output held that pipe open, so the read never saw its end and the translator hung.
        closeFrom(&actions, 3)
        var defaults = sigset_t()
        sigfillset(&defaults)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if let group {
            posix_spawnattr_setpgroup(&attributes, group)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let status = posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        guard status == 0 else { return .failure(SpawnError(code: status)) }
        return .success(pid)
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; its header does not
/// show it to Swift), found at run time; where the C library has none, nothing is added.
private let closeFrom: @Sendable (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Void = {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        return { _, _ in }
    }
    let function = unsafeBitCast(symbol, to: AddCloseFrom.self)
    return { actions, first in _ = function(actions, first) }
}()

/// Why a child could not be spawned: errno's text.
public struct SpawnError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public init(code: Int32) { self.code = code }
    public var description: String { String(cString: strerror(code)) }
}
