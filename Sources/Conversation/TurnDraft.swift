/// The turn being recorded, and every rule that fills it: who spoke and in which languages,
/// the words, the translation, what ended the utterance, and the timings. As pure as the
/// turn's logic: the runtime passes the instants it read on its clock (`ParleyClock`); nothing
/// here reads one.
///
/// A turn is recorded from the end of its utterance (`recognitionFinishing`) or from the text
/// typed (`typed`); the runtime takes it (`takeDraft`) when it is spoken, fails to translate,
/// or is abandoned, and stores it.

import Foundation
// The draft's fields; users import them themselves.
public import ParleyCore
public import ParleyRecognition
import ParleyEndpoint

/// What is known about the turn in flight.
public struct TurnDraft: Sendable, Equatable {
    public var speaker: Speaker
    public var sourceLang: String
    public var targetLang: String
    /// When the end of speech was decided (or the text typed), on the runtime's clock.
    public var endOfSpeech: ParleyClock.Instant
    public var recognition: Recognition?
    /// How the speaker was told (auto mode).
    public var detection: SpeakerDetection?
    public var translation: String?
    /// How it was translated ("apertium via ca"): the route the translator named.
    public var route: String?
    /// The translation's pronunciation, in IPA.
    public var ipa: String?
    public var error: String?
    public var lowConfidence = false
    /// From the end of speech to the words (recognition).
    public var asrMs: Int?
    /// From the translation's start to its end (or failure).
    public var mtMs: Int?
    /// From the synthesis's start to the first sample played.
    public var ttsMs: Int?
    /// From the end of speech to the first sample of the translation played.
    public var responseMs: Int?
    /// What ended the utterance (`language_model`, `accurate_words`, `silence`, `max_length`, `forced`), and the
    /// silence before that decision.
    public var endedBy: String?
    public var pauseMs: Int?
    /// Whether the translation (and its audio) was made during the pause, by a speculation.
    public var speculated: Bool?
    /// A past turn spoken again (`replay`): its translation is not made again, and it is not
    /// stored again.
    public var replayed = false

    public init(speaker: Speaker, sourceLang: String, targetLang: String, endOfSpeech: ParleyClock.Instant) {
        self.speaker = speaker
        self.sourceLang = sourceLang
        self.targetLang = targetLang
        self.endOfSpeech = endOfSpeech
    }
}

// MARK: - The turn's start

extension TurnLogic {
    /// The end of the utterance was decided (the machine's `finishRecognition`) at `now`: a turn
    /// by `speaker` in `languages` is recorded from here, with what ended the utterance and the
    /// pause before that decision.
    public mutating func recognitionFinishing(_ speaker: Speaker, _ languages: TurnLanguages, at now: ParleyClock.Instant) {
        draft = TurnDraft(speaker: speaker, sourceLang: languages.source, targetLang: languages.target, endOfSpeech: now)
        if let ended = utteranceEnd {
            draft?.endedBy = ended.reason.rawValue
            draft?.pauseMs = Int(ended.pause * 1000 / SampleTime(endpointer.sampleRate))
        }
    }

    /// A typed turn of `text` by `speaker` (`say`), or a past turn spoken again with its
    /// `translation` (`replay`), in `languages` (nil: the settings'). When the machine takes it,
    /// it is recorded from `now` in the languages the machine fixed, and the running speculation
    /// is dropped (it serves no typed turn, even on the same words). Returns the machine's
    /// actions (none: refused, nothing changed).
    public mutating func typed(
        _ speaker: Speaker, text: String, languages: TurnLanguages?, translation: String? = nil, at now: ParleyClock.Instant
    ) -> [ConversationMachine.Action] {
        let actions = handle(.typed(speaker, text: text, languages: languages))
        guard !actions.isEmpty else { return [] }
        dropSpeculation()
        let fixed = machine.turnLanguages
        draft = TurnDraft(speaker: speaker, sourceLang: fixed.source, targetLang: fixed.target, endOfSpeech: now)
        draft?.recognition = Recognition(text: text, confidence: nil)
        draft?.translation = translation
        draft?.replayed = translation != nil
        return actions
    }

    /// The translation of the turn being replayed (nil: the turn is translated).
    public var replayedTranslation: String? {
        guard let draft, draft.replayed else { return nil }
        return draft.translation
    }

