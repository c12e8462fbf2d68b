import Foundation

/// A synthesis failure, with what to do about it.
public struct SynthesisError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// How one language is spoken.
public struct VoiceSettings: Sendable, Equatable {
    /// The espeak-ng voice name; nil uses the language code.
    public var voice: String?
    /// The rate a language without `[voice.xx] rate` is spoken at.
    public static let defaultRate = 140

    /// Words per minute (80-450). 140, not espeak-ng's 175: Whisper base heard every language
    /// better at 140 (docs/benchmarks.md, "Voices a listener understands").
    public var rate: Int = defaultRate
    /// Base pitch (0-100).
    public var pitch: Int = 50
    /// Loudness (0-200, 100 is normal).
    public var volume: Int = 100

    public init(voice: String? = nil, rate: Int = defaultRate, pitch: Int = 50, volume: Int = 100) {
        self.voice = voice
        self.rate = rate
        self.pitch = pitch
        self.volume = volume
    }
}

/// Turns text into 16-bit mono speech.
///
/// Synthesis streams: `chunk` receives audio as it is produced, so playback can start before
/// the whole sentence exists. An instance is used from one worker at a time.
public protocol SpeechSynthesizer: AnyObject {
    /// The rate of the samples it produces.
    var sampleRate: Int { get }
    /// True when a voice exists for the ISO 639-1 `language`. Safe from any thread.
    func hasVoice(for language: String) -> Bool
    /// Speaks `text` in `language`, handing audio to `chunk` as it is produced. Returns the number
    /// of samples produced.
    @discardableResult
    func synthesize(_ text: String, language: String, chunk: ([Int16]) throws -> Void) throws(SynthesisError) -> Int
    /// The pronunciation of `text` in IPA, when the engine can tell.
    func ipa(_ text: String, language: String) -> String?
}

/// What the voices asked a sentence at a time (Festival, Piper) share.
public enum SentenceSpeech {
    /// `text` cut after each sentence's end (., ?, ! or … before a space): Festival and Piper are
    /// asked a sentence at a time, so the first is heard while the next is made.
    public static func sentences(_ text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        var ended = false
        for character in text {
            if ended, character.isWhitespace {
                let sentence = current.trimmingCharacters(in: .whitespaces)
                if !sentence.isEmpty { sentences.append(sentence) }
                current = ""
                ended = false
                continue
            }
            current.append(character)
            ended = ".?!…".contains(character)
        }
        let last = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !last.isEmpty { sentences.append(last) }
        return sentences.isEmpty ? [text] : sentences
    }

    /// Hands `samples` on to `chunk` in pieces of `size` samples (50 ms), so a stop cuts it
    /// between two.
    static func handOn(_ samples: [Int16], size: Int, to chunk: ([Int16]) throws -> Void) throws(SynthesisError) {
        do {
            var start = 0
            while start < samples.count {
                let end = min(samples.count, start + size)
                try chunk(Array(samples[start..<end]))
                start = end
            }
        } catch {
            throw SynthesisError("speech output failed: \(error)")
        }
    }
}
