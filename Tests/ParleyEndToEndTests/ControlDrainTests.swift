import Foundation
import Logging
import ParleyControl
import ParleyControlSocket
import ParleyCore
import ParleyProtocol
import ParleyTesting
import Synchronization
import Testing

/// Graceful shutdown of the control socket, against a real socket and an in-memory handler:
/// a request in flight (a `say` waiting for its turn to be stored) is answered before its
/// connection closes, while idle connections are closed at once and no new one is taken.
@Suite("Control socket drain", .blocksThreads)
struct ControlDrainTests {
    /// Answers `say` only once `release` ends, `subscribe` with the bus's events, everything
    /// else at once.
    struct GatedHandler: ControlHandler {
        let arrived: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>
        let bus = EventBus()

        func reply(to request: Request, from peer: Peer?) async -> ControlReply {
            if case .say = request.command {
                arrived.yield()
                for await _ in release {}
                return .line(Replies.result(["stored": true], id: request.id))
            }
            if case .subscribe = request.command {
                return .subscribe(Replies.result(["subscribed": true], id: request.id), bus.subscribe())
            }
            return .line(Replies.result(["ok": true], id: request.id))
        }
    }

    /// A running server on a socket in a folder of its own, with a `GatedHandler`.
    struct Running {
        let dir: URL
        let path: String
        let server: ControlServer
        let task: Task<Void, any Error>
        /// Yields when a `say` reaches the handler.
        let arrived: AsyncStream<Void>
        /// Finishing it lets every `say` be answered.
        let release: AsyncStream<Void>.Continuation
        /// What subscribers are sent.
        let bus: EventBus

        static func start(idleTimeout: Duration?, drainTimeout: Duration, clock: ParleyClock = .continuous) async throws -> Running {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-drain-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let path = dir.appendingPathComponent("control.sock").path
            let arrived = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let listening = AsyncStream<Void>.makeStream()
            let handler = GatedHandler(arrived: arrived.continuation, release: release.stream)
            let server = ControlServer(
                path: path, idleTimeout: idleTimeout, handler: handler,
                logger: Logger(label: "test"), drainTimeout: drainTimeout, clock: clock
            ) { listening.continuation.finish() }
            let task = Task { try await server.run() }
            for await _ in listening.stream {}
            return Running(dir: dir, path: path, server: server, task: task, arrived: arrived.stream, release: release.continuation, bus: handler.bus)
        }

        /// Sends `say` from a thread of its own; the reply line, or nil when the connection
        /// closed without one.
        func say(timeout: Duration) -> Task<String?, Never> {
            Thread.detachNewThreadWithResult { [path] in
                let line = try? ControlClient(path: path, timeout: timeout).call(
                    RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string("hola")]))
                return line.map { String(decoding: $0, as: UTF8.self) }
            }
        }

        func cleanUp() {
            release.finish()
            try? FileManager.default.removeItem(at: dir)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRequestInFlightIsAnsweredAndIdleConnectionsAreClosed() async throws {
        let rig = try await Running.start(idleTimeout: .seconds(600), drainTimeout: .seconds(600))
        defer { rig.cleanUp() }
        let (path, server, running) = (rig.path, rig.server, rig.task)

        let idle = try ControlClient(path: path, timeout: .seconds(10))
        #expect(try idle.call(RawRequest(type: "status")).count > 0, "the idle client is served before the drain")
        // A subscriber that half-closed (`nc -N`): closed too, though its idle watchdog sleeps on.
        let subscriber = try #require(RawSocket.connect(path, nonBlocking: false).fd)
        defer { close(subscriber) }
        RawSocket.write(subscriber, #"{"type":"subscribe"}"# + "\n")
        shutdown(subscriber, Int32(SHUT_WR))
        #expect(RawSocket.readLine(subscriber, within: 10)?.contains("subscribed") == true)
        let waiting = rig.say(timeout: .seconds(10))
        var requests = rig.arrived.makeAsyncIterator()
        _ = await requests.next()

        server.drain()
        #expect(try idle.readLine(within: .seconds(10)) == nil, "an idle connection is closed at once")
        #expect((try? ControlClient(path: path, timeout: .seconds(1)).call(RawRequest(type: "status"))) == nil, "no new connection is served")
        rig.release.finish()
        let answer = await waiting.value ?? "no reply"
        #expect(answer.contains("stored"), "\(answer)")
        // The watchdogs' and the drain's 600 s: a drain that waited for them would not end
        // within the test's minute.
        try await running.value
        #expect(RawSocket.readToEnd(subscriber, within: 1).isEmpty, "the half-closed subscriber was closed")
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file is removed once every connection closed")
    }

    @Test(.timeLimit(.minutes(1))) func aRequestStillInFlightWhenTheDrainTimesOutIsClosed() async throws {
        let manual = ManualClock()
        let rig = try await Running.start(idleTimeout: nil, drainTimeout: .seconds(3), clock: ParleyClock(manual))
        defer { rig.cleanUp() }
        // A `say` whose work never ends while the daemon stops.
        let waiting = rig.say(timeout: .seconds(600))
        var requests = rig.arrived.makeAsyncIterator()
        _ = await requests.next()
        rig.server.drain()
        // The drain waits its 3 s on the server's clock, and only then closes the connection.
        #expect(await manual.nextSleep() == .seconds(3))
        manual.advance(by: .seconds(3))
        #expect(await waiting.value == nil, "the connection was closed without a reply")
        try await rig.task.value
    }
}
