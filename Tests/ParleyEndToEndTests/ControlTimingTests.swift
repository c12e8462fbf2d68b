import Foundation
import ParleyControl
import ParleyControlSocket
import ParleyCore
import ParleyProtocol
import ParleyTesting
import Synchronization
import Testing

/// The control socket's idle timeout and stuck replies, against a real socket and an in-memory
/// handler, on a clock the test moves: a 30 s timeout is tested exactly, and takes no time.
/// (ControlLimitsTests checks, once, that a live parleyd applies `idle_timeout_seconds`.)
@Suite("Control socket timing", .blocksThreads)
struct ControlTimingTests {
    static let timeout = Duration.seconds(30)
    /// How long a read waits in real time before the test fails (a blocking read is not ended
    /// by the test's time limit).
    static let wait = Duration.seconds(10)

    /// Runs `body` against a server on a manual clock with the shipped idle timeout (and a long
    /// drain), then drains the server and waits until it has stopped.
    private func withServer(_ body: (ManualClock, ControlDrainTests.Running) async throws -> Void) async throws {
        let manual = ManualClock()
        let rig = try await ControlDrainTests.Running.start(idleTimeout: Self.timeout, drainTimeout: .seconds(600), clock: ParleyClock(manual))
        defer { rig.cleanUp() }
        try await body(manual, rig)
        rig.server.drain()
        try await rig.task.value
    }

    /// Waits, in real time (at most `wait`), until the server has finished writing every reply.
    private func waitUntilIdle(_ rig: ControlDrainTests.Running) async throws {
        let deadline = ContinuousClock.now + Self.wait
        while rig.server.busyConnections > 0 {
            try #require(ContinuousClock.now < deadline, "a reply the client read was still being written after \(Self.wait)")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Reads the `idle_timeout` error `client` is told, then that the connection closed.
    private func expectToldIdleAndClosed(_ client: ControlClient) throws {
        let told = try #require(try client.readLine(within: Self.wait))
        #expect(try JSONDecoder().decode(ErrorReply.self, from: told).data.code == "idle_timeout")
        #expect(try client.readLine(within: Self.wait) == nil, "then closed")
    }

    @Test(.timeLimit(.minutes(1))) func aConnectionThatNeverAsksIsToldAndClosedWhenTheTimeoutPasses() async throws {
        try await withServer { manual, rig in
            let silent = try ControlClient(path: rig.path, timeout: .seconds(10))
            // Its watchdog sleeps until 30 s after it connected.
            #expect(await manual.nextSleep() == Self.timeout)
            manual.advance(by: Self.timeout - .milliseconds(1))
            #expect(manual.sleepers == 1, "a millisecond short of the timeout, the watchdog sleeps on")
            manual.advance(by: .milliseconds(1))
            try expectToldIdleAndClosed(silent)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRequestStartsTheIdleClockAgain() async throws {
        try await withServer { manual, rig in
            let client = try ControlClient(path: rig.path, timeout: .seconds(10))
            #expect(await manual.nextSleep() == Self.timeout)
            manual.advance(by: .seconds(10))
            #expect(try client.call(RawRequest(type: "status")).count > 0)
            // The client has the reply before the server has counted its write done; moved on
            // before that, the clock would find the reply unwritten for 30 s (stuck) and close
            // the connection without a word. On a loaded machine that happened.
            try await waitUntilIdle(rig)
            // At 30 s it has been idle for 20 s only: the watchdog sleeps until 40 s.
            manual.advance(by: .seconds(20))
            #expect(await manual.nextSleep() == .seconds(10))
            manual.advance(by: .seconds(10))
            try expectToldIdleAndClosed(client)
        }
    }

    @Test(.timeLimit(.minutes(1))) func aSubscriberIsNeverIdle() async throws {
        try await withServer { manual, rig in
            let subscriber = try ControlClient(path: rig.path, timeout: .seconds(10))
            _ = try subscriber.call(RawRequest(type: "subscribe"))
            // Answered after the subscription was taken (requests are served in order).
            _ = try subscriber.call(RawRequest(type: "status"))
            manual.advance(by: .seconds(3600))
            rig.bus.publish("state", StateEvent(state: "listening", speaker: "a"))
            let event = try #require(try subscriber.readLine(within: Self.wait))
            #expect(String(decoding: event, as: UTF8.self).contains(#""type":"state""#), "an hour on, it still gets events")
        }
    }

    /// A client that sends requests and reads no reply: once a reply has waited the timeout to
    /// be written, the connection is closed.
    @Test(.timeLimit(.minutes(1))) func aClientThatReadsNoReplyIsClosedWhenAReplyWaitedTheTimeout() async throws {
        try await withServer { manual, rig in
            let deaf = try #require(RawSocket.connect(rig.path, nonBlocking: false).fd)
            defer { close(deaf) }
            _ = fcntl(deaf, F_SETFL, fcntl(deaf, F_GETFL) | O_NONBLOCK)
            // Many requests a send, so the replies outgrow what the kernel buffers for the client.
            let request = Array(String(repeating: #"{"type":"status"}"# + "\n", count: 2000).utf8)
            var sent = 0
            while sent < 10_000 {
                let written = request.withUnsafeBytes { Glibc.send(deaf, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written < 0 { break }
                sent += 1
            }
            #expect(errno == EAGAIN, "\(String(cString: strerror(errno))) after \(sent) requests")
            // Each step moves the clock a timeout on; the reply stuck since the last step has then
            // waited that long. (The poll is only a guard against a hung server.)
            var hangup = pollfd(fd: deaf, events: 0, revents: 0)  // POLLHUP and POLLERR are always reported
            for _ in 0..<100 where hangup.revents & Int16(POLLHUP | POLLERR) == 0 {
                manual.advance(by: Self.timeout)
                _ = poll(&hangup, 1, 100)
            }
            #expect(hangup.revents & Int16(POLLHUP | POLLERR) != 0, "the connection that reads nothing was kept")
        }
    }
}
