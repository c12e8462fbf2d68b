/// Playback that survives its device going away (a USB speaker unplugged, a sound server
/// restarted): a chunk that fails is played again on a freshly opened device (once), and
/// `renew` replaces the device before the next utterance when the sound system came back.
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

    /// Writes the chunk; if the device fails, the chunk is written once more on a fresh one,
    /// so a stale device costs no speech.
    public func write(_ samples: [Int16]) throws(AudioError) {
        do {
            try using { device throws(AudioError) in try device.write(samples) }
        } catch {
            guard !closed else { throw error }
            try using { device throws(AudioError) in try device.write(samples) }
        }
    }

    public func renew() {
        guard !closed, let stale = device else { return }
        stale.close()
        device = nil
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
