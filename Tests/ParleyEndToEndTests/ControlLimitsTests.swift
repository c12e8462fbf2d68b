import Foundation
import ParleyTesting
import Testing
@testable import ParleyProtocol

/// A live parleyd against the ways real clients connect, leave and linger: non-blocking
/// connects in bursts, half-closes, idle connections, and clients that leave mid-request.
@Suite("Control socket limits", .serialized, .startsProcesses)
struct ControlLimitsTests {
    /// `echo '{"type":"status"}' | nc -U -N sock`: the request, then at once a half-close.
    @Test func aRequestFollowedByAHalfCloseIsAnswered() async throws {
        let (daemon, dir, socket) = try await Self.startDaemon()
        defer { try? FileManager.default.removeItem(at: dir) }
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        var answered = 0
        for attempt in 0..<50 {
            let fd = try #require(RawSocket.connect(socket, nonBlocking: false).fd)
            defer { close(fd) }
            RawSocket.write(fd, #"{"type":"status","id":\#(attempt)}"# + "\n")
            shutdown(fd, Int32(SHUT_WR))
            let reply = RawSocket.readToEnd(fd, within: 20)
            if reply.contains(#""type":"result""#) && reply.contains(#""id":\#(attempt)"#) { answered += 1 }
        }
        #expect(answered == 50, "\(answered) of 50 half-closed requests were answered")

        // A subscriber that half-closes still gets its events.
        let subscriber = try #require(RawSocket.connect(socket, nonBlocking: false).fd)
        defer { close(subscriber) }
        RawSocket.write(subscriber, #"{"type":"subscribe"}"# + "\n")
        shutdown(subscriber, Int32(SHUT_WR))
        let said = try EndToEnd.run(try EndToEnd.binary("parley"), ["say", "--speaker", "a", "good morning", "--socket", socket], in: dir)
        #expect(said.status == 0, "\(said.stderr)")
        #expect(RawSocket.readLines(subscriber, until: { $0.contains(#""type":"turn""#) }, within: 60))

        try Self.stop(daemon)
    }

    /// 200 clients connect without blocking, all at once (as Go, Node and Python with a timeout
    /// do): every connect succeeds, and every connection is answered, served or refused.
    @Test func aBurstOfNonBlockingConnectsIsAcceptedAndAnswered() async throws {
        let (daemon, dir, socket) = try await Self.startDaemon()
        defer { try? FileManager.default.removeItem(at: dir) }
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        var fds: [Int32] = []
        var failures: [Int32] = []
        for _ in 0..<200 {
            let (fd, error) = RawSocket.connect(socket, nonBlocking: true)
            if let fd { fds.append(fd) } else { failures.append(error) }
        }
        defer { fds.forEach { close($0) } }
        #expect(failures.isEmpty, "\(failures.count) of 200 connects failed: \(Set(failures).map { String(cString: strerror($0)) })")

        for fd in fds { RawSocket.write(fd, #"{"type":"version"}"# + "\n") }
        var answers: [String: Int] = [:]
        for fd in fds {
            let line = RawSocket.readLine(fd, within: 30) ?? ""
            let kind =
                line.contains(#""type":"result""#) ? "result" : line.contains("too_many_clients") ? "too_many_clients" : "no answer: \(line)"
            answers[kind, default: 0] += 1
        }
        #expect(answers["result", default: 0] + answers["too_many_clients", default: 0] == fds.count, "\(answers)")
        #expect(daemon.isRunning)
        try Self.stop(daemon)
    }

    /// A live parleyd applies `[control] idle_timeout_seconds`: idle connections are closed after
    /// it, whether they never asked anything or asked once; a subscriber, which waits for events,
    /// is not. (ControlTimingTests time the rules exactly, on a manual clock, stuck replies too.)
    @Test func idleConnectionsAreClosedAndSubscribersAreNot() async throws {
        let (daemon, dir, socket) = try await Self.startDaemon(control: "idle_timeout_seconds = 1")
        defer { try? FileManager.default.removeItem(at: dir) }
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }

        let subscriber = try ControlClient(path: socket)
        _ = try subscriber.call(RawRequest(type: "subscribe"))
        let silent = try ControlClient(path: socket)
        let askedOnce = try ControlClient(path: socket)
        _ = try askedOnce.call(RawRequest(type: "status"))

        for client in [silent, askedOnce] {
            let line = try #require(try client.readLine())
            #expect(try JSONDecoder().decode(ErrorReply.self, from: line).data.code == "idle_timeout")
            #expect(try client.readLine() == nil)
        }
        // Both were closed after a second of silence; the subscriber, connected before them,
        // still gets the next turn.
        let said = try EndToEnd.run(try EndToEnd.binary("parley"), ["say", "--speaker", "a", "good morning", "--socket", socket], in: dir)
        #expect(said.status == 0, "\(said.stderr)")
        #expect(RawSocket.readLines(subscriber.fileDescriptor, until: { $0.contains(#""type":"turn""#) }, within: 60))
        try Self.stop(daemon)
    }

    /// A `say` whose client leaves gives its place back at once; the turn is still stored.
    /// `parley say` gives up after --timeout with one line saying what to do.
    @Test func aSayWhoseClientLeftFreesItsPlaceAndIsStillStored() async throws {
        // The only translation server answers when the test lets it, so a turn takes that long.
        // (One that never answers would be skipped after the first turn, its circuit broken.)
        let held = try await FaultServer("held")
        let (daemon, dir, socket) = try await Self.startDaemon(
            extra: """
                [translator]
                backends = ["libretranslate"]
                deadline_ms = 120000
                failure_notice = false
                [translator.libretranslate]
                url = "\(held.url.absoluteString)"
                timeout_ms = 120000
                """)
        defer { try? FileManager.default.removeItem(at: dir) }
        defer { if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) } }
        // Turns stored since start, from `status`: answered even when every place is taken.
        func storedTurns() throws -> Int {
            let line = try ControlClient(path: socket).call(RawRequest(type: "status"))
            return try JSONDecoder().decode(ResultReply<StatusInfo>.self, from: line).data.turns
        }

        // The client gives up after a second, saying what to do, and exits 4.
        let parley = try EndToEnd.binary("parley")
        let late = try EndToEnd.run(parley, ["say", "--speaker", "a", "--timeout", "1", "where is the station", "--socket", socket], in: dir)
        #expect(late.status == 4, "\(late)")
        #expect(late.message.contains("did not answer within 1 s") && late.message.contains("--timeout"), "\(late.stderr)")
        #expect(late.message.split(separator: "\n").count == 1, "\(late.stderr)")
        // Its turn is stored anyway, once the server answers.
        #expect(try storedTurns() == 0)
        try await held.release(after: 1)
        #expect(try await Self.eventually { try storedTurns() == 1 })

        // 63 idle clients and one `say` that leaves at once: 64 places, but the leaver's is free.
        var idle = try await Self.takePlaces(63, socket: socket)
        // The leaver first makes sure it holds a place (a connection over the limit is not
        // answered `config`): places of the connections above are given back a moment after
        // they close.
        var leaver: Int32 = -1
        for _ in 0..<100 where leaver < 0 {
            let fd = try #require(RawSocket.connect(socket, nonBlocking: false).fd)
            RawSocket.write(fd, #"{"type":"config"}"# + "\n")
            if RawSocket.readLine(fd, within: 20)?.contains(#""type":"result""#) == true {
                leaver = fd
            } else {
                close(fd)
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try #require(leaver >= 0, "no place for the client that leaves")
        RawSocket.write(leaver, #"{"type":"say","data":{"speaker":"a","text":"the house is red"}}"# + "\n")
        close(leaver)
        var served = false
        var storedWhenServed = -1
        for _ in 0..<100 where !served {
            let answer = try ControlClient(path: socket).call(RawRequest(type: "config"))
            served = try JSONDecoder().decode(Envelope.self, from: answer).type == "result"
            if served { storedWhenServed = try storedTurns() } else { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(served, "the place of the client that left was not given back")
        #expect(storedWhenServed == 1, "the place was given back only once the turn was stored")
        try await held.release(after: 2)
        #expect(try await Self.eventually { try storedTurns() == 2 }, "the turn of the client that left was not stored")
        idle.removeAll()
        try Self.stop(daemon)
    }

    /// A daemon that accepts and never answers (here a socket nobody reads): `parley` gives up
    /// after --timeout with one line and exit 4.
    @Test func theCLIGivesUpOnADaemonThatDoesNotAnswer() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("mute.sock").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 16) == 0)
        let parley = try EndToEnd.binary("parley")
        let status = try EndToEnd.run(parley, ["status", "--timeout", "1", "--socket", path], in: dir, timeout: 60)
        #expect(status.status == 4, "\(status)")
        #expect(status.message.hasPrefix("parley: parleyd at \(path) did not answer within 1 s"), "\(status.stderr)")
        #expect(status.message.contains("--timeout SECONDS"), "\(status.stderr)")
        #expect(status.message.split(separator: "\n").count == 1, "\(status.stderr)")
        let bad = try EndToEnd.run(parley, ["status", "--timeout", "-1", "--socket", path], in: dir, timeout: 60)
        #expect(bad.status == 2, "\(bad)")
    }

    static func startDaemon(extra: String = "", control: String = "") async throws -> (Process, URL, String) {
        let dir = try EndToEnd.temporaryDirectory()
        let silence = dir.appendingPathComponent("silence.raw")
        try Data(count: 32_000).write(to: silence)
        let (daemon, log, socket) = try await EndToEnd.startLiveDaemon(
            in: dir, infile: silence.path, played: "/dev/null", extraConfig: extra, controlConfig: control)
        try #require(daemon.isRunning, "parleyd did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        return (daemon, dir, socket)
    }

    /// `count` clients that each hold a place, for sure: each is answered `config`, which is
    /// not answered over the limit (a connection whose client just closed it may hold a place
    /// for a moment, so a refused one tries again).
    static func takePlaces(_ count: Int, socket: String) async throws -> [ControlClient] {
        var clients: [ControlClient] = []
        let deadline = Date(timeIntervalSinceNow: 60)
        while clients.count < count && Date() < deadline {
            let client = try ControlClient(path: socket)
            let answer = try client.call(RawRequest(type: "config"))
            if try JSONDecoder().decode(Envelope.self, from: answer).type == "result" {
                clients.append(client)
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try #require(clients.count == count, "only \(clients.count) of \(count) clients got a place")
        return clients
    }

    static func stop(_ daemon: Process) throws {
        kill(daemon.processIdentifier, SIGTERM)
        #expect(EndToEnd.wait(daemon, timeout: 20))
        #expect(daemon.terminationStatus == 0)
    }

    /// Asks `condition` every 100 ms until it holds; the 90 s limit only guards a hung daemon.
    static func eventually(_ condition: () throws -> Bool) async throws -> Bool {
        let deadline = Date(timeIntervalSinceNow: 90)
        while Date() < deadline {
            if try condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}

/// Plain socket calls, to connect and close the ways other clients do.
enum RawSocket {
    /// Connects to `path`; with `nonBlocking`, as a client with a connect timeout does (the
    /// socket is made blocking again afterwards). Returns the descriptor or the errno.
    static func connect(_ path: String, nonBlocking: Bool) -> (fd: Int32?, error: Int32) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return (nil, errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let flags = fcntl(fd, F_GETFL)
        if nonBlocking { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        let error = errno
        guard result == 0 else {
            close(fd)
            return (nil, error)
        }
        _ = fcntl(fd, F_SETFL, flags)
        return (fd, 0)
    }

    static func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Reads until the other end closes (or `seconds` pass, which only guards a hung daemon).
    static func readToEnd(_ fd: Int32, within seconds: Double) -> String {
        var data = Data()
        _ = read(fd, within: seconds) { chunk in
            data.append(chunk)
            return false
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The first line, or nil when the connection closes first.
    static func readLine(_ fd: Int32, within seconds: Double) -> String? {
        var data = Data()
        let found = read(fd, within: seconds) { chunk in
            data.append(chunk)
            return data.contains(0x0A)
        }
        guard found, let newline = data.firstIndex(of: 0x0A) else { return nil }
        return String(decoding: data[..<newline], as: UTF8.self)
    }

    /// Reads lines until one satisfies `condition`; false if the connection closes first.
    static func readLines(_ fd: Int32, until condition: (String) -> Bool, within seconds: Double) -> Bool {
        var data = Data()
        return read(fd, within: seconds) { chunk in
            data.append(chunk)
            return String(decoding: data, as: UTF8.self).split(separator: "\n").contains { condition(String($0)) }
        }
    }

    /// Feeds what arrives to `done` until it says so (true), the connection closes or time runs out (false).
    private static func read(_ fd: Int32, within seconds: Double, _ done: (Data) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            if done(Data(buffer[0..<count])) { return true }
        }
        return false
    }
}
