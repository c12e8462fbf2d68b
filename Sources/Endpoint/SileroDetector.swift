import ParleyCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Silero VAD, run by ONNX Runtime in process.
///
/// libmoonshine carries the model (`silero_vad_onnx`, in ONNX Runtime's format) and the runtime
/// that runs it, so nothing more is installed. It judges 32 ms (512 samples) at a time, with the
/// 64 samples before them as context and its recurrent state carried from one window to the
/// next; a period gets the judgement of the latest whole window. One window costs well under a
/// millisecond on one thread, so it runs on the capture thread and never waits for anything;
/// quiet periods are skipped (`skip`), so a quiet room costs next to nothing. The model is
/// recurrent and made for a stream: when judging starts again after skipped periods, it first
/// hears the last `runUpSamples` of them, as it would have (`runUp`). Given only the loud
/// periods, stitched together, it heard no voice at all in a person who spoke 28-30 dB over a
/// quiet room (docs/benchmarks.md, "Silero hears the room before a voice").
public final class SileroDetector: VoiceActivityDetector {
    public let name = "silero"
    /// Samples per judgement and of context before them, at 16 kHz.
    static let window = 512
    static let context = 64
    static let stateCount = 2 * 1 * 128
    static let inputCount = context + window

    private let runtime: OnnxRuntime
    private let resources: Mutex<Resources>

    /// The ONNX Runtime objects and the audio carried between calls; touched under the lock only.
    private struct Resources: ~Copyable {
        var env: OpaquePointer?
        var session: OpaquePointer?
        var memory: OpaquePointer?
        var pending: [Float] = []
        /// The model's inputs, which its tensors wrap: context and window, recurrent state, rate.
        let input = UnsafeMutablePointer<Float>.allocate(capacity: SileroDetector.inputCount)
        let state = UnsafeMutablePointer<Float>.allocate(capacity: SileroDetector.stateCount)
        let rate = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        var latest: Float?
        /// Samples skipped since the last judgement.
        var skipped = 0
        /// The last skipped audio (up to twice `runUpSamples`), whose last `runUpSamples` are heard
        /// before the next period judged.
        var runUp: [Float] = []
        /// The model's input and output names, as C strings (freed in `deinit`).
        let inputNames = ["input", "state", "sr"].map(Self.cString)
        let outputNames = ["output", "stateN"].map(Self.cString)
        var library: UnsafeMutableRawPointer?

        static func cString(_ name: String) -> UnsafePointer<CChar>? { strdup(name).map { UnsafePointer($0) } }
    }

    /// Loads the model that libmoonshine at `library` carries.
    public init(library: String) throws(VoiceActivityError) {
        let (runtime, handle) = try OnnxRuntime.open(library).get()
        guard let modelSymbol = dlsym(handle, "silero_vad_onnx"), let lengthSymbol = dlsym(handle, "silero_vad_onnx_len") else {
            dlclose(handle)
            throw VoiceActivityError("\(library) does not carry the Silero model; install moonshine-voice 0.1.5's (`make engines`)")
        }
        let length = Int(lengthSymbol.load(as: UInt32.self))
        var env: OpaquePointer?
        var options: OpaquePointer?
        var session: OpaquePointer?
        var memory: OpaquePointer?
        do throws(VoiceActivityError) {
            try runtime.check(runtime.createEnv(OnnxRuntime.loggingError, "parley-vad", &env), "start")
            try runtime.check(runtime.createSessionOptions(&options), "make session options")
            // A small model: one thread, and no pool of threads beside it.
            try runtime.check(runtime.setIntraOpNumThreads(options, 1), "set its threads")
            try runtime.check(runtime.setInterOpNumThreads(options, 1), "set its threads")
            try runtime.check(runtime.createSessionFromArray(env, UnsafeRawPointer(modelSymbol), length, options, &session), "load Silero VAD")
            try runtime.check(runtime.createCpuMemoryInfo(OnnxRuntime.deviceAllocator, OnnxRuntime.memTypeDefault, &memory), "describe memory")
        } catch {
            if let options { runtime.releaseSessionOptions(options) }
            if let session { runtime.releaseSession(session) }
            if let env { runtime.releaseEnv(env) }
            dlclose(handle)
            throw error
        }
        runtime.releaseSessionOptions(options)
        self.runtime = runtime
        let resources = Resources(env: env, session: session, memory: memory, library: handle)
        resources.input.initialize(repeating: 0, count: Self.inputCount)
        resources.state.initialize(repeating: 0, count: Self.stateCount)
        resources.rate.initialize(to: Int64(captureSampleRate))
        self.resources = Mutex(resources)
    }

