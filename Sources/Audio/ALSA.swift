import CALSA
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// Opens and configures an ALSA PCM for 16-bit mono interleaved audio.
///
/// Rate conversion is left to ALSA's plug layer (`set_rate_resample`), so a device that cannot
/// take the rate natively still works through "default", "plughw:" or PulseAudio.
enum ALSADevice {
    /// alsa-lib's own stderr diagnostics are silenced once; Parley's errors say it all.
    private static let quiet: Void = parley_alsa_quiet()

    static func open(
        name: String, stream: snd_pcm_stream_t, rate: Int, periodFrames: Int, bufferFrames: Int
    ) throws(AudioError) -> (pcm: OpaquePointer, periodFrames: Int) {
        _ = quiet
        let role = stream == SND_PCM_STREAM_CAPTURE ? "capture" : "playback"
        var handle: OpaquePointer?
        // Opened non-blocking so a device held by another program answers -EBUSY at once
        // instead of hanging the caller; reads and writes block as usual afterwards.
        let openResult = snd_pcm_open(&handle, name, stream, SND_PCM_NONBLOCK)
        if openResult == 0, let pcm = handle { snd_pcm_nonblock(pcm, 0) }
        guard openResult >= 0, let pcm = handle else {
            throw AudioError(
                .open,
                "cannot open \(role) device \"\(name)\": \(describe(openResult)); "
                    + "list devices with `arecord -L` / `aplay -L` and set audio.\(role)_device")
        }
        do {
            let period = try configure(pcm, role: role, name: name, rate: rate, periodFrames: periodFrames, bufferFrames: bufferFrames)
            return (pcm, period)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
    }

    private static func configure(
        _ pcm: OpaquePointer, role: String, name: String, rate: Int, periodFrames: Int, bufferFrames: Int
    ) throws(AudioError) -> Int {
        var paramsHandle: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&paramsHandle) >= 0, let params = paramsHandle else {
            throw AudioError(.configure, "out of memory configuring \(role) device \"\(name)\"")
        }
        defer { snd_pcm_hw_params_free(params) }

        func check(_ result: Int32, _ what: String) throws(AudioError) {
            if result < 0 {
                throw AudioError(
                    .configure,
                    "\(role) device \"\(name)\" refused \(what): \(describe(result)); "
                        + "try a \"plughw:\" or \"default\" device, which convert formats")
            }
        }
        try check(snd_pcm_hw_params_any(pcm, params), "any configuration")
        try check(snd_pcm_hw_params_set_rate_resample(pcm, params, 1), "resampling")
        try check(snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access")
        try check(snd_pcm_hw_params_set_format(pcm, params, SND_PCM_FORMAT_S16_LE), "16-bit samples")
        try check(snd_pcm_hw_params_set_channels(pcm, params, 1), "mono")
        try check(snd_pcm_hw_params_set_rate(pcm, params, UInt32(rate), 0), "\(rate) Hz")
        var period = snd_pcm_uframes_t(periodFrames)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &direction), "a \(periodFrames)-frame period")
        var buffer = snd_pcm_uframes_t(bufferFrames)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, params, &buffer), "a \(bufferFrames)-frame buffer")
        try check(snd_pcm_hw_params(pcm, params), "the configuration")
        // Playback starts with the first period written, not once the buffer is full: a
        // translation is heard as soon as its first samples are made.
        var swHandle: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&swHandle) >= 0, let sw = swHandle else {
            throw AudioError(.configure, "out of memory configuring \(role) device \"\(name)\"")
        }
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), "its software parameters")
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, period), "a start threshold of one period")
        try check(snd_pcm_sw_params(pcm, sw), "the software parameters")
        try check(snd_pcm_prepare(pcm), "to start")
        return Int(period)
    }

    static func describe(_ code: Int32) -> String {
        guard let text = snd_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// Moves `count` frames with `step` (a readi or writei from a frame offset), recovering
    /// overruns, underruns and interrupted calls in place; a vanished device is an error.
    static func transfer(
        _ pcm: OpaquePointer, count: Int, role: String, name: String, step: (_ offset: Int, _ remaining: Int) -> Int
    ) throws(AudioError) {
        var done = 0
        while done < count {
            let result = step(done, count - done)
            if result >= 0 {
                done += result
                continue
            }
            let code = Int32(truncatingIfNeeded: result)
            if isDeviceLost(code) {
                throw AudioError(.deviceLost, "\(role) device \"\(name)\" is gone: \(describe(code))")
            }
            let recovered = snd_pcm_recover(pcm, code, 1)
            if recovered < 0 {
                throw AudioError(.io, "\(role) on \"\(name)\" failed: \(describe(recovered))")
            }
        }
    }

    /// True when an error code means the device itself has gone (unplugged).
    static func isDeviceLost(_ code: Int32) -> Bool {
        code == -ENODEV || code == -EBADFD || code == -EIO
    }
}

