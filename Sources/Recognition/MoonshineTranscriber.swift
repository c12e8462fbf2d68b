import Foundation
import ParleyCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Moonshine tiny (English), through libmoonshine's C API, in the process that makes it:
/// parleyd's Moonshine worker (`parleyd worker moonshine`, served by `WyomingService`), so a
/// crash or a hang in the library costs the worker, not the daemon.
///
/// The library comes from the `moonshine-voice` wheel (`make engines`) and is opened with
/// `dlopen` (parleyd checks it at start): a machine without it still runs, on the engines it has. The
/// wheel ships no header, so the few functions used are declared here, as its Python binding
/// (moonshine_api.py) declares them.
public final class MoonshineTranscriber: UtteranceTranscriber {
    public let name = "moonshine-tiny"
    public let detectsLanguage = false
    private let api: API
    private let handle: Int32
    /// libmoonshine keeps per-transcriber state: one call at a time.
    private let busy = Mutex(())

    /// The header version the library's Python binding passes (MOONSHINE_HEADER_VERSION).
    static let headerVersion: Int32 = 30_000
    /// `model_arch` for Moonshine tiny.
    static let tinyArchitecture: UInt32 = 0

    /// The functions of libmoonshine that Parley calls.
    ///
    /// (`@unchecked Sendable`: C function pointers, which Swift does not mark Sendable; the table
    /// is read-only once loaded, and the transcriber calls them one utterance at a time: `busy`.)
    struct API: @unchecked Sendable {
        typealias Load = @convention(c) (UnsafePointer<CChar>?, UInt32, UnsafeRawPointer?, UInt64, Int32) -> Int32
        typealias Transcribe = @convention(c) (Int32, UnsafePointer<Float>?, UInt64, Int32, UInt32, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32
        typealias ErrorString = @convention(c) (Int32) -> UnsafePointer<CChar>?
        typealias Free = @convention(c) (Int32) -> Void
        let load: Load
        let transcribe: Transcribe
        let errorString: ErrorString
        let free: Free

        /// Opens the library at `path`; nil and why when it cannot be used.
        static func open(_ path: String) -> Result<API, RecognizerError> {
            guard let library = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
                let reason = dlerror().map { String(cString: $0) } ?? "unknown"
                return .failure(RecognizerError("cannot open \(path): \(reason) (run `make engines`)"))
            }
            func symbol<T>(_ name: String, as type: T.Type) -> T? {
                dlsym(library, name).map { unsafeBitCast($0, to: type) }
            }
            guard let load = symbol("moonshine_load_transcriber_from_files", as: Load.self),
                let transcribe = symbol("moonshine_transcribe_without_streaming", as: Transcribe.self),
                let errorString = symbol("moonshine_error_to_string", as: ErrorString.self),
                let free = symbol("moonshine_free_transcriber", as: Free.self)
            else {
                return .failure(RecognizerError("\(path) lacks the functions Parley calls; install moonshine-voice 0.1.5's (`make engines`)"))
            }
            return .success(API(load: load, transcribe: transcribe, errorString: errorString, free: free))
        }

        func describe(_ code: Int32) -> String {
            errorString(code).map { String(cString: $0) } ?? "error \(code)"
        }
    }

    /// transcript_word_t, transcript_line_t and transcript_t (64-bit layout: 24, 88 and 16 bytes).
    struct WordC {
        var text: UnsafeMutablePointer<CChar>?
        var start: Float
        var end: Float
        var confidence: Float
    }

    struct LineC {
        var text: UnsafeMutablePointer<CChar>?
        var audioData: UnsafeMutablePointer<Float>?
        var audioDataCount: Int
        var startTime: Float
        var duration: Float
        var id: UInt64
        var isComplete: Int8
        var isUpdated: Int8
        var isNew: Int8
        var hasTextChanged: Int8
        var haveSpeakersChanged: Int8
        var speakerSpans: UnsafeMutableRawPointer?
        var speakerSpanCount: UInt64
        var lastTranscriptionLatencyMs: UInt32
        var words: UnsafeMutablePointer<WordC>?
        var wordCount: UInt64
    }

