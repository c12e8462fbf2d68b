import Foundation
import ParleyAudio
import ParleyCore
import Synchronization

/// A microphone the test speaks into, period by period: `speech(ms:)`, `silence(ms:)`,
/// `fail()`. The capture loop blocks in `read()` until the test gives it audio, like a real
/// device waiting for its next period, so the test decides exactly what is heard when.
///
/// The microphone is the test's handle (Sendable); `source()` makes the `CaptureSource` the
/// conversation opens, and reopens after a pause or a lost device.
public final class ScriptedMicrophone: Sendable {
    /// One 20 ms period at the capture rate, as a live device delivers it.
    public static let period = captureSampleRate / 50
    /// The level of scripted speech (about -18 dBFS) and of silence (about -70 dBFS).
    public static let speechAmplitude: Int16 = 4000
    public static let silenceAmplitude: Int16 = 10

    private enum Step {
        case frame([Int16])
        case fail(AudioError)
        case end
    }

    private struct State {
        var steps: [Step] = []
        var reading = false
        var opens = 0
        var closes = 0
        /// Periods the capture loop has taken.
        var delivered = 0
        var failNextOpens = 0
    }

    private let state = Gate(State())
    public let isRealTime: Bool
    /// Whether it hears what Parley plays (`AudioCapture.hearsPlayback`): a microphone does.
    public let hearsPlayback: Bool

    /// `isRealTime: false` behaves like a recording: the conversation waits for each turn.
    /// `hearsPlayback: false`, like a recording too: nothing is skipped after Parley speaks.
    public init(isRealTime: Bool = true, hearsPlayback: Bool = true) {
        self.isRealTime = isRealTime
        self.hearsPlayback = hearsPlayback
    }

    /// The capture source to give the conversation.
    public func source() -> CaptureSource {
        CaptureSource(first: ScriptedCapture(self)) { () throws(AudioError) in try self.reopen() }
    }

    // MARK: - What the test says

    /// Speech: a loud tone (the in-memory recognizer does not listen to it; the endpointer does).
    public func speech(ms: Int) { append(ms: ms, amplitude: Self.speechAmplitude) }

    /// Near silence.
    public func silence(ms: Int) { append(ms: ms, amplitude: Self.silenceAmplitude) }

    /// Silence and speech in turn, starting with silence: `[200, 700, 1_000, 600, 2_000]` is a
    /// sentence with a one-second pause in it, and the silence that ends it.
    public func alternate(ms durations: [Int]) {
        for (index, ms) in durations.enumerated() {
            if index.isMultiple(of: 2) { silence(ms: ms) } else { speech(ms: ms) }
        }
    }

    /// The device fails on the next read; the next `times` reopens fail too.
    public func fail(reopensFailing times: Int = 0) {
        state.withLock {
            $0.steps.append(.fail(AudioError(.deviceLost, "the scripted microphone was unplugged")))
            $0.failNextOpens = times
        }
    }

    /// The end of the recording: `read()` returns no more audio.
    public func end() {
        state.withLock { $0.steps.append(.end) }
    }

    /// Waits until the capture loop has taken everything given so far and handled it (it is
    /// back in `read()`, or the device is closed). Returns false after `seconds`.
    @discardableResult
    public func drained(seconds: TimeInterval = TestConversation.patience) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            let idle = state.withLock { $0.steps.isEmpty && ($0.reading || $0.opens == $0.closes) }
            if idle { return true }
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }

    public var opens: Int { state.withLock { $0.opens } }
    public var closes: Int { state.withLock { $0.closes } }
    /// Periods the capture loop has read.
    public var delivered: Int { state.withLock { $0.delivered } }

    private func append(ms: Int, amplitude: Int16) {
        let periods = max(1, ms / 20)
        let frame = (0..<Self.period).map { index in index % 2 == 0 ? amplitude : -amplitude }
        state.withLock { $0.steps.append(contentsOf: Array(repeating: .frame(frame), count: periods)) }
    }

    // MARK: - What the capture loop sees

    fileprivate func opened() { state.withLock { $0.opens += 1 } }

    private func reopen() throws(AudioError) -> any AudioCapture {
        let refuse = state.withLock { state -> Bool in
            guard state.failNextOpens > 0 else { return false }
            state.failNextOpens -= 1
            return true
        }
        if refuse { throw AudioError(.deviceLost, "the scripted microphone is still unplugged") }
        return ScriptedCapture(self)
    }

    fileprivate func read() throws(AudioError) -> [Int16] {
        let step = state.wait { state -> Step? in
            guard !state.steps.isEmpty else {
                state.reading = true
                return nil
            }
            state.reading = false
            let step = state.steps.removeFirst()
            if case .frame = step { state.delivered += 1 }
            return step
        }
        switch step {
        case .frame(let samples): return samples
        case .fail(let error): throw error
        case .end: return []
        }
    }

    fileprivate func closed() {
        state.withLock {
            $0.closes += 1
            $0.reading = false
        }
    }

    /// Wakes a blocked read, so a closing or stopping loop sees the change.
    public func nudge() { state.wake() }
}

/// One opening of a `ScriptedMicrophone`.
final class ScriptedCapture: AudioCapture {
    private let microphone: ScriptedMicrophone
    let sampleRate = captureSampleRate
    var isRealTime: Bool { microphone.isRealTime }
    var hearsPlayback: Bool { microphone.hearsPlayback }

    init(_ microphone: ScriptedMicrophone) {
        self.microphone = microphone
        microphone.opened()
    }

    func read() throws(AudioError) -> [Int16] { try microphone.read() }
    func close() { microphone.closed() }
}