/// Captures 16 kHz mono audio from an ALSA device in periods of about 20 ms.
public final class ALSACapture: AudioCapture {
    /// How long a live device may deliver nothing before it counts as lost.
    static let stallMs: Int32 = 2_000
    private let pcm: OpaquePointer
    private let periodFrames: Int
    private let name: String
    private var closed = false
    public let sampleRate: Int
    public var isRealTime: Bool { true }

    /// Opens `device` (an ALSA PCM name such as "default" or "plughw:1,0").
    public init(device: String, sampleRate: Int = captureSampleRate, periodMs: Int = 20, bufferMs: Int = 500) throws(AudioError) {
        let opened = try ALSADevice.open(
            name: device, stream: SND_PCM_STREAM_CAPTURE, rate: sampleRate,
            periodFrames: sampleRate * periodMs / 1000, bufferFrames: sampleRate * bufferMs / 1000)
        self.pcm = opened.pcm
        self.periodFrames = opened.periodFrames
        self.sampleRate = sampleRate
        self.name = device
    }

    public func read() throws(AudioError) -> [Int16] {
        guard !closed else { throw AudioError(.io, "capture device \"\(name)\" is closed") }
        // A device that stops delivering (a sound server gone, a hung driver) must not hold
        // the capture loop, and with it shutdown and the watchdog, forever: no audio for
        // `stallMs` counts as a lost device, which is reopened with backoff.
        if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED { snd_pcm_start(pcm) }
        if snd_pcm_wait(pcm, Self.stallMs) == 0 {
            throw AudioError(.deviceLost, "no audio from capture device \"\(name)\" for \(Self.stallMs) ms; reopening it")
        }
        var buffer = [Int16](repeating: 0, count: periodFrames)
        try buffer.withUnsafeMutableBufferPointer { pointer throws(AudioError) in
            guard let base = pointer.baseAddress else { return }
            try ALSADevice.transfer(pcm, count: pointer.count, role: "capture", name: name) { offset, remaining in
                Int(snd_pcm_readi(pcm, base + offset, snd_pcm_uframes_t(remaining)))
            }
        }
        return buffer
    }

    public func close() {
        guard !closed else { return }
        closed = true
        snd_pcm_close(pcm)
    }

    deinit { close() }
}

/// Plays 16-bit mono audio on an ALSA device.
public final class ALSAPlayback: AudioPlayback {
    private let pcm: OpaquePointer
    private let name: String
    private var closed = false
    public let sampleRate: Int

    public init(device: String, sampleRate: Int, periodMs: Int = 20, bufferMs: Int = 200) throws(AudioError) {
        let opened = try ALSADevice.open(
            name: device, stream: SND_PCM_STREAM_PLAYBACK, rate: sampleRate,
            periodFrames: sampleRate * periodMs / 1000, bufferFrames: sampleRate * bufferMs / 1000)
        self.pcm = opened.pcm
        self.sampleRate = sampleRate
        self.name = device
    }

    public func write(_ samples: [Int16]) throws(AudioError) {
        guard !closed else { throw AudioError(.io, "playback device \"\(name)\" is closed") }
        try samples.withUnsafeBufferPointer { pointer throws(AudioError) in
            guard let base = pointer.baseAddress else { return }
            try ALSADevice.transfer(pcm, count: pointer.count, role: "playback", name: name) { offset, remaining in
                Int(snd_pcm_writei(pcm, base + offset, snd_pcm_uframes_t(remaining)))
            }
        }
    }

    public func drain() throws(AudioError) {
        guard !closed else { throw AudioError(.io, "playback device \"\(name)\" is closed") }
        let result = snd_pcm_drain(pcm)
        // After a drain the PCM is stopped; prepare it for the next utterance.
        let prepared = snd_pcm_prepare(pcm)
        if result < 0 && ALSADevice.isDeviceLost(result) {
            throw AudioError(.deviceLost, "playback device \"\(name)\" is gone: \(ALSADevice.describe(result))")
        }
        if prepared < 0 {
            throw AudioError(.io, "playback on \"\(name)\" cannot restart: \(ALSADevice.describe(prepared))")
        }
    }

    public func discard() {
        guard !closed else { return }
        snd_pcm_drop(pcm)
        snd_pcm_prepare(pcm)
    }

    public func close() {
        guard !closed else { return }
        closed = true
        snd_pcm_close(pcm)
    }

    deinit { close() }
}