    struct TranscriptC {
        var lines: UnsafeMutablePointer<LineC>?
        var lineCount: UInt64
    }

    /// Loads the model in `modelFolder` (encoder_model.ort, decoder_model_merged.ort,
    /// tokenizer.bin) with the library at `library`, the transcriber loaded with `options`.
    public init(library: String, modelFolder: String) throws(RecognizerError) {
        let api = try Self.api(library: library, modelFolder: modelFolder)
        guard let handle = Self.withOptions({ options, count in api.load(modelFolder, Self.tinyArchitecture, options, count, Self.headerVersion) })
        else {
            throw RecognizerError("Moonshine did not load \(modelFolder): no memory for its options")
        }
        guard handle >= 0 else {
            throw RecognizerError("Moonshine did not load \(modelFolder): \(api.describe(handle))")
        }
        self.api = api
        self.handle = handle
        // ONNX Runtime has copied the weights: the files' mapped pages are not read again.
        MappedModelFiles.release(under: modelFolder)
    }

    /// moonshine_option_t: a name and a value, both C strings.
    struct OptionC {
        var name: UnsafePointer<CChar>?
        var value: UnsafePointer<CChar>?
    }

    /// The options the transcriber is loaded with. Its own voice detection is off (every window
    /// is speech), so an utterance is heard whole, as one line, up to 30 s (parleyd's utterances
    /// end by 20 s, `[endpoint] max_speech_ms` as shipped, and a little more when the person
    /// goes on; set longer, an utterance is heard in lines cut every 30 s).
    ///
    /// With its detection on, the library splits an utterance into lines and decodes each
    /// alone, and where it splits depends on what the process heard before (its detector's
    /// state is kept from call to call): the same samples gave other words, and sometimes a
    /// loop, by what came before, so a recording's turns changed with the machine's load. Heard
    /// whole, the same samples give the same words, and fewer errors: on the English
    /// recordings of ../shared/speech joined in pairs after 200-900 ms, 19.7 % against 24.8 %;
    /// after 1.2-1.5 s, 20.3 % against 26.0 %; three in a row, 17.1 % against 26.3 %; each
    /// alone, the same 25.1 %. In pink noise, given 500 ms of the room before the voice, it made
    /// up an opening on 2-3 of 49 recordings, against 29-30 with lines (docs/benchmarks.md,
    /// "Moonshine hears an utterance whole").
    static let options: [(name: String, value: String)] = [("vad_threshold", "0.0"), ("vad_max_segment_duration", "30")]

    /// Calls `body` with `options` as the library takes them (valid during the call; the library
    /// copies them); nil when there is no memory to copy them into.
    static func withOptions<T>(_ body: (UnsafeRawPointer?, UInt64) -> T) -> T? {
        let strings = options.map { (strdup($0.name), strdup($0.value)) }
        defer { strings.forEach { free($0.0); free($0.1) } }
        let table = strings.compactMap { name, value in name.flatMap { name in value.map { OptionC(name: name, value: $0) } } }
        guard table.count == options.count else { return nil }
        return table.withUnsafeBytes { body($0.baseAddress, UInt64(table.count)) }
    }

    /// Whether the library and the model can be used, without loading the model (parleyd checks
    /// this before it starts Moonshine's worker): the library's functions, or why not.
    public static func check(library: String, modelFolder: String) throws(RecognizerError) {
        _ = try api(library: library, modelFolder: modelFolder)
    }

    /// The library's functions, once the layout, the model's files and the library are checked.
    static func api(library: String, modelFolder: String) throws(RecognizerError) -> API {
        guard MemoryLayout<LineC>.stride == 88, MemoryLayout<WordC>.stride == 24, MemoryLayout<TranscriptC>.stride == 16,
            MemoryLayout<OptionC>.stride == 16, MemoryLayout<OptionC>.offset(of: \.value) == 8
        else {
            throw RecognizerError("libmoonshine's structures have another layout on this machine; Moonshine is not used")
        }
        for file in ["encoder_model.ort", "decoder_model_merged.ort", "tokenizer.bin"]
        where !FileManager.default.fileExists(atPath: (modelFolder as NSString).appendingPathComponent(file)) {
            throw RecognizerError("the Moonshine model in \(modelFolder) has no \(file) (run `make engines`)")
        }
        return try API.open(library).get()
    }

