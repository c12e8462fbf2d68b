import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// One running null-flush Apertium pipeline: each stage a child process of its own, started
/// with `posix_spawnp`, wired to the next with a pipe, all in one process group.
///
/// Why `posix_spawn` and not Foundation's `Process` or swift-subprocess:
/// - parleyd ignores SIGPIPE, and a child inherits ignored signals. A stage that outlives its
///   reader must die of SIGPIPE, as in a shell, not write on into a broken pipe; the spawn
///   attributes (`POSIX_SPAWN_SETSIGDEF` for every signal, `POSIX_SPAWN_SETSIGMASK` empty)
///   give each stage default dispositions. Foundation's `Process` offers no such control.
/// - The pipeline is restarted when *any* stage dies, so each stage's process id is needed:
///   one `/bin/sh -c` child hides the others, and the shell lives on while a middle stage is
///   dead.
/// - swift-subprocess (1.0) resets signals too, but runs a child for the length of an async
///   closure and awaits its exit. A warm pipeline outlives every call, is read with `poll`
///   and a deadline on the translator's serial executor, and needs its stages wired to each other in one
///   process group; that is a few lines of `posix_spawn`, not a new dependency.
///
/// Not thread-safe, and not `Sendable`: it lives in `ApertiumTranslator`'s actor state.
final class ApertiumPipeline {
    /// The stages' process ids, first to last.
    let processes: [pid_t]
    /// The process group every stage belongs to (the first stage's id).
    let processGroup: pid_t
    private let pair: LanguagePair
    /// Our end of the first stage's standard input, and of the last stage's standard output.
    private let input: Int32
    private let output: Int32
    private var buffer = [UInt8]()
    private var reaped = Set<pid_t>()
    private var stopped = false
    /// Whether it has answered a sentence: before that its stages may still be loading their
    /// data (`ApertiumTranslator.coldStartTimeoutMs`).
    private(set) var hasAnswered = false

    /// Writing to a pipeline whose stage died must be an error here, not the end of the
    /// process; parleyd ignores SIGPIPE for the same reason, and tests get the same.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    init(stages: [[String]], pair: LanguagePair) throws(TranslationError) {
        _ = Self.ignoreBrokenPipes
        self.pair = pair
        guard !stages.isEmpty, stages.allSatisfy({ !$0.isEmpty }) else {
            throw TranslationError("the Apertium \(pair) mode has no commands")
        }
        // pipes[0] feeds the first stage; pipes[i] joins stage i-1 to stage i; pipes[n] is read here.
        // They are made close-on-exec under the launch lock, before any other child can be
        // spawned (Glibc's pipe2 is not visible to Swift).
        var pipes: [(read: Int32, write: Int32)] = []
        var started: [pid_t] = []
        var group: pid_t = 0
        let spawned: Result<Void, TranslationError> = ProcessLauncher.withLock {
            for _ in 0...stages.count {
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else {
                    return .failure(TranslationError("cannot start the Apertium \(pair) pipeline: no pipe (\(String(cString: strerror(errno))))"))
                }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                pipes.append((ends[0], ends[1]))
            }
            for (index, arguments) in stages.enumerated() {
                switch Self.spawn(arguments, stdin: pipes[index].read, stdout: pipes[index + 1].write, group: group) {
                case .success(let pid):
                    started.append(pid)
                    if group == 0 { group = pid }
                case .failure(let error):
                    return .failure(TranslationError("cannot start the Apertium \(pair) pipeline: \(arguments[0]): \(error)"))
                }
            }
            return .success(())
        }
        if pipes.count < stages.count + 1 {
            for pipe in pipes {
                close(pipe.read)
                close(pipe.write)
            }
            pipes = []
            for _ in 0...stages.count { pipes.append((-1, -1)) }
        }
        // Only the two outer ends stay open here; the children hold the rest.
        input = pipes[0].write
        output = pipes[stages.count].read
        for (index, pipe) in pipes.enumerated() {
            if index != 0 { close(pipe.write) }
            if index != stages.count { close(pipe.read) }
        }
        processes = started
        processGroup = group
        if case .failure(let error) = spawned {
            stop()
            throw error
        }
    }

    deinit { stop() }

    private static func spawn(_ arguments: [String], stdin: Int32, stdout: Int32, group: pid_t) -> Result<pid_t, SpawnError> {
        ProcessLauncher.spawn(arguments, stdin: stdin, stdout: stdout, stderrToNull: true, group: group)
    }

    /// The first stage that has exited, if any (it is reaped).
    func exitedStage() -> pid_t? {
        for pid in processes where !reaped.contains(pid) {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) {
                reaped.insert(pid)
                return pid
            }
        }
        return processes.first { reaped.contains($0) }
    }

    /// Sends one deformatted sentence and returns the pipeline's answer, unformatted.
    ///
    /// The answer is read while the sentence is still being written: a long sentence's
    /// translation may fill the pipe back before all of it has gone in.
    func translate(_ text: String, timeoutMs: Int) throws(TranslationError) -> String {
        guard !stopped, exitedStage() == nil else { throw TranslationError("a stage of the Apertium \(pair) pipeline has exited") }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeoutMs, 1)) * 1_000_000
        let bytes = Array(text.utf8) + [0]
        var offset = 0
        while true {
            if offset == bytes.count, let terminator = buffer.firstIndex(of: 0) {
                let sentence = buffer[..<terminator]
                buffer.removeSubrange(...terminator)
                hasAnswered = true
                return String(decoding: sentence, as: UTF8.self)
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                throw TranslationError("the Apertium \(pair) pipeline did not answer within \(timeoutMs) ms")
            }
            var entries = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            if offset < bytes.count { entries.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&entries, nfds_t(entries.count), Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw TranslationError("cannot wait for the Apertium \(pair) pipeline: \(String(cString: strerror(errno)))")
            }
            // A hang-up or an error counts as ready: the read or write that follows reports it.
            if entries[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else { throw TranslationError("the Apertium \(pair) pipeline closed its output") }
                buffer.append(contentsOf: chunk[0..<count])
            }
            if entries.count > 1, entries[1].revents != 0 {
                // At most a pipe's atomic size, so a write never blocks once poll says it may.
                let length = min(bytes.count - offset, Int(PIPE_BUF))
                let written = bytes.withUnsafeBytes { buffer -> Int in
                    guard let start = buffer.baseAddress else { return 0 }
                    return Glibc.write(input, start + offset, length)
                }
                if written < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    throw TranslationError("cannot write to the Apertium \(pair) pipeline: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// Ends every stage and reaps it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        close(input)
        close(output)
        // The group is killed only while one of its members is unreaped, so its id cannot
        // have been reused.
        if processGroup > 0, processes.contains(where: { !reaped.contains($0) }) { kill(-processGroup, SIGKILL) }
        for pid in processes where !reaped.contains(pid) {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped.insert(pid)
        }
    }
}