    deinit {
        resources.withLock { resources in
            runtime.releaseMemoryInfo(resources.memory)
            runtime.releaseSession(resources.session)
            runtime.releaseEnv(resources.env)
            for name in resources.inputNames + resources.outputNames { free(UnsafeMutableRawPointer(mutating: name)) }
            if let library = resources.library { dlclose(library) }
            resources.input.deallocate()
            resources.state.deallocate()
            resources.rate.deallocate()
        }
    }

    public func speechProbability(after frame: [Int16]) throws(VoiceActivityError) -> Float? {
        try resources.withLock { (resources: inout Resources) throws(VoiceActivityError) -> Float? in
            resources.skipped = 0
            if !resources.runUp.isEmpty {
                resources.pending = Array(resources.runUp.suffix(Self.runUpSamples))
                resources.runUp.removeAll(keepingCapacity: true)
            }
            resources.pending.append(contentsOf: frame.lazy.map { Float($0) / 32_768 })
            while resources.pending.count >= Self.window {
                // The input: the last 64 samples of the window before, then this window.
                for index in 0..<Self.context { resources.input[index] = resources.input[Self.inputCount - Self.context + index] }
                for index in 0..<Self.window { resources.input[Self.context + index] = resources.pending[index] }
                resources.pending.removeFirst(Self.window)
                resources.latest = try judge(&resources)
            }
            return resources.latest
        }
    }

    /// After this much skipped audio, judging starts afresh (zero state): the recurrent state
    /// would remember a room that has moved on.
    static let forgetAfterSamples = captureSampleRate

    /// How much of the skipped audio the model hears before the next period it judges: 0.5 s.
    /// With 0.25 s it still missed most of that person's voice (bench/silero-run-up.py).
    static let runUpSamples = captureSampleRate / 2

    public func skip(_ frame: [Int16], room: Bool) {
        resources.withLock { resources in
            if room {
                if !resources.pending.isEmpty {
                    resources.runUp = resources.pending
                    resources.pending.removeAll(keepingCapacity: true)
                }
                resources.runUp.append(contentsOf: frame.lazy.map { Float($0) / 32_768 })
                // Trimmed in blocks, not at every period: a quiet room's periods stay cheap.
                if resources.runUp.count > 2 * Self.runUpSamples { resources.runUp.removeFirst(resources.runUp.count - Self.runUpSamples) }
            } else {
                // Parley's own voice (or a paused conversation) is not the room a person starts from.
                resources.pending.removeAll(keepingCapacity: true)
                resources.runUp.removeAll(keepingCapacity: true)
            }
            resources.skipped += frame.count
            if resources.skipped >= Self.forgetAfterSamples, resources.latest != nil { Self.forget(&resources) }
        }
    }

    public func reset() {
        resources.withLock { resources in
            Self.forget(&resources)
            resources.runUp.removeAll()
        }
    }

    /// Starts afresh: zero state, no pending audio (the run-up, the room just before, is kept).
    private static func forget(_ resources: inout Resources) {
        resources.pending.removeAll()
        resources.input.update(repeating: 0, count: Self.inputCount)
        resources.state.update(repeating: 0, count: Self.stateCount)
        resources.latest = nil
    }

    /// Runs the model on `resources.input`, carries its state, returns its probability.
    private func judge(_ resources: inout Resources) throws(VoiceActivityError) -> Float {
        let rt = runtime
        let memory = resources.memory
        var values: [OpaquePointer?] = []
        var outputs: [OpaquePointer?] = [nil, nil]
        defer {
            for value in values + outputs { if let value { rt.releaseValue(value) } }
        }
        func tensor(_ data: UnsafeMutableRawPointer, bytes: Int, shape: [Int64], type: Int32) throws(VoiceActivityError) {
            var value: OpaquePointer?
            try rt.check(rt.createTensor(memory, data, bytes, shape, shape.count, type, &value), "make a tensor")
            values.append(value)
        }
        let float = MemoryLayout<Float>.stride
        try tensor(resources.input, bytes: Self.inputCount * float, shape: [1, Int64(Self.inputCount)], type: OnnxRuntime.float)
        try tensor(resources.state, bytes: Self.stateCount * float, shape: [2, 1, 128], type: OnnxRuntime.float)
        try tensor(resources.rate, bytes: MemoryLayout<Int64>.stride, shape: [], type: OnnxRuntime.int64)
        try rt.check(rt.run(resources.session, nil, resources.inputNames, values, 3, resources.outputNames, 2, &outputs), "run Silero VAD")
        var probability: UnsafeMutableRawPointer?
        var carried: UnsafeMutableRawPointer?
        try rt.check(rt.tensorData(outputs[0], &probability), "read its output")
        try rt.check(rt.tensorData(outputs[1], &carried), "read its state")
        guard let probability, let carried else { throw VoiceActivityError("Silero VAD gave no output") }
        UnsafeMutableRawPointer(resources.state).copyMemory(from: carried, byteCount: Self.stateCount * float)
        return probability.load(as: Float.self)
    }
}
