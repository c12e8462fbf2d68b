/// The conversation as a pure state machine over capture-timeline time.
///
/// The machine owns no audio and does no I/O: the daemon feeds it events (time passing, speech
/// starting and ending, results coming back from the engines) and performs the actions it
/// returns. That keeps turn-taking testable without a sound card.

/// A sample position on the capture timeline.
public typealias CaptureTime = Int64

/// One of the two people in the conversation.
public enum Speaker: String, Sendable, Codable, CaseIterable, Hashable {
    case a, b

    public var other: Speaker { self == .a ? .b : .a }
}

/// Who speaks after a turn.
public enum ConversationMode: String, Sendable, Codable, CaseIterable {
    /// The speakers take turns.
    case alternate
    /// Only speaker A talks (a guide, a lecture).
    case oneWay = "one-way"
    /// A client says who speaks next (`listen a|b`).
    case manual
}

public struct ConversationMachine: Sendable {
    public enum State: Sendable, Equatable {
        /// Waiting to be told who speaks (manual mode, or no side can be heard).
        case idle
        /// Waiting for `speaker` to start talking.
        case listening(Speaker)
        /// `speaker` is talking; audio streams into the recognizer.
        case hearing(Speaker, since: CaptureTime)
        /// The utterance has ended; the recognizer is finishing it.
        case recognizing(Speaker)
        /// The words are being translated.
        case translating(Speaker)
        /// The translation is being spoken.
        case speaking(Speaker)
        /// Parley has just spoken; audio is ignored until `until` so it never hears itself.
        case echoGuard(next: Speaker?, until: CaptureTime)

        /// The name clients see.
        public var name: String {
            switch self {
            case .idle: "idle"
            case .listening: "listening"
            case .hearing: "hearing"
            case .recognizing: "recognizing"
            case .translating: "translating"
            case .speaking: "speaking"
            case .echoGuard: "echo_guard"
            }
        }

        /// The speaker this state is about, if any.
        public var speaker: Speaker? {
            switch self {
            case .idle: nil
            case .listening(let s), .hearing(let s, _), .recognizing(let s), .translating(let s), .speaking(let s): s
            case .echoGuard(let next, _): next
            }
        }
    }

    public enum Event: Sendable, Equatable {
        /// Capture has reached `now` (the end of the period just read).
        case clock(now: CaptureTime)
        /// The endpointer found the start of speech at `at`.
        case speechStarted(at: CaptureTime)
        /// The endpointer decided the utterance ended at `at`.
        case speechEnded(at: CaptureTime)
        /// What started as speech was too short and was dropped.
        case speechDiscarded
        /// The recognizer finished; `text` is empty when nothing was recognized.
        case recognized(text: String)
        /// Translation finished.
        case translated(text: String)
        /// Translation failed; the turn is kept untranslated.
        case translationFailed
        /// The first translated sample went to the speaker.
        case speakingStarted
        /// Playback finished after `playedSamples` of audio (counted at the capture rate).
        case speakingFinished(playedSamples: CaptureTime)
        /// A client chose who speaks next.
        case listen(Speaker)
    }

    public enum Action: Sendable, Equatable {
        /// Open an utterance in the recognizer for `speaker`.
        case startRecognition(Speaker)
        /// Close the utterance and produce the hypothesis.
        case finishRecognition(Speaker)
        /// Drop the utterance in progress.
        case cancelRecognition
        /// Translate `text`, spoken by `speaker`.
        case translate(Speaker, text: String)
        /// Speak `text` (the translation of `speaker`'s words) to the other side.
        case speak(Speaker, text: String)
        /// Forget pre-roll and partial onsets: audio before now must not leak into the next turn.
        case resetEndpointer
        /// Nothing was recognized: tell clients, keep listening to the same speaker.
        case reportNoSpeech(Speaker)
        /// The state changed.
        case stateChanged(State)
    }

    public struct Settings: Sendable, Equatable {
        public var mode: ConversationMode
        /// Samples of audio ignored after Parley stops speaking.
        public var echoTail: CaptureTime
        /// The speakers whose language has a recognizer.
        public var hearable: Set<Speaker>

