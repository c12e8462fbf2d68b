import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// What `BergamotTranslator` needs of its worker: a request line out, an answer line back,
/// within a time limit. The real one is a child process (`BergamotWorkerProcess`); unit tests
/// give an in-memory one. Not `Sendable`: it lives in the translator's actor state.
protocol BergamotWorkerLink: AnyObject {
    /// The worker's process id (nil when it is no process).
    var process: pid_t? { get }
    /// Sends one request (a JSON object, without its newline) and returns the next answer
    /// line (without its newline).
    func exchange(_ request: [UInt8], timeoutMs: Int) throws(BergamotWorkerFailure) -> [UInt8]
    /// Ends the worker (killed if it runs) and reaps it; what it answers after is never read.
    func stop()
}

/// Why a worker gave no answer.
enum BergamotWorkerFailure: Error, CustomStringConvertible {
    /// It did not answer within the limit (hung, or stopped).
    case timedOut(Int)
    /// It closed its output or its input: it exited, or was killed. `how` says how, when known.
    case exited(how: String?)
    /// Something else went wrong with the pipes.
    case broken(String)

    var description: String {
        switch self {
        case .timedOut(let milliseconds): "it did not answer within \(milliseconds) ms"
        case .exited(let how): "it exited" + (how.map { " (\($0))" } ?? "")
        case .broken(let problem): problem
        }
    }
}

/// The translation worker (`libexec/parley-bergamot`) as a child of parleyd: its standard
/// input and output are pipes read with `poll` and a deadline; its standard error is parleyd's,
/// so what it says about a model that will not load reaches the journal. Spawned through
/// `ProcessLauncher` (every signal at its default: parleyd ignores SIGPIPE).
final class BergamotWorkerProcess: BergamotWorkerLink {
    let process: pid_t?
    private let pid: pid_t
    /// Our end of its standard input, and of its standard output.
    private let input: Int32
    private let output: Int32
    private var buffer: [UInt8] = []
    private var stopped = false
    private var reaped = false

    /// The longest answer line read: a translation is capped far below this by the chain.
    static let longestLine = 16 << 20

    /// Writing to a worker that died must be an error here, not the end of parleyd.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.process = pid
        self.input = input
        self.output = output
    }

    deinit { stop() }

    /// Starts `arguments` (the first is the program) as the worker.
    static func spawn(_ arguments: [String]) throws(TranslationError) -> BergamotWorkerProcess {
        _ = ignoreBrokenPipes
        guard let program = arguments.first else { throw TranslationError("no Bergamot worker program given") }
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        let result: Result<pid_t, TranslationError> = ProcessLauncher.withLock {
            guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
                return .failure(TranslationError("cannot start \(program): no pipe (\(String(cString: strerror(errno))))"))
            }
            for end in toChild + fromChild { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return ProcessLauncher.spawn(arguments, stdin: toChild[0], stdout: fromChild[1], stderrToNull: false)
                .mapError { TranslationError("cannot start \(program): \($0)") }
        }
        if toChild[0] >= 0 { close(toChild[0]) }
        if fromChild[1] >= 0 { close(fromChild[1]) }
        switch result {
        case .success(let pid):
            return BergamotWorkerProcess(pid: pid, input: fromChild[0], output: toChild[1])
        case .failure(let error):
            for end in [toChild[1], fromChild[0]] where end >= 0 { close(end) }
            throw error
        }
    }

    func exchange(_ request: [UInt8], timeoutMs: Int) throws(BergamotWorkerFailure) -> [UInt8] {
        guard !stopped else { throw .broken("the worker was stopped") }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeoutMs, 1)) * 1_000_000
        let bytes = request + [UInt8(ascii: "\n")]
        var offset = 0
        // The answer is read while the request is written, so neither side can fill a pipe and wait.
        while true {
            if offset == bytes.count, let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            guard buffer.count <= Self.longestLine else { throw .broken("it sent an answer longer than \(Self.longestLine >> 20) MiB") }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw .timedOut(timeoutMs) }
            var entries = [pollfd(fd: input, events: Int16(POLLIN), revents: 0)]
            if offset < bytes.count { entries.append(pollfd(fd: output, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&entries, nfds_t(entries.count), Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                throw .broken("cannot wait for it: \(String(cString: strerror(errno)))")
            }
            // A hang-up or an error counts as ready: the read or write that follows reports it.
            if entries[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else { throw .exited(how: exitStatus()) }
                buffer.append(contentsOf: chunk[0..<count])
            }
            if entries.count > 1, entries[1].revents != 0 {
                // At most a pipe's atomic size, so a write never blocks once poll says it may.
                let length = min(bytes.count - offset, Int(PIPE_BUF))
                let written = bytes.withUnsafeBytes { buffer -> Int in
                    guard let start = buffer.baseAddress else { return 0 }
                    return write(output, start + offset, length)
                }
                if written < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    if errno == EPIPE { throw .exited(how: exitStatus()) }
                    throw .broken("cannot write to it: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// How the worker ended ("killed by signal 9", "exit status 2"), once it has; nil while it
    /// runs (its output may close a moment before it exits: it is waited for briefly).
    private func exitStatus() -> String? {
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

    func stop() {
        guard !stopped else { return }
        stopped = true
        close(input)
        close(output)
        guard !reaped else { return }
        // Killed at once: it may be hung, or stopped (SIGKILL ends a stopped process too).
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }
}

/// The worker's JSON-lines protocol (docs/protocol.md, "The translation worker").
enum BergamotMessage {
    struct Describe: Encodable {
        let type = "describe"
    }

    struct Translate: Encodable {
        let type = "translate"
        let id: Int
        let text: String
        let from: String
        let to: String
    }

    /// Any answer: `info` (with `pairs`), `translation` (with `text`), or `error` (with `error`).
    struct Answer: Decodable {
        struct Pair: Decodable {
            let from: String
            let to: String
        }

        let type: String
        let id: Int?
        let text: String?
        let error: String?
        let pairs: [Pair]?
    }

    static func encode(_ message: some Encodable) -> [UInt8] {
        // Encoding these plain structs of strings and integers cannot fail.
        Array((try? JSONEncoder().encode(message)) ?? Data("{}".utf8))
    }

    static func decode(_ line: [UInt8]) -> Answer? {
        try? JSONDecoder().decode(Answer.self, from: Data(line))
    }
}
