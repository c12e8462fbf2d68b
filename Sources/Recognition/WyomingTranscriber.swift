import Foundation
import Logging
import ParleyCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A Wyoming speech-to-text service: one of Parley's own workers (the Whisper worker,
/// `libexec/parley-whisper`, and Moonshine's, `parleyd worker moonshine`), started as a child
/// and spoken to over its standard input and output, or a server on the network
/// (`[transcriber] server = "tcp://HOST:PORT"`), such as wyoming-faster-whisper.
///
/// - The child is started once and kept warm. If it dies mid-utterance, it is started again
///   and the utterance is asked once more: a turn in flight is not lost to a crash. If it
///   stops answering within the timeout, it is killed and the utterance fails at once (the
///   next engine hears it: a hang on some audio would hang again); the next utterance starts
///   a fresh worker.
/// - A server is connected to for each utterance (as Wyoming clients do); one that is down
///   fails the utterance at once, and the daemon falls back to the engine it still has.
/// - Parley's Whisper worker stops the utterance it hears on SIGUSR1 (`stopsOnSignal`, `stop`):
///   it answers with an `error` whose code is `stopped` once its encoder is done, instead of
///   decoding words nobody wants (docs/protocol.md).
public final class WyomingTranscriber: UtteranceTranscriber {
    public enum Endpoint: Sendable, Equatable {
        /// A worker started with these arguments (the first is the program).
        case child([String])
        case tcp(host: String, port: Int)
    }

    public let name: String
    public let detectsLanguage: Bool
    /// Whisper: in babble and a kitchen it keeps about twice the words Moonshine tiny keeps.
    public let holdsUpInNoise: Bool
    public let roomBeforeVoiceMs: Int?
    private let endpoint: Endpoint
    private let languages: Set<String>
    private let timeoutMs: Int
    private let timeoutPerSecondMs: Int
    private let startTimeoutMs: Int
    private let logger: Logger
    private let state = Mutex<Link?>(nil)
    /// After a start that failed, the worker is not started again before this (uptime
    /// nanoseconds): utterances fall back at once instead of each waiting for a broken start.
    private let downUntil = Atomic<UInt64>(0)
    /// How long a worker that would not start is left alone.
    static let restDuration: UInt64 = 30_000_000_000
    /// How many times the worker was started (the first start included).
    private let startsMade = Atomic<Int>(0)
    /// The languages its `info` answer says it hears, once it has answered (nil before, or when
    /// it names none): a server may run an English-only model, and must not be handed Spanish.
    private let declared = Mutex<Set<String>?>(nil)
    /// Whether its worker stops the utterance it hears on SIGUSR1 (`stop`).
    private let stopsOnSignal: Bool
    /// The worker hearing an utterance now, while it does, and whether `stop` signalled it
    /// meanwhile.
    private let hearing = Mutex<(process: pid_t?, signalled: Bool)>((nil, false))

    /// - `languages`: what it hears (Whisper base: every language Parley speaks).
    /// - `timeoutMs`: how long one utterance may take, plus `timeoutPerSecondMs` for each
    ///   second of its audio; `startTimeoutMs`: how long the worker may take to load its model
    ///   and answer `describe`.
    /// - `stopsOnSignal`: its worker (a child) stops the utterance it hears on SIGUSR1 and says
    ///   so (Parley's Whisper worker does; any other program would be ended by the signal).
    public init(
        name: String, endpoint: Endpoint, languages: Set<String>, detectsLanguage: Bool = true, holdsUpInNoise: Bool = true,
        roomBeforeVoiceMs: Int? = nil, timeoutMs: Int = 15_000, timeoutPerSecondMs: Int = 0, startTimeoutMs: Int = 60_000,
        stopsOnSignal: Bool = false, logger: Logger
    ) {
        self.stopsOnSignal = stopsOnSignal
        self.name = name
        self.endpoint = endpoint
        self.languages = languages
        self.detectsLanguage = detectsLanguage
        self.holdsUpInNoise = holdsUpInNoise
        self.roomBeforeVoiceMs = roomBeforeVoiceMs
        self.timeoutMs = timeoutMs
        self.timeoutPerSecondMs = timeoutPerSecondMs
        self.startTimeoutMs = startTimeoutMs
        self.logger = logger
    }

