import CEspeakNG
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// espeak-ng through its library, initialised once per process.
///
/// espeak-ng keeps global state (the voice and its parameters, the synthesis callback), so the
/// library itself sits behind one lock, `EspeakSynthesizer.engine`: it is initialised under it
/// (once, whoever asks first), and every call that selects a voice, synthesizes or reads
/// phonemes holds it. Instances (a daemon's, a test's) are then independent: each has its own
/// `voices`, and the lock remembers which voice the library has selected.
public final class EspeakSynthesizer: SpeechSynthesizer {
    public let sampleRate: Int
    /// Per-language voice, rate, pitch and volume; languages not listed use the defaults.
    public var voices: [String: VoiceSettings] = [:]

    /// What espeak-ng said at its initialisation, and the voice it has selected (nil: none, or
    /// one that may have changed).
    private struct Engine: Sendable {
        let sampleRate: Int
        let languages: Set<String>
        let voiceNames: Set<String>
        var selected: VoiceSettings?
    }

    /// espeak-ng itself: nil until initialised.
    private static let engine = Mutex<Engine?>(nil)

    /// Initialises espeak-ng on first use (`chunkMs`, how much audio each callback carries, is
    /// taken from the first caller), and makes a synthesizer with no voice settings of its own.
    public init(chunkMs: Int = 50) throws(SynthesisError) {
        let engine = try Self.engine.withLock { engine throws(SynthesisError) -> Engine in
            if let engine { return engine }
            let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, Int32(chunkMs), nil, 0)
            guard rate > 0 else {
                throw SynthesisError("espeak-ng could not start (its data was not found); install espeak-ng-data")
            }
            espeak_SetSynthCallback(espeakCallback)
            let installed = Self.installedVoices()
            let started = Engine(sampleRate: Int(rate), languages: installed.languages, voiceNames: installed.names)
            engine = started
            return started
        }
        sampleRate = engine.sampleRate
        languages = engine.languages
        voiceNames = engine.voiceNames
    }

    /// Every language an installed voice speaks ("es", "en-us", ...), read once at start-up so
    /// the question can be answered from any thread.
    public let languages: Set<String>
    /// Every installed voice's name and identifier, lowercased ("spanish", "roa/es", "es").
    private let voiceNames: Set<String>

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

    /// Selects `language`'s voice and settings in espeak-ng, unless they are selected already.
    /// Call it with the engine's lock held (`engine.withLock`), before using the voice.
    private static func select(_ settings: VoiceSettings, in engine: inout Engine?) -> Bool {
        if engine?.selected == settings { return true }
        engine?.selected = nil
        guard let voice = settings.voice, espeak_SetVoiceByName(voice) == EE_OK else { return false }
        espeak_SetParameter(espeakRATE, Int32(settings.rate), 0)
        espeak_SetParameter(espeakPITCH, Int32(settings.pitch), 0)
        espeak_SetParameter(espeakVOLUME, Int32(settings.volume), 0)
        engine?.selected = settings
        return true
    }

    /// `language`'s settings, with the voice named (the language code when none is set).
    private func settings(for language: String) -> VoiceSettings {
        var settings = voices[language] ?? VoiceSettings()
        settings.voice = settings.voice ?? language
        return settings
    }

    /// Whether a voice called `name` is installed (espeak-ng itself would silently fall back).
    public func canLoad(voice name: String) -> Bool {
        voiceNames.contains(name.lowercased())
    }

    public func ipa(_ text: String, language: String) -> String? {
        let settings = settings(for: language)
        let clauses = Self.engine.withLock { engine -> [String] in
            guard Self.select(settings, in: &engine) else { return [] }
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
            return clauses
        }
        return clauses.isEmpty ? nil : clauses.joined(separator: " ")
    }

    @discardableResult
    public func synthesize(_ text: String, language: String, chunk: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        let settings = settings(for: language)
        // The lock is held while the audio is handed on (`chunk`): espeak-ng speaks one sentence at a time.
        return try Self.engine.withLock { engine throws(SynthesisError) -> Int in
            guard Self.select(settings, in: &engine) else {
                throw SynthesisError("espeak-ng has no voice for \"\(language)\"; list voices with `espeak-ng --voices`")
            }
            return try Self.speak(text, chunk: chunk)
        }
    }

    /// Runs espeak-ng on `text`; call it with the engine's lock held, the voice selected.
    private static func speak(_ text: String, chunk: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        try withoutActuallyEscaping(chunk) { escapable throws(SynthesisError) -> Int in
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
