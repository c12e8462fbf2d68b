import Foundation
import Logging
import ParleyControl
import ParleyProtocol
import Synchronization
import Testing

/// Graceful shutdown of the control socket, against a real socket and an in-memory handler:
/// a request in flight (a `say` waiting for its turn to be stored) is answered before its
/// connection closes, while idle connections are closed at once and no new one is taken.
@Suite("Control socket drain")
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

    @Test(.timeLimit(.minutes(1))) func aRequestInFlightIsAnsweredAndIdleConnectionsAreClosed() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-drain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("control.sock").path
        let arrived = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let listening = AsyncStream<Void>.makeStream()
        let server = ControlServer(
            path: path, idleTimeout: .seconds(600), handler: GatedHandler(arrived: arrived.continuation, release: release.stream),
            logger: Logger(label: "test"), drainTimeout: .seconds(600)
        ) { listening.continuation.finish() }
        let running = Task { try await server.run() }
        for await _ in listening.stream {}

        let idle = try ControlClient(path: path, timeout: .seconds(10))
        #expect(try idle.call(RawRequest(type: "status")).count > 0, "the idle client is served before the drain")
        // A subscriber that half-closed (`nc -N`): closed too, though its idle watchdog sleeps on.
        let subscriber = try #require(RawSocket.connect(path, nonBlocking: false).fd)
        defer { close(subscriber) }
        RawSocket.write(subscriber, #"{"type":"subscribe"}"# + "\n")
        shutdown(subscriber, Int32(SHUT_WR))
        #expect(RawSocket.readLine(subscriber, within: 10)?.contains("subscribed") == true)
        let waiting = Thread.detachNewThreadWithResult {
            let line = try? ControlClient(path: path, timeout: .seconds(10)).call(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string("hola")]))
            return line.map { String(decoding: $0, as: UTF8.self) } ?? "no reply"
        }
        var requests = arrived.stream.makeAsyncIterator()
        _ = await requests.next()

        server.drain()
        #expect(try idle.readLine() == nil, "an idle connection is closed at once")
        #expect((try? ControlClient(path: path, timeout: .seconds(1)).call(RawRequest(type: "status"))) == nil, "no new connection is served")
        release.continuation.finish()
        let answer = await waiting.value
        #expect(answer.contains("stored"), "\(answer)")
        // The watchdogs' and the drain's 600 s: a drain that waited for them would not end
        // within a minute.
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await running.value) != nil }
            group.addTask {
                try? await Task.sleep(for: .seconds(60))
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        #expect(ended, "the server still runs after every connection was drained")
        #expect(RawSocket.readToEnd(subscriber, within: 1).isEmpty, "the half-closed subscriber was closed")
        #expect(!FileManager.default.fileExists(atPath: path), "the socket file is removed once every connection closed")
    }

    @Test(.timeLimit(.minutes(1))) func aRequestStillInFlightWhenTheDrainTimesOutIsClosed() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-drain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("control.sock").path
        let arrived = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        defer { release.continuation.finish() }
        let listening = AsyncStream<Void>.makeStream()
        let server = ControlServer(
            path: path, idleTimeout: nil, handler: GatedHandler(arrived: arrived.continuation, release: release.stream),
            logger: Logger(label: "test"), drainTimeout: .milliseconds(200)
        ) { listening.continuation.finish() }
        let running = Task { try await server.run() }
        for await _ in listening.stream {}
        // A `say` whose work never ends while the daemon stops.
        let waiting = Thread.detachNewThreadWithResult {
            (try? ControlClient(path: path, timeout: .seconds(600)).call(RawRequest(type: "say", data: ["speaker": .string("a"), "text": .string("hola")]))) == nil
        }
        var requests = arrived.stream.makeAsyncIterator()
        _ = await requests.next()
        server.drain()
        #expect(await waiting.value, "the connection was closed without a reply")
        try await running.value
    }
}