    deinit {
        state.withLock { link in link?.close() }
    }

    /// Whether it hears `language`: one of `languages`, and, once it has described itself, one
    /// its models name.
    public func hears(_ language: String) -> Bool {
        languages.contains(language) && declared.withLock { $0?.contains(language) ?? true }
    }

    /// The languages an `info` answer's speech-to-text models name (Wyoming's
    /// `{"asr": [{"models": [{"languages": [...]}]}]}`); nil when it names none.
    static func declaredLanguages(_ info: Data) -> Set<String>? {
        guard let object = try? JSONSerialization.jsonObject(with: info) as? [String: Any],
            let programs = object["asr"] as? [[String: Any]]
        else { return nil }
        let named = programs.flatMap { ($0["models"] as? [[String: Any]]) ?? [] }.flatMap { ($0["languages"] as? [String]) ?? [] }
        // "es-ES", "en_US": the language is what comes before the region.
        let languages = Set(named.map { String($0.lowercased().prefix { $0.isLetter }) }.filter { !$0.isEmpty })
        return languages.isEmpty ? nil : languages
    }

    /// How many times the worker process was started: 1 once warm, more after restarts.
    public var starts: Int { startsMade.load(ordering: .relaxed) }

    /// The worker's process id, while it runs (nil for a server).
    public var workerProcess: pid_t? { state.withLock { $0?.process } }

    /// Starts the worker (or checks the server answers) now, so the first turn does not wait.
    public func warm() throws(RecognizerError) {
        try state.withLock { (link: inout Link?) throws(RecognizerError) in
            if link == nil { link = try connect() }
        }
    }

    /// Whether it can be asked now: false for a while after its worker would not start, so
    /// that `status` names the engine that hears in its place and turns do not wait for it.
    public var isAvailable: Bool { DispatchTime.now().uptimeNanoseconds >= downUntil.load(ordering: .relaxed) }

    public func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript {
        let events = try WyomingRequest.events(for: samples, request)
        let timeoutMs = self.timeoutMs + samples.count * timeoutPerSecondMs / captureSampleRate
        return try state.withLock { (link: inout Link?) throws(RecognizerError) -> Transcript in
            var lastError: RecognizerError?
            // A second try on a fresh worker when the first one died mid-utterance (a worker
            // that does not start, or that hung, is not tried twice).
            for attempt in 0..<2 {
                let open: Link
                if let existing = link {
                    open = existing
                } else {
                    open = try connect()
                    link = open
                }
                let answer: WyomingEvent
                // `stop` may signal the worker only while it hears this utterance: not once it is
                // closed (its process id may be another's by then).
                if stopsOnSignal, let process = open.process { hearing.withLock { $0 = (process, false) } }
                let exchanged = Result { () throws(RecognizerError) in try open.exchange(events, timeoutMs: timeoutMs) }
                let signalled = hearing.withLock { hearing in
                    defer { hearing = (nil, false) }
                    return hearing.signalled
                }
                do throws(RecognizerError) {
                    answer = try exchanged.get()
                } catch {
                    open.close()
                    link = nil
                    if open.timedOut {
                        throw RecognizerError("\(name) did not answer within \(timeoutMs) ms; it is started afresh for the next utterance")
                    }
                    lastError = error
                    if case .tcp = endpoint { break }
                    if attempt == 0 { logger.warning("\(name): \(error); starting it again and asking once more") }
                    continue
                }
                if case .tcp = endpoint {
                    open.close()
                    link = nil
                }
                // An `error` answer fails this utterance; the worker itself is well. It stopped
                // only if it was asked to here: a "stopped" answer to nobody's request (a server,
                // a signal from elsewhere) is a failure, and the next engine hears the utterance.
                do throws(RecognizerError) {
                    return try WyomingRequest.transcript(from: answer, request, engine: name)
                } catch where error.stopped && !signalled {
                    throw RecognizerError("\(name) stopped the utterance, though nobody asked it to")
                }
            }
            throw lastError ?? RecognizerError("\(name) did not answer")
        }
    }

