/// One recognized word and how sure the recognizer is of it.
public struct RecognizedWord: Sendable, Equatable, Codable {
    /// The word as the hypothesis spells it.
    public var text: String
    /// From 0 to 1 (`ConfidenceCalibration`).
    public var confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }
}

/// What the recognizer heard in one utterance.
public struct Recognition: Sendable, Equatable {
    /// The words, or an empty string when nothing was recognized.
    public var text: String
    /// How sure the recognizer is of the utterance, from 0 to 1, calibrated so that clean
    /// speech scores high and noise or the other language low (`ConfidenceCalibration`); nil
    /// when it has no words or the recognizer gives none.
    public var confidence: Double?
    /// The words of `text` (fillers and silences left out) with their confidences; empty when
    /// the recognizer gives none.
    public var words: [RecognizedWord]
    /// How well this language explains the audio, normalised per frame: comparable between
    /// languages on the same audio (higher is better).
    public var score: Double?
    /// Frames (10 ms) of the hypothesis spent in words, not silence or noise: how much speech
    /// the score rests on.
    public var frames: Int
    /// Which engine gave the words: an accurate engine ("moonshine-tiny", "whisper-base"), or
    /// nil for the streaming recognizer.
    public var engine: String?
    /// What the streaming recognizer heard, when an accurate engine gave the words.
    public var streamingText: String?

    public init(text: String, confidence: Double?, words: [RecognizedWord] = [], score: Double? = nil, frames: Int = 0) {
        self.text = text
        self.confidence = confidence
        self.words = words
        self.score = score
        self.frames = frames
    }
}

extension Recognition {
    /// This recognition, then `next`, heard after it in the same utterance (a lane that went on
    /// after a withdrawn end): the words one after the other; the confidence and the score each
    /// part's, weighted by its words and its frames.
    public func followed(by next: Recognition) -> Recognition {
        let text = [self.text, next.text].filter { !$0.isEmpty }.joined(separator: " ")
        let confidence: Double?
        switch (self.confidence, next.confidence) {
        case let (first?, second?):
            let (a, b) = (Double(max(1, words.count)), Double(max(1, next.words.count)))
            confidence = (first * a + second * b) / (a + b)
        case let (first, second):
            confidence = first ?? second
        }
        let score: Double?
        switch (self.score, next.score) {
        case let (first?, second?):
            let total = frames + next.frames
            score = total > 0 ? (first * Double(frames) + second * Double(next.frames)) / Double(total) : (first + second) / 2
        case let (first, second):
            score = first ?? second
        }
        return Recognition(text: text, confidence: confidence, words: words + next.words, score: score, frames: frames + next.frames)
    }
}

/// How likely the words heard so far are a whole sentence, judged at a pause.
public struct SentenceEnd: Sendable, Equatable {
    /// The language model's probability that the sentence ends after the last words heard:
    /// P(</s> | the last two words). Near zero after "and", "to" or "the"; high after "young man".
    public var probability: Double
    /// How many words the hypothesis has (fillers and silence excluded).
    public var words: Int
    /// How well this language explains the audio so far, per frame (as `Recognition.score`).
    public var score: Double?
    /// The hypothesis so far, as `Recognition.text` would give it if the utterance ended now:
    /// what a speculation translates while the pause runs.
    public var text: String

    public init(probability: Double, words: Int, score: Double? = nil, text: String = "") {
        self.probability = probability
        self.words = words
        self.score = score
        self.text = text
    }
}

/// A recognizer failure, with what to do about it.
public struct RecognizerError: Error, CustomStringConvertible, Sendable {
    public let description: String
    /// Whether the engine stopped because it was asked to (`UtteranceTranscriber.stop`): the
    /// utterance is not wanted any more, and no other engine should hear it instead.
    public let stopped: Bool
    public init(_ description: String, stopped: Bool = false) {
        self.description = description
        self.stopped = stopped
    }
}

/// A streaming speech recognizer for one language.
///
/// Audio is fed while the person speaks; `finishUtterance` only completes the search. An
/// instance is used from one worker at a time and keeps its model loaded between turns.
public protocol SpeechRecognizer: AnyObject {
    /// The ISO 639-1 code of the language it recognizes.
    var language: String { get }
    /// Opens an utterance.
    func startUtterance() throws(RecognizerError)
    /// Decodes more 16 kHz mono samples of the open utterance.
    func feed(_ samples: [Int16]) throws(RecognizerError)
    /// The best hypothesis so far in the open utterance (for live captions), if any.
    func partial() -> String?
    /// How likely the words of the best hypothesis so far end the sentence, by its language
    /// model; nil when there are no words or the recognizer cannot tell. The audio fed last is a
    /// pause of `pause` samples: words "heard" in it (noise, a breath) do not count.
    func sentenceEnd(pause: Int) -> SentenceEnd?
    /// Closes the utterance and returns the best hypothesis.
    func finishUtterance() throws(RecognizerError) -> Recognition
    /// Closes the utterance and forgets it.
    func cancelUtterance()
}

/// Where the conversation gets its recognizers, and the lane each one must be driven from.
///
/// One object answers both, so a recognizer's lane always comes from the pool that made it:
/// languages on the same decoder get the same lane (one queue), and a decoder is never driven
/// from two threads at once. `RecognizerPool` is the daemon's; ParleyTesting has a scripted one.
public protocol RecognizerLanes: Sendable {
    /// A recognizer for a language, which the caller (one lane) owns from then on; its model is
    /// loaded the first time it is asked for and kept warm. nil when the language has no model.
    func recognizer(for language: String) -> sending (any SpeechRecognizer)?
    /// Which decoder a language's recognizer runs on: languages on the same decoder share a lane.
    func lane(for language: String) -> String
    /// Whether `language` has a streaming recognizer (a model that loads). Cheap, from any thread.
    func canHear(_ language: String) -> Bool
}
