/// A synthesis failure, with what to do about it.
public struct SynthesisError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
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
}