        public init(mode: ConversationMode = .alternate, echoTail: CaptureTime, hearable: Set<Speaker> = [.a, .b]) {
            self.mode = mode
            self.echoTail = echoTail
            self.hearable = hearable
        }
    }

    public private(set) var state: State
    public private(set) var now: CaptureTime = 0
    public var settings: Settings
    private var speakingSince: CaptureTime?

    public init(settings: Settings) {
        self.settings = settings
        self.state = .idle
        if settings.mode != .manual, let first = Self.firstHearable(preferring: .a, in: settings.hearable) {
            state = .listening(first)
        }
    }

    /// True while captured audio should reach the endpointer and recognizer.
    public var acceptsAudio: Bool {
        switch state {
        case .listening, .hearing: true
        default: false
        }
    }

    /// True while the pipeline is working on a turn; a recording waits for it (see `AudioCapture.isRealTime`).
    public var isBusy: Bool {
        switch state {
        case .recognizing, .translating, .speaking: true
        default: false
        }
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (_, .clock(let time)):
            now = max(now, time)
            if case .echoGuard(let next, let until) = state, now >= until {
                return transition(to: next.map(State.listening) ?? .idle) + [.resetEndpointer]
            }
            return []

        case (.listening(let speaker), .speechStarted(let at)):
            return transition(to: .hearing(speaker, since: at)) + [.startRecognition(speaker)]

        case (.hearing(let speaker, _), .speechEnded):
            return transition(to: .recognizing(speaker)) + [.finishRecognition(speaker)]

        case (.hearing(let speaker, _), .speechDiscarded):
            return transition(to: .listening(speaker)) + [.cancelRecognition]

        case (.recognizing(let speaker), .recognized(let text)):
            let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if words.isEmpty {
                return transition(to: .listening(speaker)) + [.reportNoSpeech(speaker), .resetEndpointer]
            }
            return transition(to: .translating(speaker)) + [.translate(speaker, text: words)]

        case (.translating(let speaker), .translated(let text)):
            speakingSince = nil
            return transition(to: .speaking(speaker)) + [.speak(speaker, text: text)]

        case (.translating(let speaker), .translationFailed):
            // Nobody heard a translation: the same person keeps the floor and may say it again.
            return transition(to: .listening(speaker)) + [.resetEndpointer]

        case (.speaking, .speakingStarted):
            speakingSince = now
            return []

        case (.speaking(let speaker), .speakingFinished(let played)):
            // The guard covers the playback on the capture timeline. A live device has already
            // advanced past it; a paced recording has not, and skips the audio Parley spoke over.
            let playedUntil = (speakingSince ?? now) + played
            let until = max(now, playedUntil) + settings.echoTail
            return transition(to: .echoGuard(next: next(after: speaker), until: until))

        case (.idle, .listen(let speaker)), (.listening, .listen(let speaker)):
            return transition(to: .listening(speaker)) + [.resetEndpointer]

        case (.echoGuard(_, let until), .listen(let speaker)):
            return transition(to: .echoGuard(next: speaker, until: until))

        default:
            // Events that do not apply in the current state (a late result after a reset,
            // speech reported while busy) change nothing.
            return []
        }
    }

    /// Who listens after `speaker`'s turn.
    func next(after speaker: Speaker) -> Speaker? {
        switch settings.mode {
        case .manual: nil
        case .oneWay: Self.firstHearable(preferring: .a, in: settings.hearable)
        case .alternate: Self.firstHearable(preferring: speaker.other, in: settings.hearable)
        }
    }

    /// `preferred` if their language can be heard, else the other side if it can, else nobody.
    static func firstHearable(preferring preferred: Speaker, in hearable: Set<Speaker>) -> Speaker? {
        if hearable.contains(preferred) { return preferred }
        if hearable.contains(preferred.other) { return preferred.other }
        return nil
    }

    private mutating func transition(to newState: State) -> [Action] {
        guard newState != state else { return [] }
        state = newState
        return [.stateChanged(newState)]
    }
}

#if canImport(Foundation)
import Foundation
#endif