    deinit { api.free(handle) }

    public func hears(_ language: String) -> Bool { language == "en" }

    public func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript {
        let audio = Self.heard(samples)
        let result: Result<String, RecognizerError> = busy.withLock { _ in
            var raw: UnsafeMutableRawPointer?
            let code = audio.withUnsafeBufferPointer { buffer in
                api.transcribe(handle, buffer.baseAddress, UInt64(buffer.count), Self.sampleRate, 0, &raw)
            }
            guard code == 0 else { return .failure(RecognizerError("Moonshine failed: \(api.describe(code))")) }
            let transcript = raw?.assumingMemoryBound(to: TranscriptC.self)
            // The transcript belongs to the transcriber (valid until its next call).
            // One line (`options`), or more past 30 s.
            guard let lines = transcript?.pointee.lines, let count = transcript?.pointee.lineCount else { return .success("") }
            return .success((0..<Int(count)).compactMap { lines[$0].text.map { String(cString: $0) } }.joined(separator: " "))
        }
        let text = try result.get().split(whereSeparator: \.isWhitespace).joined(separator: " ")
        // A small decoder can fall into a loop on noise ("2002, 2002, 2002, 200"): those are
        // not words anybody said, and the next engine hears the utterance instead.
        if Self.repeatsItself(text) {
            // What it wrote is not quoted: it is made of what a person said, and the log is no
            // place for that unless transcripts are switched on.
            throw RecognizerError("Moonshine repeated itself (a run of words three times over)")
        }
        return Transcript(text: text, language: "en", engine: name)
    }

    /// The environment variable libmoonshine reads as it makes its ONNX Runtime sessions: set,
    /// they run on the calling thread alone (`[transcriber] moonshine_one_thread`).
    public static let singleThreadVariable = "MOONSHINE_ORT_SINGLE_THREAD"

    /// Parley's capture rate, which the library is told.
    static let sampleRate = Int32(captureSampleRate)

    /// Silence Moonshine hears after the utterance, which the accurate pass cuts 80 ms into its
    /// pause: cut so, Moonshine often ends a whole sentence with a comma, as if the person were
    /// to go on, and the answer then waits for the silence limit (`UnfinishedSentence`).
    /// Whisper's worker adds 2 s of silence for the same reason. On the 49 English recordings
    /// cut 80 ms after their speech, 150-600 ms of silence after them took the commas from 2 to
    /// 0 and the errors from 26.9 % to 25.1-25.4 % (docs/benchmarks.md, "Moonshine hears
    /// silence after the words").
    static let silenceAfterSeconds: Float = 0.25

    /// What the library is given for `samples`: them, as floats, then `silenceAfterSeconds` of
    /// silence.
    static func heard(_ samples: [Int16]) -> [Float] {
        samples.map { Float($0) / 32_768 } + [Float](repeating: 0, count: Int(silenceAfterSeconds * Float(sampleRate)))
    }

    /// Whether some run of one to four words comes three times or more in a row (case and
    /// punctuation aside): a decoder's loop, not speech ("no, no, no" is three words, and kept).
    static func repeatsItself(_ text: String) -> Bool {
        let words = text.lowercased().split { !$0.isLetter && !$0.isNumber && $0 != "'" }.map(String.init)
        for length in 1...4 {
            var index = 0
            while index + 3 * length <= words.count {
                let run = words[index..<(index + length)]
                if words[(index + length)..<(index + 2 * length)] == run && words[(index + 2 * length)..<(index + 3 * length)] == run
                    && (length > 1 || words.count > 3)
                {
                    return true
                }
                index += 1
            }
        }
        return false
    }
}