    /// Takes the turn being recorded, to be stored.
    public mutating func takeDraft() -> TurnDraft? {
        defer { draft = nil }
        return draft
    }
}

// MARK: - The words

extension TurnLogic {
    /// What the end of recognition decided (see `recognized`).
    public struct Recognized: Sendable, Equatable {
        public var actions: [ConversationMachine.Action]
        /// Words were heard, under the minimum confidence.
        public var lowConfidence: Bool
        /// Why the turn is flagged, for its record (nil: it is not).
        public var error: String?
    }

    /// The utterance's words, from `speaker` (who spoke, in auto mode, told by `detection`), in
    /// `language`, to be translated into `target`, known at `now`: the machine is told who
    /// spoke, then the words, confident or not by `minConfidence`. The turn's record takes them
    /// and the recognition's time (`asrMs`, from the end of speech); a speculation on other
    /// words, or on a turn that will not be translated, is dropped.
    public mutating func recognized(
        _ words: Recognition, from speaker: Speaker, language: String, target: String, detection: SpeakerDetection? = nil,
        minConfidence: Double, at now: ParleyClock.Instant
    ) -> Recognized {
        let confident = (words.confidence ?? 1) >= minConfidence
        let lowConfidence = !words.text.isEmpty && !confident
        let actions = handle(.identified(speaker)) + handle(.recognized(text: words.text, confident: confident))
        var error: String?
        if actions.contains(where: \.asksToRepeat) {
            error = "low confidence; the speaker was asked to repeat"
        } else if lowConfidence {
            error = String(format: "low confidence (%.2f < %.2f)", words.confidence ?? 0, minConfidence)
        }
        if let end = draft?.endOfSpeech {
            draft?.asrMs = end.milliseconds(to: now)
        }
        draft?.speaker = speaker
        draft?.sourceLang = language
        draft?.targetLang = target
        draft?.detection = detection
        draft?.recognition = words
        draft?.lowConfidence = lowConfidence
        if let error { draft?.error = error }
        let served = actions.lazy.compactMap(\.translation).first.map { speculation(serving: $0.text, from: $0.languages.source, to: $0.languages.target) != nil }
        if served != true { dropSpeculation() }
        return Recognized(actions: actions, lowConfidence: lowConfidence, error: error)
    }
}

// MARK: - Translating and speaking

extension TurnLogic {
    /// The turn's words were translated into `text` (by `route`), the translation having started
    /// at `started`: the turn's record takes it with its time (`mtMs`), and whether a
    /// speculation made it (`speculated`). Returns the machine's actions.
    public mutating func translated(
        _ text: String, route: String?, speculated: Bool, started: ParleyClock.Instant, at now: ParleyClock.Instant
    ) -> [ConversationMachine.Action] {
        draft?.translation = text
        draft?.route = route
        draft?.mtMs = started.milliseconds(to: now)
        if speculated { draft?.speculated = true }
        return answer(.translated(text: text))
    }

    /// The translation, started at `started`, failed with `error` at `now`: the turn is kept
    /// untranslated (take it with `takeDraft`). Returns the machine's actions.
    public mutating func translationFailed(_ error: String, started: ParleyClock.Instant, at now: ParleyClock.Instant) -> [ConversationMachine.Action] {
        draft?.error = error
        draft?.mtMs = started.milliseconds(to: now)
        return handle(.translationFailed)
    }

    /// The first sample of speech played at `now`, `synthesisMs` after its synthesis started:
    /// the turn's record takes the synthesis time and, for its translation (not a `prompt`),
    /// the response time from the end of speech. Returns the machine's actions.
    public mutating func speakingStarted(synthesisMs: Int, prompt: Bool, at now: ParleyClock.Instant) -> [ConversationMachine.Action] {
        draft?.ttsMs = synthesisMs
        if let end = draft?.endOfSpeech, !prompt {
            draft?.responseMs = end.milliseconds(to: now)
        }
        return handle(.speakingStarted)
    }

    /// The speech was played (`played` samples of it), or failed with `error`; `ipa` is the
    /// translation's pronunciation. The turn is then done (take it with `takeDraft`). Returns
    /// the machine's actions.
    public mutating func speakingFinished(played: SampleTime, error: String?, ipa: String?) -> [ConversationMachine.Action] {
        if let error { draft?.error = error }
        if let ipa { draft?.ipa = ipa }
        return handle(.speakingFinished(playedSamples: played))
    }
}
