import CEspeakNG
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// espeak-ng through its library, initialised once. espeak-ng keeps global state, so only one
/// instance may exist in a process; `shared()` returns it.
public final class EspeakSynthesizer: SpeechSynthesizer {
    public let sampleRate: Int
    private var currentVoice: String?
    /// Per-language voice, rate, pitch and volume; languages not listed use the defaults.
    public var voices: [String: VoiceSettings] = [:] {
        didSet { currentVoice = nil }
    }

    private nonisolated(unsafe) static var instance: EspeakSynthesizer?

    /// Initialises espeak-ng on first use. `chunkMs` sets how much audio each callback carries.
    public static func shared(chunkMs: Int = 50) throws(SynthesisError) -> EspeakSynthesizer {
        if let instance { return instance }
        let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, Int32(chunkMs), nil, 0)
        guard rate > 0 else {
            throw SynthesisError("espeak-ng could not start (its data was not found); install espeak-ng-data")
        }
        espeak_SetSynthCallback(espeakCallback)
        let installed = installedVoices()
        let created = EspeakSynthesizer(sampleRate: Int(rate), languages: installed.languages, voiceNames: installed.names)
        instance = created
        return created
    }

    /// Every language an installed voice speaks ("es", "en-us", ...), read once at start-up so
    /// the question can be answered from any thread.
    public let languages: Set<String>
    /// Every installed voice's name and identifier, lowercased ("spanish", "roa/es", "es").
    private let voiceNames: Set<String>

    private init(sampleRate: Int, languages: Set<String>, voiceNames: Set<String>) {
        self.sampleRate = sampleRate
        self.languages = languages
        self.voiceNames = voiceNames
    }

    public func hasVoice(for language: String) -> Bool {
        languages.contains(language)
    }

    /// espeak-ng lists each voice's languages as (priority byte, NUL-terminated name) pairs.
    private static func installedVoices() -> (languages: Set<String>, names: Set<String>) {
        var languages = Set<String>()
        var names = Set<String>()
        guard let voices = espeak_ListVoices(nil) else { return (languages, names) }
        var index = 0
        while let voice = voices[index] {
            index += 1
            if let name = voice.pointee.name { names.insert(String(cString: name).lowercased()) }
            if let identifier = voice.pointee.identifier {
                let path = String(cString: identifier).lowercased()
                names.insert(path)
                names.insert(String(path.split(separator: "/").last ?? Substring(path)))
            }
            guard var cursor = voice.pointee.languages else { continue }
            while cursor.pointee != 0 {
                let name = String(cString: cursor + 1)
                languages.insert(name)
                cursor += 2 + strlen(cursor + 1)
            }
        }
        return (languages, names.union(languages))
    }

    @discardableResult
    private func select(_ language: String) -> Bool {
        if currentVoice == language { return true }
        let settings = voices[language] ?? VoiceSettings()
        guard espeak_SetVoiceByName(settings.voice ?? language) == EE_OK else { return false }
        espeak_SetParameter(espeakRATE, Int32(settings.rate), 0)
        espeak_SetParameter(espeakPITCH, Int32(settings.pitch), 0)
        espeak_SetParameter(espeakVOLUME, Int32(settings.volume), 0)
        currentVoice = language
        return true
    }

    /// Whether a voice called `name` is installed (espeak-ng itself would silently fall back).
    public func canLoad(voice name: String) -> Bool {
        voiceNames.contains(name.lowercased())
    }

    public func ipa(_ text: String, language: String) -> String? {
        guard select(language) else { return nil }
        var clauses: [String] = []
        text.withCString { start in
            // espeak-ng moves the pointer clause by clause and sets it to nil at the end.
            var cursor: UnsafeRawPointer? = UnsafeRawPointer(start)
            while cursor != nil {
                guard let phonemes = espeak_TextToPhonemes(&cursor, Int32(espeakCHARS_UTF8), Int32(espeakPHONEMES_IPA)) else { break }
                let clause = String(cString: phonemes).trimmingCharacters(in: .whitespaces)
                if !clause.isEmpty { clauses.append(clause) }
            }
        }
        return clauses.isEmpty ? nil : clauses.joined(separator: " ")
    }

    @discardableResult
    public func synthesize(_ text: String, language: String, chunk: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        guard select(language) else {
            throw SynthesisError("espeak-ng has no voice for \"\(language)\"; list voices with `espeak-ng --voices`")
        }
        return try withoutActuallyEscaping(chunk) { escapable throws(SynthesisError) -> Int in
            let context = SynthesisContext(chunk: escapable)
            let unmanaged = Unmanaged.passRetained(context)
            defer { unmanaged.release() }
            let bytes = Array(text.utf8CString)
            let result = bytes.withUnsafeBufferPointer { buffer in
                espeak_Synth(
                    buffer.baseAddress, buffer.count, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil,
                    unmanaged.toOpaque())
            }
            if let failure = context.failure {
                throw SynthesisError("speech output failed: \(failure)")
            }
            guard result == EE_OK else { throw SynthesisError("espeak-ng failed to synthesize (error \(result.rawValue))") }
            return context.produced
        }
    }
}

/// Carries the Swift closure through espeak-ng's C callback.
private final class SynthesisContext {
    let chunk: ([Int16]) throws -> Void
    var produced = 0
    var failure: (any Error)?

    init(chunk: @escaping ([Int16]) throws -> Void) {
        self.chunk = chunk
    }
}

/// espeak-ng calls this with each block of audio; returning 1 aborts synthesis.
private func espeakCallback(_ wave: UnsafeMutablePointer<Int16>?, _ count: Int32, _ events: UnsafeMutablePointer<espeak_EVENT>?) -> Int32 {
    guard let events, let userData = events.pointee.user_data else { return 0 }
    let context = Unmanaged<SynthesisContext>.fromOpaque(userData).takeUnretainedValue()
    guard context.failure == nil else { return 1 }
    guard let wave, count > 0 else { return 0 }
    let samples = Array(UnsafeBufferPointer(start: wave, count: Int(count)))
    do {
        try context.chunk(samples)
        context.produced += samples.count
        return 0
    } catch {
        context.failure = error
        return 1
    }
}
