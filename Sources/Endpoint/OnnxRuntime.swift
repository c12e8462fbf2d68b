#if canImport(Glibc)
    import Glibc
#endif

/// The few functions of ONNX Runtime's C API that the voice-activity detector calls.
///
/// ONNX Runtime comes with libmoonshine (the `moonshine-voice` wheel bundles it as a library of
/// its own, which libmoonshine loads). The wheel ships no header, so this declares what is used:
/// `OrtGetApiBase` gives a table of function pointers (`OrtApi`) whose order is fixed and only
/// ever appended to, so the indices below hold for every version from the one requested on.
struct OnnxRuntime: @unchecked Sendable {  // a table of C function pointers, read-only once loaded
    // OrtStatus*, OrtEnv*, OrtSessionOptions*, OrtSession*, OrtMemoryInfo*, OrtValue* are opaque.
    typealias Status = OpaquePointer
    typealias GetErrorMessage = @convention(c) (Status?) -> UnsafePointer<CChar>?
    typealias CreateEnv = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?) -> Status?
    typealias CreateSessionFromArray = @convention(c) (
        OpaquePointer?, UnsafeRawPointer?, Int, OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?
    ) -> Status?
    typealias Run = @convention(c) (
        OpaquePointer?, OpaquePointer?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<OpaquePointer?>?, Int,
        UnsafePointer<UnsafePointer<CChar>?>?, Int, UnsafeMutablePointer<OpaquePointer?>?
    ) -> Status?
    typealias CreateSessionOptions = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Status?
    typealias SetThreads = @convention(c) (OpaquePointer?, Int32) -> Status?
    typealias CreateTensorWithData = @convention(c) (
        OpaquePointer?, UnsafeMutableRawPointer?, Int, UnsafePointer<Int64>?, Int, Int32, UnsafeMutablePointer<OpaquePointer?>?
    ) -> Status?
    typealias GetTensorMutableData = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Status?
    typealias CreateCpuMemoryInfo = @convention(c) (Int32, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Status?
    typealias Release = @convention(c) (OpaquePointer?) -> Void

    /// Indices in `OrtApi` (onnxruntime_c_api.h).
    enum Index: Int {
        case getErrorMessage = 2, createEnv = 3, createSessionFromArray = 8, run = 9, createSessionOptions = 10
        case setIntraOpNumThreads = 24, setInterOpNumThreads = 25
        case createTensorWithDataAsOrtValue = 49, getTensorMutableData = 51, createCpuMemoryInfo = 69
        case releaseEnv = 92, releaseStatus = 93, releaseMemoryInfo = 94, releaseSession = 95, releaseValue = 96
        case releaseSessionOptions = 100
    }

    /// The API version asked for: old enough for any ONNX Runtime Moonshine ships, new enough
    /// for every index above.
    static let apiVersion: UInt32 = 16
    /// ONNXTensorElementDataType, OrtLoggingLevel, OrtAllocatorType, OrtMemType.
    static let float: Int32 = 1, int64: Int32 = 7, loggingError: Int32 = 3, deviceAllocator: Int32 = 0, memTypeDefault: Int32 = 0

    let errorMessage: GetErrorMessage
    let createEnv: CreateEnv
    let createSessionFromArray: CreateSessionFromArray
    let run: Run
    let createSessionOptions: CreateSessionOptions
    let setIntraOpNumThreads: SetThreads
    let setInterOpNumThreads: SetThreads
    let createTensor: CreateTensorWithData
    let tensorData: GetTensorMutableData
    let createCpuMemoryInfo: CreateCpuMemoryInfo
    let releaseEnv: Release
    let releaseStatus: Release
    let releaseMemoryInfo: Release
    let releaseSession: Release
    let releaseValue: Release
    let releaseSessionOptions: Release

    /// The API of the ONNX Runtime that `library` (libmoonshine.so) loads, or why there is none.
    static func open(_ library: String) -> Result<(OnnxRuntime, handle: UnsafeMutableRawPointer), VoiceActivityError> {
        guard let handle = dlopen(library, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown"
            return .failure(VoiceActivityError("cannot open \(library): \(reason) (run `make engines`)"))
        }
        typealias GetApiBase = @convention(c) () -> UnsafeRawPointer?
        typealias GetApi = @convention(c) (UInt32) -> UnsafeRawPointer?
        // dlsym on the handle also searches the libraries it loaded: ONNX Runtime among them.
        guard let symbol = dlsym(handle, "OrtGetApiBase"),
            let base = unsafeBitCast(symbol, to: GetApiBase.self)(),
            let api = unsafeBitCast(base.load(as: UnsafeRawPointer.self), to: GetApi.self)(apiVersion)
        else {
            dlclose(handle)
            return .failure(VoiceActivityError("\(library) brings no ONNX Runtime of API version \(apiVersion) or later (run `make engines`)"))
        }
        func function<T>(_ index: Index, as type: T.Type) -> T {
            unsafeBitCast(api.load(fromByteOffset: index.rawValue * MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self), to: type)
        }
        let runtime = OnnxRuntime(
            errorMessage: function(.getErrorMessage, as: GetErrorMessage.self),
            createEnv: function(.createEnv, as: CreateEnv.self),
            createSessionFromArray: function(.createSessionFromArray, as: CreateSessionFromArray.self),
            run: function(.run, as: Run.self),
            createSessionOptions: function(.createSessionOptions, as: CreateSessionOptions.self),
            setIntraOpNumThreads: function(.setIntraOpNumThreads, as: SetThreads.self),
            setInterOpNumThreads: function(.setInterOpNumThreads, as: SetThreads.self),
            createTensor: function(.createTensorWithDataAsOrtValue, as: CreateTensorWithData.self),
            tensorData: function(.getTensorMutableData, as: GetTensorMutableData.self),
            createCpuMemoryInfo: function(.createCpuMemoryInfo, as: CreateCpuMemoryInfo.self),
            releaseEnv: function(.releaseEnv, as: Release.self),
            releaseStatus: function(.releaseStatus, as: Release.self),
            releaseMemoryInfo: function(.releaseMemoryInfo, as: Release.self),
            releaseSession: function(.releaseSession, as: Release.self),
            releaseValue: function(.releaseValue, as: Release.self),
            releaseSessionOptions: function(.releaseSessionOptions, as: Release.self))
        return .success((runtime, handle))
    }

    /// Throws the status's message (and releases it) when a call failed.
    func check(_ status: Status?, _ what: String) throws(VoiceActivityError) {
        guard let status else { return }
        let message = errorMessage(status).map { String(cString: $0) } ?? "unknown error"
        releaseStatus(status)
        throw VoiceActivityError("ONNX Runtime could not \(what): \(message)")
    }
}
