/// The conversation as a pure state machine over capture-timeline time.
///
/// The machine owns no audio and does no I/O: the daemon feeds it events (time passing, speech
/// starting and ending, results coming back from the engines) and performs the actions it
/// returns. That keeps turn-taking testable without a sound card.

// The shared vocabulary (`Speaker`, `ConversationMode`, `SampleTime`); users import it themselves.
public import ParleyCore

/// The languages of one turn: the one it is spoken (or typed) in and the one it is translated into.
public struct TurnLanguages: Sendable, Equatable {
    public var source: String
    public var target: String

    public init(source: String, target: String) {
        self.source = source
        self.target = target
    }

    /// The same pair of languages, as the other side's turn.
    public var swapped: TurnLanguages { TurnLanguages(source: target, target: source) }

    /// Who spoke and into which language their words go, when `language` was heard in an
    /// utterance expected from `expected` (who speaks `source`): the other person when it is
    /// `target`.
    public func heard(_ language: String, expected: Speaker) -> (speaker: Speaker, target: String) {
        language == source ? (expected, target) : (expected.other, source)
    }
}

/// The conversation's turn-taking; see the top of this file.
public struct ConversationMachine: Sendable {
    public enum State: Sendable, Equatable {
        /// Waiting to be told who speaks (manual mode, or no side can be heard).
        case idle
        /// Waiting for `speaker` to start talking.
        case listening(Speaker)
        /// `speaker` is talking; audio streams into the recognizer.
        case hearing(Speaker, since: SampleTime)
        /// The utterance has ended; the recognizer is finishing it.
        case recognizing(Speaker)
        /// The words are being translated.
        case translating(Speaker)
        /// The translation is being spoken.
        case speaking(Speaker)
        /// Parley has just spoken; audio is ignored until `until` so it never hears itself.
        case echoGuard(next: Speaker?, until: SampleTime)
        /// The microphone is released; `next` listens after `resume`.
        case paused(next: Speaker?)

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
            case .paused: "paused"
            }
        }

        /// The speaker this state is about, if any.
        public var speaker: Speaker? {
            switch self {
            case .idle: nil
            case .listening(let s), .hearing(let s, _), .recognizing(let s), .translating(let s), .speaking(let s): s
            case .echoGuard(let next, _), .paused(let next): next
            }
        }
    }

    public enum Event: Sendable, Equatable {
        /// Capture has reached `now` (the end of the period just read).
        case clock(now: SampleTime)
        /// The endpointer found the start of speech at `at`.
        case speechStarted(at: SampleTime)
        /// The endpointer decided the utterance ended at `at`.
        case speechEnded(at: SampleTime)
        /// The person went on speaking after the end was decided, before Parley answered: the
        /// end is withdrawn and the same utterance goes on (`isResumable`).
        case speechResumed
        /// What started as speech was too short and was dropped.
        case speechDiscarded
        /// What was heard says who spoke (auto mode): the turn being recognized is theirs, in
        /// their language.
        case identified(Speaker)
        /// The recognizer finished; `text` is empty when nothing was recognized. `confident` is
        /// false when the decoder's confidence is under the configured minimum.
        case recognized(text: String, confident: Bool = true)
        /// Translation finished.
        case translated(text: String)
        /// Translation failed; the turn is kept untranslated.
        case translationFailed
        /// The first translated sample went to the speaker.
        case speakingStarted
        /// Playback finished after `playedSamples` of audio (counted at the capture rate).
        case speakingFinished(playedSamples: SampleTime)
        /// A client chose who speaks next (push-to-talk in manual mode).
        case listen(Speaker)
        /// A client said stop: end the utterance now, or stop speaking.
        case stop
        /// Release the microphone; a turn in flight finishes first.
        case pause
        /// Take the microphone back.
        case resume
        /// `speaker` typed `text` instead of speaking it; in `languages` (a turn replayed from the
        /// history), else in the speakers' languages of the settings.
        case typed(Speaker, text: String, languages: TurnLanguages? = nil)
    }

    public enum Action: Sendable, Equatable {
        /// Open an utterance in the recognizer for `speaker`, who is expected to speak `languages.source`.
        case startRecognition(Speaker, TurnLanguages)
        /// Close the utterance and produce the hypothesis.
        case finishRecognition(Speaker, TurnLanguages)
        /// The utterance whose end was withdrawn goes on: open it again in the recognizer, for
        /// `speaker` in `languages` as when it started, and hear it whole from its start. What
        /// was being made of it (its words, its translation) is dropped.
        case resumeRecognition(Speaker, TurnLanguages)
        /// Drop the utterance in progress.
        case cancelRecognition
        /// Translate `text`, spoken by `speaker`.
        case translate(Speaker, text: String, TurnLanguages)
        /// Speak `text` (the translation of `speaker`'s words) to the other side, in `language`.
        case speak(Speaker, text: String, language: String)
        /// Forget pre-roll and partial onsets: audio before now must not leak into the next turn.
        case resetEndpointer
        /// Nothing was recognized: tell clients, keep listening to the same speaker.
        case reportNoSpeech(Speaker)
        /// Ask `speaker`, in their own `language`, to say it again (low confidence).
        case askToRepeat(Speaker, language: String)
        /// Tell `speaker`, in their own `language`, that their words could not be translated.
        case tellUntranslated(Speaker, language: String)
        /// Cut the speech being played.
        case stopSpeaking
        /// Close the capture device (pause).
        case releaseCapture
        /// Open the capture device again (resume).
        case reopenCapture
        /// The state changed.
        case stateChanged(State)
    }

    public struct Settings: Sendable, Equatable {
        public var mode: ConversationMode
        /// Samples of audio ignored after Parley stops speaking.
        public var echoTail: SampleTime
        /// The speakers whose language has a recognizer.
        public var hearable: Set<Speaker>
        /// Whether a doubtful utterance is answered with a "please repeat" prompt.
        public var repeatPrompt: Bool
        /// Whether a failed translation is answered with a spoken notice to the speaker.
        public var failureNotice: Bool
        /// The speakers' languages (ISO 639-1).
        public var languageA: String
        public var languageB: String
        /// Whether the capture hears what Parley plays (a microphone in the room). When it does
        /// not (a recording), no audio is skipped after Parley speaks: the echo guard lasts no time.
        public var hearsPlayback = true

        public init(
            mode: ConversationMode = .alternate, echoTail: SampleTime, hearable: Set<Speaker> = [.a, .b],
            repeatPrompt: Bool = false, failureNotice: Bool = false, languageA: String = "en", languageB: String = "es"
        ) {
            self.mode = mode
            self.echoTail = echoTail
            self.hearable = hearable
            self.repeatPrompt = repeatPrompt
            self.failureNotice = failureNotice
            self.languageA = languageA
            self.languageB = languageB
        }

        /// The languages of a turn by `speaker`: theirs, translated into the other side's.
        public func languages(of speaker: Speaker) -> TurnLanguages {
            speaker == .a ? TurnLanguages(source: languageA, target: languageB) : TurnLanguages(source: languageB, target: languageA)
        }
    }

    public private(set) var state: State
    public private(set) var now: SampleTime = 0
    /// Changes apply from the next turn: they are read when a turn ends.
    public var settings: Settings
    private var speakingSince: SampleTime?
    /// A pause asked for while a turn was in flight; it takes effect when the turn ends.
    public private(set) var pauseRequested = false
    /// Who listens after the prompt or turn being spoken (set when speaking starts).
    private var nextAfterSpeaking: Speaker??
    /// The utterance whose end was decided, while it may still go on (`isResumable`): who was
    /// expected, in which languages, and where it started. Set when speech starts, cleared once
    /// anything is said to anyone (or the turn ends with nothing to say, or a turn is typed).
    private var heardUtterance: (expected: Speaker, languages: TurnLanguages, since: SampleTime)?
    /// The languages of the turn in flight, fixed when it starts (speech heard, or typed) and
    /// swapped when what was heard says the other side spoke.
    public private(set) var turnLanguages: TurnLanguages

    public init(settings: Settings) {
        self.settings = settings
        self.state = .idle
        self.turnLanguages = settings.languages(of: .a)
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

    /// True while the end of the utterance just heard can still be withdrawn: its words are
    /// being recognized or translated and nothing has been said yet. Speech heard now is the
    /// same person going on after a pause (Parley is silent, so it is nobody's answer).
    public var isResumable: Bool {
        guard heardUtterance != nil, !pauseRequested else { return false }
        switch state {
        case .recognizing, .translating: return true
        default: return false
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

        // MARK: Hearing a speaker
        case (.listening(let speaker), .speechStarted(let at)):
            turnLanguages = settings.languages(of: speaker)
            heardUtterance = (speaker, turnLanguages, at)
            return transition(to: .hearing(speaker, since: at)) + [.startRecognition(speaker, turnLanguages)]

        case (.recognizing, .speechResumed), (.translating, .speechResumed):
            guard isResumable, let heard = heardUtterance else { return [] }
            turnLanguages = heard.languages
            return transition(to: .hearing(heard.expected, since: heard.since)) + [.resumeRecognition(heard.expected, heard.languages)]

        case (.hearing(let speaker, _), .speechEnded):
            return transition(to: .recognizing(speaker)) + [.finishRecognition(speaker, turnLanguages)]

        case (.hearing(let speaker, _), .stop):
            // The utterance ends here; what was said so far is processed.
            return transition(to: .recognizing(speaker)) + [.finishRecognition(speaker, turnLanguages), .resetEndpointer]

        case (.hearing(let speaker, _), .speechDiscarded):
            return transition(to: .listening(speaker)) + [.cancelRecognition]

        case (.recognizing(let expected), .identified(let speaker)):
            guard speaker != expected, settings.hearable.contains(speaker) else { return [] }
            turnLanguages = turnLanguages.swapped
            return transition(to: .recognizing(speaker))

        case (.recognizing(let speaker), .recognized(let text, let confident)):
            let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if words.isEmpty {
                heardUtterance = nil
                return settle(listeningTo: speaker) + [.reportNoSpeech(speaker)]
            }
            if !confident && settings.repeatPrompt {
                heardUtterance = nil
                nextAfterSpeaking = .some(speaker)
                speakingSince = nil
                return transition(to: .speaking(speaker)) + [.askToRepeat(speaker, language: turnLanguages.source)]
            }
            return transition(to: .translating(speaker)) + [.translate(speaker, text: words, turnLanguages)]

        // MARK: Translating and speaking
        case (.translating(let speaker), .translated(let text)):
            heardUtterance = nil
            speakingSince = nil
            return transition(to: .speaking(speaker)) + [.speak(speaker, text: text, language: turnLanguages.target)]

        case (.translating(let speaker), .translationFailed):
            heardUtterance = nil
            // Nobody heard a translation: the same person keeps the floor and may say it again,
            // after a notice in their own language when configured (spoken like a prompt, so
            // the echo guard covers it). Someone who typed and cannot be heard does not get
            // the microphone.
            guard settings.failureNotice else { return settle(listeningTo: speaker) }
            nextAfterSpeaking = .some(Self.firstHearable(preferring: speaker, in: settings.hearable))
            speakingSince = nil
            return transition(to: .speaking(speaker)) + [.tellUntranslated(speaker, language: turnLanguages.source)]

        case (.speaking, .speakingStarted):
            speakingSince = now
            return []

        case (.speaking, .stop):
            return [.stopSpeaking]

        case (.speaking(let speaker), .speakingFinished(let played)):
            let next = nextAfterSpeaking ?? next(after: speaker)
            nextAfterSpeaking = nil
            if pauseRequested {
                pauseRequested = false
                return transition(to: .paused(next: next)) + [.releaseCapture]
            }
            // The guard covers the playback on the capture timeline: a live device has already
            // advanced past it. A capture that cannot hear Parley (a recording) skips nothing:
            // what was said meanwhile is heard from the next period on.
            guard settings.hearsPlayback else { return transition(to: .echoGuard(next: next, until: now)) }
            let playedUntil = (speakingSince ?? now) + played
            let until = max(now, playedUntil) + settings.echoTail
            return transition(to: .echoGuard(next: next, until: until))

        // MARK: Typed turns
        case (.listening, .typed(let speaker, let text, let languages)), (.idle, .typed(let speaker, let text, let languages)),
            (.echoGuard, .typed(let speaker, let text, let languages)), (.paused, .typed(let speaker, let text, let languages)):
            let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !words.isEmpty else { return [] }
            if case .paused = state { pauseRequested = true }
            heardUtterance = nil
            turnLanguages = languages ?? settings.languages(of: speaker)
            return transition(to: .translating(speaker)) + [.translate(speaker, text: words, turnLanguages)]

        // MARK: Choosing who speaks
        case (.idle, .listen(let speaker)), (.listening, .listen(let speaker)):
            return transition(to: .listening(speaker)) + [.resetEndpointer]

        case (.echoGuard(_, let until), .listen(let speaker)):
            return transition(to: .echoGuard(next: speaker, until: until))

        case (.paused, .listen(let speaker)):
            return transition(to: .paused(next: speaker))

        // MARK: Pause and resume
        case (.listening(let speaker), .pause), (.echoGuard(let speaker?, _), .pause):
            return transition(to: .paused(next: speaker)) + [.releaseCapture, .resetEndpointer]

        case (.hearing(let speaker, _), .pause):
            return transition(to: .paused(next: speaker)) + [.cancelRecognition, .releaseCapture, .resetEndpointer]

        case (.idle, .pause), (.echoGuard(nil, _), .pause):
            return transition(to: .paused(next: nil)) + [.releaseCapture]

        case (.recognizing, .pause), (.translating, .pause), (.speaking, .pause):
            pauseRequested = true
            return []

        case (.paused(let next), .resume):
            pauseRequested = false
            return transition(to: next.map(State.listening) ?? .idle) + [.reopenCapture, .resetEndpointer]

        case (.recognizing, .resume), (.translating, .resume), (.speaking, .resume):
            pauseRequested = false
            return []

        default:
            // Events that do not apply in the current state (a late result after a reset,
            // speech reported while busy, stop while listening) change nothing.
            return []
        }
    }

    /// Applies new settings. A turn in flight finishes as it began; whoever waits to be heard
    /// next must be someone who can be heard, so a change of languages or mode never leaves
    /// the conversation listening to a side that has no speech model.
    public mutating func reconfigure(_ new: Settings) -> [Action] {
        settings = new
        let first = Self.firstHearable(preferring: .a, in: new.hearable)
        func retarget(_ speaker: Speaker?) -> Speaker? {
            guard let speaker else { return new.mode == .manual ? nil : first }
            return new.hearable.contains(speaker) ? speaker : Self.firstHearable(preferring: speaker.other, in: new.hearable)
        }
        switch state {
        case .idle:
            guard new.mode != .manual, let first else { return [] }
            return transition(to: .listening(first)) + [.resetEndpointer]
        case .listening(let speaker):
            guard let target = retarget(speaker) else { return transition(to: .idle) }
            return transition(to: .listening(target)) + (target == speaker ? [] : [.resetEndpointer])
        case .echoGuard(let next, let until):
            return transition(to: .echoGuard(next: retarget(next), until: until))
        case .paused(let next):
            return transition(to: .paused(next: retarget(next)))
        case .hearing, .recognizing, .translating, .speaking:
            return []
        }
    }

    /// Ends a turn that produced nothing to speak: the same speaker goes on (or the pause asked
    /// for meanwhile begins).
    private mutating func settle(listeningTo speaker: Speaker) -> [Action] {
        // Someone who typed (and cannot be heard) does not get the microphone.
        let next = Self.firstHearable(preferring: speaker, in: settings.hearable)
        if pauseRequested {
            pauseRequested = false
            return transition(to: .paused(next: next)) + [.releaseCapture]
        }
        guard let next else { return transition(to: .idle) }
        return transition(to: .listening(next)) + [.resetEndpointer]
    }

    /// Who listens after `speaker`'s turn.
    func next(after speaker: Speaker) -> Speaker? {
        switch settings.mode {
        case .manual: nil
        case .oneWay: Self.firstHearable(preferring: .a, in: settings.hearable)
        case .alternate, .auto: Self.firstHearable(preferring: speaker.other, in: settings.hearable)
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

extension ConversationMachine.Action {
    /// The words `translate` asks for, with their languages (nil for any other action).
    public var translation: (text: String, languages: TurnLanguages)? {
        guard case .translate(_, let text, let languages) = self else { return nil }
        return (text, languages)
    }

    /// Whether this asks the speaker to say it again.
    public var asksToRepeat: Bool {
        guard case .askToRepeat = self else { return false }
        return true
    }
}

#if canImport(Foundation)
import Foundation
#endif