    /// Stops the utterance its worker hears now (SIGUSR1, under the lock that says which
    /// worker hears one): nothing when it hears none, or cannot stop. The worker forgets a
    /// signal when the next utterance is asked for, so one that comes before the worker has
    /// read the request, or as it answers, stops nothing (`PassWatch` asks again).
    public func stop() {
        hearing.withLock { hearing in
            guard let process = hearing.process else { return }
            kill(process, SIGUSR1)
            hearing.signalled = true
        }
    }

    /// Starts the worker or connects to the server, and waits for its `info` answer.
    private func connect() throws(RecognizerError) -> Link {
        let now = DispatchTime.now().uptimeNanoseconds
        let rest = downUntil.load(ordering: .relaxed)
        guard now >= rest else {
            throw RecognizerError("\(name) could not start a moment ago; it is tried again in \((rest - now) / 1_000_000_000 + 1) s")
        }
        do {
            return try open()
        } catch {
            downUntil.store(DispatchTime.now().uptimeNanoseconds + Self.restDuration, ordering: .relaxed)
            throw error
        }
    }

    private func open() throws(RecognizerError) -> Link {
        let link: Link
        switch endpoint {
        case .child(let arguments):
            link = try Link.spawn(arguments)
            startsMade.add(1, ordering: .relaxed)
        case .tcp(let host, let port):
            link = try Link.dial(host: host, port: port, timeoutMs: min(timeoutMs, 5_000))
        }
        let started = ContinuousClock.now
        do {
            let info = try link.exchange([WyomingEvent(type: "describe")], timeoutMs: startTimeoutMs)
            guard info.type == "info" else { throw RecognizerError("it answered describe with \(info.type)") }
            let heard = Self.declaredLanguages(info.data)
            declared.withLock { $0 = heard }
            if let heard, !languages.subtracting(heard).isEmpty {
                let missing = languages.subtracting(heard).sorted().joined(separator: ", ")
                logger.notice("\(name) hears only \(heard.intersection(languages).sorted().joined(separator: ", ")) (its models say so); \(missing) go to the next engine")
            }
        } catch {
            link.close()
            throw RecognizerError("\(name) did not start: \(error)")
        }
        if let process = link.process {
            logger.notice("\(name) is ready: its worker (process \(process)) loaded in \((ContinuousClock.now - started).milliseconds) ms")
        }
        return link
    }
}

/// One open conversation with a Wyoming service: a pair of descriptors (a child's pipes, or
/// one socket), read with `poll` and a deadline.
final class Link {
    let input: Int32
    let output: Int32
    let process: pid_t?
    private var buffer: [UInt8] = []
    private var closed = false
    /// Set when a wait ran out (the other side hung), not when it closed or failed.
    private(set) var timedOut = false
    /// Set when the other side closed the connection.
    private(set) var atEnd = false

    private init(input: Int32, output: Int32, process: pid_t?) {
        self.input = input
        self.output = output
        self.process = process
    }

