/// A trained voice-activity detector: how likely the latest audio is a voice.
///
/// The capture loop feeds it every period, in order, on its own thread; the endpointer takes its
/// probability beside the level (`Endpointer.process(_:at:rmsDB:speech:cue:)`).
public protocol VoiceActivityDetector: Sendable {
    /// Named in the log and in `status`.
    var name: String { get }
    /// Feeds the next period of 16 kHz audio; returns the probability that the latest audio is
    /// speech, or nil while the detector has too little audio to judge.
    func speechProbability(after frame: [Int16]) throws(VoiceActivityError) -> Float?
    /// Takes a period it need not judge (too quiet to be speech, or heard while Parley speaks),
    /// so it costs nothing now; a long run of them is forgotten when judging resumes. `room`: the
    /// period is the room heard while listening, which a recurrent detector hears first when
    /// judging resumes (what a voice starts from); false while Parley speaks (its own voice) or
    /// the conversation is paused.
    func skip(_ frame: [Int16], room: Bool)
    /// Forgets the audio so far (the capture restarted: a resumed or reopened microphone).
    func reset()
}

public struct VoiceActivityError: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
