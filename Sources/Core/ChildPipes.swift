#if canImport(Glibc)
    import Glibc
#endif

/// Why an exchange with a child process failed.
public enum ChildFailure: Error, CustomStringConvertible, Sendable, Equatable {
    /// It did not answer within the limit (hung, or stopped).
    case timedOut(Int)
    /// It closed its output or its input: it exited, or was killed. `how` says how, when known.
    case exited(how: String?)
    /// Something else went wrong (the pipes, a malformed answer, it could not start).
    case broken(String)

    public var description: String {
        switch self {
        case .timedOut(let milliseconds): "it did not answer within \(milliseconds) ms"
        case .exited(let how): "it exited" + (how.map { " (\($0))" } ?? "")
        case .broken(let problem): problem
        }
    }
}

/// A warm child process (a translation worker, Festival) spoken to over two pipes: its standard
/// input and output, read with `poll` and a deadline, so a hung child costs one exchange's limit
/// and never a thread. A request is written while the answer is read, so neither side can fill
/// a pipe and wait. Spawned through `ProcessLauncher` (every signal at its default, no other
/// descriptor inherited). Not thread-safe: its owner (an actor, a worker thread) is the one user.
public final class ChildPipes {
    /// The child's process id.
    public let pid: pid_t
    /// Our end of its standard output, and of its standard input.
    private let input: Int32
    private let output: Int32
    /// What it said that no answer has taken yet.
    private var buffer: [UInt8] = []
    private var stopped = false
    private var reaped = false

    /// Writing to a child that died must be an error here, not the end of parleyd.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
    }

    deinit { stop() }

    /// Starts `arguments` (the first is the program, looked up in PATH); its standard error is
    /// parleyd's, or /dev/null with `stderrToNull`.
    public static func spawn(_ arguments: [String], stderrToNull: Bool) throws(ChildFailure) -> ChildPipes {
        _ = ignoreBrokenPipes
        guard let program = arguments.first else { throw .broken("no program given") }
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        let result: Result<pid_t, ChildFailure> = ProcessLauncher.withLock {
            guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
                return .failure(.broken("cannot start \(program): no pipe (\(String(cString: strerror(errno))))"))
            }
            for end in toChild + fromChild { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return ProcessLauncher.spawn(arguments, stdin: toChild[0], stdout: fromChild[1], stderrToNull: stderrToNull)
                .mapError { .broken("cannot start \(program): \($0)") }
        }
        if toChild[0] >= 0 { close(toChild[0]) }
        if fromChild[1] >= 0 { close(fromChild[1]) }
        switch result {
        case .success(let pid):
            return ChildPipes(pid: pid, input: fromChild[0], output: toChild[1])
        case .failure(let error):
            for end in [toChild[1], fromChild[0]] where end >= 0 { close(end) }
            throw error
        }
    }

    /// Writes `request`, then reads until `answer` finds a whole answer at the start of what
    /// the child said (it takes what it uses from `said`, and returns nil while the answer is
    /// incomplete), all within `timeoutMs`.
    public func exchange<Answer>(
        _ request: [UInt8], timeoutMs: Int, answer: (_ said: inout [UInt8]) throws(ChildFailure) -> Answer?
    ) throws(ChildFailure) -> Answer {
        guard !stopped else { throw .broken("it was stopped") }
        let deadline = Self.deadline(timeoutMs)
        try write(request, deadline: deadline, timeoutMs: timeoutMs)
        while true {
            let said = buffer.count
            if let answer = try answer(&buffer) { return answer }
            // It took something that was no answer (a line Festival prints): look at the rest first.
            if buffer.count < said { continue }
            try fill(deadline: deadline, timeoutMs: timeoutMs)
        }
    }

    /// Writes `bytes` within `timeoutMs`, expecting no answer (what the child says meanwhile is
    /// kept for the next exchange).
    public func send(_ bytes: [UInt8], timeoutMs: Int) throws(ChildFailure) {
        guard !stopped else { throw .broken("it was stopped") }
        try write(bytes, deadline: Self.deadline(timeoutMs), timeoutMs: timeoutMs)
    }

    private static func deadline(_ timeoutMs: Int) -> UInt64 { now() + UInt64(max(timeoutMs, 1)) * 1_000_000 }

    /// The monotonic clock, in nanoseconds.
    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Reads what the child has said, waiting for it until `deadline`.
    private func fill(deadline: UInt64, timeoutMs: Int) throws(ChildFailure) {
        let now = Self.now()
        guard now < deadline else { throw .timedOut(timeoutMs) }
        var entry = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
        if ready < 0 {
            if errno == EINTR { return }
            throw .broken("cannot wait for it: \(String(cString: strerror(errno)))")
        }
        // A hang-up or an error counts as ready: the read reports it.
        guard ready > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
        guard count > 0 else { throw .exited(how: exitStatus()) }
        buffer.append(contentsOf: chunk[0..<count])
    }

    /// Writes all of `bytes`, reading what the child says meanwhile.
    private func write(_ bytes: [UInt8], deadline: UInt64, timeoutMs: Int) throws(ChildFailure) {
        var offset = 0
        while offset < bytes.count {
            let now = Self.now()
            guard now < deadline else { throw .timedOut(timeoutMs) }
            var entries = [pollfd(fd: output, events: Int16(POLLOUT), revents: 0), pollfd(fd: input, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&entries, 2, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .broken("cannot wait for it: \(String(cString: strerror(errno)))")
            }
            if entries[1].revents != 0 { try fill(deadline: deadline, timeoutMs: timeoutMs) }
            guard entries[0].revents != 0 else { continue }
            // At most a pipe's atomic size, so a write never blocks once poll says it may.
            let length = min(bytes.count - offset, Int(PIPE_BUF))
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let start = buffer.baseAddress else { return 0 }
                return Glibc.write(output, start + offset, length)
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                if errno == EPIPE { throw .exited(how: exitStatus()) }
                throw .broken("cannot write to it: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// How the child ended ("killed by signal 9", "exit status 2"), once it has; nil while it
    /// runs (its output may close a moment before it exits: it is waited for briefly).
    public func exitStatus() -> String? {
        guard !reaped else { return nil }
        var status: Int32 = 0
        for _ in 0..<50 {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                reaped = true
                let signal = status & 0x7f
                return signal != 0 ? "killed by signal \(signal)" : "exit status \((status >> 8) & 0xff)"
            }
            if result < 0 { return nil }
            usleep(10_000)
        }
        return nil
    }

    /// Ends the child (killed at once: it may be hung, or stopped, and SIGKILL ends a stopped
    /// process too) and reaps it; what it says after is never read.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        close(input)
        close(output)
        guard !reaped else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }
}