    /// Writing to a worker that died must be an error here, not the end of parleyd.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    static func spawn(_ arguments: [String]) throws(RecognizerError) -> Link {
        _ = ignoreBrokenPipes
        guard let program = arguments.first else { throw RecognizerError("no worker program given") }
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        let result: Result<pid_t, RecognizerError> = ProcessLauncher.withLock {
            guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
                return .failure(RecognizerError("cannot start \(program): no pipe (\(String(cString: strerror(errno))))"))
            }
            for end in toChild + fromChild { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            // Its standard error is parleyd's: a worker that cannot load says so in the journal.
            return ProcessLauncher.spawn(arguments, stdin: toChild[0], stdout: fromChild[1], stderrToNull: false)
                .mapError { RecognizerError("cannot start \(program): \($0)") }
        }
        if toChild[0] >= 0 { Glibc.close(toChild[0]) }
        if fromChild[1] >= 0 { Glibc.close(fromChild[1]) }
        switch result {
        case .success(let pid):
            return Link(input: fromChild[0], output: toChild[1], process: pid)
        case .failure(let error):
            for end in [toChild[1], fromChild[0]] where end >= 0 { Glibc.close(end) }
            throw error
        }
    }

    /// A link over descriptors already open (a worker's standard input and output).
    static func attached(input: Int32, output: Int32) -> Link {
        _ = ignoreBrokenPipes
        return Link(input: input, output: output, process: nil)
    }

    static func dial(host: String, port: Int, timeoutMs: Int) throws(RecognizerError) -> Link {
        _ = ignoreBrokenPipes
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw RecognizerError("cannot find the speech server \(host)")
        }
        defer { freeaddrinfo(found) }
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        var problem = "no address"
        while let address = candidate {
            candidate = address.pointee.ai_next
            let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else { continue }
            var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
            setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                return Link(input: socket, output: socket, process: nil)
            }
            problem = String(cString: strerror(errno))
            Glibc.close(socket)
        }
        throw RecognizerError("cannot reach the speech server \(host):\(port): \(problem)")
    }

    /// Sends `events` and reads the answer to the last one (events that answer nothing, such as
    /// audio chunks, are sent on).
    func exchange(_ events: [WyomingEvent], timeoutMs: Int) throws(RecognizerError) -> WyomingEvent {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeoutMs, 1)) * 1_000_000
        for event in events { try send(event, deadline: deadline) }
        return try receive(deadline: deadline)
    }

    /// Writes one event; `deadline` in uptime nanoseconds (`.max`: waits as long as it takes).
    func send(_ event: WyomingEvent, deadline: UInt64 = .max) throws(RecognizerError) {
        try write(event.encoded, deadline: deadline)
    }

    /// Whether input comes (or is already read and waiting) within `timeoutMs`.
    func hasInput(within timeoutMs: Int) -> Bool {
        guard buffer.isEmpty else { return true }
        var entry = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Int32(timeoutMs)) != 0
    }

    /// Reads the next event.
    func receive(deadline: UInt64 = .max) throws(RecognizerError) -> WyomingEvent {
        try WyomingEvent.read { (count: Int?) throws(RecognizerError) in try read(count, deadline: deadline) }
    }

    private func wait(for descriptor: Int32, _ events: Int32, deadline: UInt64) throws(RecognizerError) {
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                timedOut = true
                throw RecognizerError("no answer in time")
            }
            var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
            let ready = poll(&entry, 1, Int32(min((deadline - now) / 1_000_000 + 1, 60_000)))
            if ready > 0 { return }
            if ready < 0 && errno != EINTR { throw RecognizerError("cannot wait: \(String(cString: strerror(errno)))") }
        }
    }

    private func write(_ bytes: [UInt8], deadline: UInt64) throws(RecognizerError) {
        var offset = 0
        while offset < bytes.count {
            try wait(for: output, POLLOUT, deadline: deadline)
            let written = bytes.withUnsafeBytes { buffer -> Int in
                guard let start = buffer.baseAddress else { return 0 }
                return Glibc.write(output, start + offset, min(bytes.count - offset, 65_536))
            }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw RecognizerError("it stopped reading (\(String(cString: strerror(errno))))")
            }
            offset += written
        }
    }

    /// The next `count` bytes, or the bytes up to a newline (not included) when `count` is nil.
    private func read(_ count: Int?, deadline: UInt64) throws(RecognizerError) -> [UInt8] {
        while true {
            if let count, buffer.count >= count {
                defer { buffer.removeFirst(count) }
                return Array(buffer[..<count])
            }
            if count == nil, let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                defer { buffer.removeFirst(newline + 1) }
                return Array(buffer[..<newline])
            }
            guard buffer.count <= WyomingEvent.limit * 64 else { throw RecognizerError("it sent more than a transcript") }
            try wait(for: input, POLLIN, deadline: deadline)
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let got = chunk.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if got < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard got > 0 else {
                atEnd = true
                throw RecognizerError("it closed the connection")
            }
            buffer.append(contentsOf: chunk[0..<got])
        }
    }

    /// Closes the descriptors; a worker is ended (SIGTERM, then SIGKILL) and reaped.
    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(input)
        if output != input { Glibc.close(output) }
        guard let process else { return }
        kill(process, SIGTERM)
        // A stopped worker acts on the SIGTERM once continued.
        kill(process, SIGCONT)
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(process, &status, WNOHANG) != 0 { return }
            usleep(20_000)
        }
        kill(process, SIGKILL)
        waitpid(process, &status, 0)
    }
}
