/// Playback that survives its device going away (a USB speaker unplugged, a sound server
/// restarted): a failed device is closed, and the next utterance opens a fresh one.
public final class ReopeningPlayback: AudioPlayback {
    private var device: (any AudioPlayback)?
    private let open: () throws(AudioError) -> any AudioPlayback
    private var closed = false
    public let sampleRate: Int

    /// `device` is the one opened at start-up; `open` makes a new one at the same rate.
    public init(device: any AudioPlayback, open: @escaping () throws(AudioError) -> any AudioPlayback) {
        self.device = device
        self.open = open
        self.sampleRate = device.sampleRate
    }

    private func current() throws(AudioError) -> any AudioPlayback {
        guard !closed else { throw AudioError(.io, "playback is closed") }
        if let device { return device }
        let fresh = try open()
        device = fresh
        return fresh
    }

    /// Runs `operation` on the device; a device that fails is dropped so the next call reopens.
    private func using(_ operation: (any AudioPlayback) throws(AudioError) -> Void) throws(AudioError) {
        let target = try current()
        do {
            try operation(target)
        } catch {
            target.close()
            device = nil
            throw error
        }
    }

    public func write(_ samples: [Int16]) throws(AudioError) {
        try using { device throws(AudioError) in try device.write(samples) }
    }

    public func drain() throws(AudioError) {
        try using { device throws(AudioError) in try device.drain() }
    }

    public func discard() {
        device?.discard()
    }

    public func close() {
        closed = true
        device?.close()
        device = nil
    }
}
