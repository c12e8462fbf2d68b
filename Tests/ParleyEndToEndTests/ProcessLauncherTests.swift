import Foundation
import ParleyCore
import ParleyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("ProcessLauncher: what a spawned child inherits", .startsProcesses)
struct ProcessLauncherTests {
    /// A descriptor not marked close-on-exec (as Foundation's `Pipe` makes them) stays out of a
    /// worker: a Bergamot worker that inherited the end of Apertium's `Process` pipe kept it
    /// open, and Apertium waited for an end of file that never came.
    @Test func aChildGetsOnlyItsStandardDescriptors() throws {
        var stray: [Int32] = [-1, -1]
        try #require(pipe(&stray) == 0)
        defer { for end in stray { close(end) } }
        var output: [Int32] = [-1, -1]
        try #require(pipe(&output) == 0)
        defer { close(output[0]) }
        let script = "for fd in \(stray[0]) \(stray[1]); do [ -e /proc/$$/fd/$fd ] && echo \"open $fd\"; done; echo done"
        let nothing = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(nothing >= 0)
        defer { close(nothing) }
        let spawned = ProcessLauncher.withLock {
            ProcessLauncher.spawn(["/bin/sh", "-c", script], stdin: nothing, stdout: output[1], stderrToNull: true)
        }
        close(output[1])
        let pid = try spawned.get()
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = read(output[0], &buffer, buffer.count)
            if count <= 0 { break }
            text += buffer[0..<count]
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(String(decoding: text, as: UTF8.self) == "done\n")
    }
}
