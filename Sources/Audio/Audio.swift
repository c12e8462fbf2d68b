/// The audio contracts every other domain builds on: a chunk of samples with its position on
/// the capture timeline, and the two engines that move audio in and out of the machine.

// The shared vocabulary (`Speaker`, `ConversationMode`, `SampleTime`); users import it themselves.
public import ParleyCore

/// Converts milliseconds into samples at `rate`.
@inlinable
public func samples(ms: Int, rate: Int = captureSampleRate) -> SampleTime {
    SampleTime(ms) * SampleTime(rate) / 1000
}

/// Converts samples at `rate` into milliseconds.
@inlinable
public func milliseconds(_ samples: SampleTime, rate: Int = captureSampleRate) -> Int {
    Int(samples * 1000 / SampleTime(rate))
}

/// A failure of an audio device or file, with what to do about it.
public struct AudioError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        case open, configure, io, deviceLost, format
    }
    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// Where captured audio comes from: a microphone or a recording.
///
/// A capture is owned by the one thread that reads it; it is not shared.
public protocol AudioCapture: AnyObject {
    /// The rate of the samples `read` returns.
    var sampleRate: Int { get }
    /// True for a live device whose clock runs on its own; false for a recording, which the
    /// pipeline may pace (nothing is lost by waiting for it).
    var isRealTime: Bool { get }
    /// Whether what Parley plays can reach this capture: a microphone in the room hears it, so
    /// the audio captured while Parley speaks (and an echo tail after) is not heard as a person.
    /// A recording never contains Parley's voice (its replies go to a file), so none of it is
    /// skipped: every word in it is heard.
    var hearsPlayback: Bool { get }
    /// Blocks until the next period is available and returns it; an empty array at the end of
    /// a recording. Recoverable faults (overruns) are recovered inside.
    func read() throws(AudioError) -> [Int16]
    /// Releases the device or file.
    func close()
}

extension AudioCapture {
    /// A live device: it hears the loudspeaker.
    public var hearsPlayback: Bool { true }
}

/// Where synthesized speech goes: a loudspeaker or a recording.
///
/// Playback is driven from one worker at a time.
public protocol AudioPlayback: AnyObject {
    /// The rate the device was opened at.
    var sampleRate: Int { get }
    /// Queues samples for playback; blocks while the device buffer is full.
    func write(_ samples: [Int16]) throws(AudioError)
    /// Blocks until everything written has been played.
    func drain() throws(AudioError)
    /// Drops what is queued and not yet played (`stop`), and gets ready for the next utterance.
    func discard()
    /// Releases the device or file.
    func close()
    /// The sound system may have restarted (the microphone came back after a loss): a device
    /// that can be opened again is, before the next utterance, rather than found stale then.
    func renew()
}

extension AudioPlayback {
    /// Most devices have nothing to renew.
    public func renew() {}
}
