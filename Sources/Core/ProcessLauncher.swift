import Foundation

/// Starts child processes one at a time.
///
/// On Linux, Foundation's `Process` learns that a child exited when a socket shared only with
/// that child reaches end of file. While one `run()` is between creating that socket and
/// spawning, another `run()` on another thread can spawn a child that inherits it; the first
/// child's exit then goes unnoticed (`isRunning` stays true, `waitUntilExit` never returns)
/// for as long as the second child lives. Every launch in Parley, and in its tests, goes
/// through this lock.
public enum ProcessLauncher {
    private static let lock = NSLock()

    public static func run(_ process: Process) throws {
        lock.lock()
        defer { lock.unlock() }
        try process.run()
    }

    /// Runs `body`, which spawns children some other way (`posix_spawn`), under the same lock.
    public static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
