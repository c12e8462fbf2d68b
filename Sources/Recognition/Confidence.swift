#if canImport(Foundation)
import Foundation
#endif

/// What the decoder measured of one word of its best path: what the word's confidence is made
/// from.
public struct WordEvidence: Sendable, Equatable {
    /// The word as the dictionary spells it, without an alternate pronunciation's "(2)".
    public var text: String
    /// The word's posterior probability in the utterance's lattice (0-1): the weight of the
    /// paths through the lattice that have this word here.
    public var posterior: Double
    /// How long it lasted, in 10 ms frames.
    public var frames: Int
    /// Phones in its pronunciation (0 when unknown).
    public var phones: Int
    /// Its acoustic score (natural log, ≤ 0), summed over its frames; each frame is measured
    /// against the best-scoring state of that frame, so 0 is the best the model can say.
    public var acousticScore: Double

    public init(text: String, posterior: Double, frames: Int, phones: Int, acousticScore: Double) {
        self.text = text
        self.posterior = posterior
        self.frames = frames
        self.phones = phones
        self.acousticScore = acousticScore
    }

    /// The word without an alternate pronunciation's mark: "with(2)" is "with".
    public static func spelling(_ dictionaryWord: String) -> String {
        guard dictionaryWord.hasSuffix(")"), let open = dictionaryWord.lastIndex(of: "("), open != dictionaryWord.startIndex,
            dictionaryWord[dictionaryWord.index(after: open)..<dictionaryWord.index(before: dictionaryWord.endIndex)].allSatisfy(\.isNumber)
        else { return dictionaryWord }
        return String(dictionaryWord[..<open])
    }
}

/// How sure the recognizer is of each word and of a whole utterance, calibrated on real speech
/// (docs/benchmarks.md, "Confidence"; bench/confidence.py measures it).
///
/// - A word's confidence is its lattice posterior, lowered when the word is stretched far past
///   any speaking rate (more than 350 ms per phone): a rumble or a hum decoded as one long word
///   is alone in its lattice, so its posterior says nothing.
/// - An utterance's confidence is the mean of its words' confidences, times how well the
///   acoustic model fits the words' frames: a logistic of the mean acoustic score per frame,
///   one half at -5.0 (natural log). Clean speech scores -2.3 to -3.7 per frame on both shipped
///   models; the other language, babble and noise -4 to -6. A fit better than any speech
///   (above -1.2 per frame) is a steady noise held by one word's states, and falls as well.
///
/// So clean sentences score 0.6-1 and noise, babble, mumbling and the other language mostly
/// below 0.5, `ParleyConfig.minConfidence`'s default.
public enum ConfidenceCalibration {
    /// Longer phones than this (on average over a word) are not speech.
    public static let longestPhoneMs = 350.0
    /// The mean acoustic score per frame (natural log) at which an utterance's confidence is halved.
    public static let acousticMidpoint = -5.0
    /// How quickly the acoustic factor falls around the midpoint (natural log per frame).
    public static let acousticWidth = 0.5
    /// The mean acoustic score per frame above which the fit is too steady for speech (halved
    /// here), and how quickly it falls past it.
    public static let steadyNoiseScore = -1.2
    public static let steadyNoiseWidth = 0.2

    /// A word's confidence, 0-1.
    public static func confidence(of word: WordEvidence) -> Double {
        let posterior = min(1, max(0, word.posterior.isFinite ? word.posterior : 0))
        guard word.phones > 0, word.frames > 0 else { return posterior }
        let msPerPhone = Double(word.frames) * 10 / Double(word.phones)
        let stretch = min(1, longestPhoneMs / msPerPhone)
        return posterior * stretch * stretch * stretch
    }

    /// How well the acoustic model fits the words' frames, 0-1 (1 when there are none).
    public static func acousticFit(of words: [WordEvidence]) -> Double {
        let frames = words.reduce(0) { $0 + max(0, $1.frames) }
        guard frames > 0 else { return 1 }
        let perFrame = words.reduce(0.0) { $0 + ($1.acousticScore.isFinite ? min(0, $1.acousticScore) : -1e6) } / Double(frames)
        let poor = 1 / (1 + exp(-(perFrame - acousticMidpoint) / acousticWidth))
        let steady = 1 / (1 + exp((perFrame - steadyNoiseScore) / steadyNoiseWidth))
        return poor * steady
    }

    /// The utterance's confidence, 0-1, or nil when it has no words.
    public static func confidence(of words: [WordEvidence]) -> Double? {
        guard !words.isEmpty else { return nil }
        let mean = words.reduce(0.0) { $0 + confidence(of: $1) } / Double(words.count)
        return min(1, max(0, mean * acousticFit(of: words)))
    }

    /// The words with their confidences, for the turn's record.
    public static func recognizedWords(_ words: [WordEvidence]) -> [RecognizedWord] {
        words.map { RecognizedWord(text: $0.text, confidence: confidence(of: $0)) }
    }
}
