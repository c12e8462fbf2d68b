import ParleyAudio
import Synchronization
import Testing

/// Playback across a sound server restart: the stale device is replaced, and no chunk is lost.
@Suite("Reopening playback")
struct ReopeningPlaybackTests {
    /// Devices as a sound server hands them out: each one fails every write once `stale`.
    final class Server: Sendable {
        struct State {
            var opened = 0
            var closed = 0
            var stale: Set<Int> = []
            var played: [Int16] = []
        }
        let state = Mutex(State())

        func open() -> any AudioPlayback {
            let id = state.withLock { state in
                state.opened += 1
                return state.opened
            }
            return Device(id: id, server: self)
        }

        /// A restart: every device opened so far fails from now on.
        func restart() { state.withLock { $0.stale = Set(1...$0.opened) } }
    }

    final class Device: AudioPlayback {
        let id: Int
        let server: Server
        let sampleRate = 22_050
        init(id: Int, server: Server) {
            self.id = id
            self.server = server
        }
        func write(_ samples: [Int16]) throws(AudioError) {
            let stale = server.state.withLock { state in
                if !state.stale.contains(id) { state.played += samples }
                return state.stale.contains(id)
            }
            if stale { throw AudioError(.io, "the sound server went away") }
        }
        func drain() throws(AudioError) {}
        func discard() {}
        func close() { server.state.withLock { $0.closed += 1 } }
    }

    func playback(on server: Server) -> ReopeningPlayback {
        ReopeningPlayback(device: server.open()) { () throws(AudioError) in server.open() }
    }

    @Test func aChunkThatFailsOnAStaleDeviceIsPlayedOnAFreshOne() throws {
        let server = Server()
        let playback = playback(on: server)
        try playback.write([1, 2])
        server.restart()
        try playback.write([3, 4])
        let state = server.state.withLock { $0 }
        #expect(state.played == [1, 2, 3, 4], "no chunk lost")
        #expect(state.opened == 2 && state.closed == 1)
    }

    @Test func renewReplacesTheDeviceBeforeTheNextUtterance() throws {
        let server = Server()
        let playback = playback(on: server)
        try playback.write([1])
        playback.renew()
        #expect(server.state.withLock { $0.closed } == 1)
        try playback.write([2])
        #expect(server.state.withLock { $0.opened } == 2)
        #expect(server.state.withLock { $0.played } == [1, 2])
    }

    @Test func aDeviceThatStaysGoneFailsTheChunkWithItsError() throws {
        let server = Server()
        let playback = ReopeningPlayback(device: server.open()) { () throws(AudioError) in
            throw AudioError(.open, "no sound server")
        }
        server.restart()
        #expect(throws: AudioError.self) { try playback.write([1]) }
        playback.close()
        #expect(throws: AudioError.self) { try playback.write([1]) }
    }
}
