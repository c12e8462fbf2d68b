import Foundation
import Logging
import ParleyAudio
import ParleyConfig
import ParleyControl
import ParleyConversation
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyTranslation
import Synchronization

/// What clients ask of the conversation: who speaks, stop, pause, typed turns, settings.
extension Interpreter {
    /// Push-to-talk: `speaker` speaks next.
    public func listen(_ speaker: Speaker) throws(ConversationRefusal) {
        guard isHearable(speaker) else {
            throw ConversationRefusal("speaker \(speaker.rawValue) cannot be heard (no speech model); they can type with `parley say`")
        }
        perform(shared.withLock { $0.handle(.listen(speaker)) })
    }

    /// Ends the utterance being heard, or cuts the speech being played; says which it did (nil:
    /// nothing was heard or played, and nothing changed).
    @discardableResult
    public func stopTurn() -> StopOutcome? {
        let actions = locked { $0.handle(.stop) }
        perform(actions)
        for action in actions {
            switch action {
            case .stopSpeaking: return .speech
            case .finishRecognition: return .utterance
            default: continue
            }
        }
        return nil
    }

    /// Releases the microphone; a turn in flight finishes first.
    public func pause() {
        perform(locked { $0.turn.microphone(.paused).actions })
        wakeup.wake()
    }

    /// Takes the microphone back.
    public func resume() {
        perform(shared.withLock { $0.turn.microphone(.resumed).actions })
        wakeup.wake()
    }

    /// A typed turn: translated, spoken and logged. Returns once the turn is committed.
    public func say(_ speaker: Speaker, text: String) async throws -> TurnRecord {
        let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !words.isEmpty else { throw ConversationRefusal("the text is empty; give the words to translate") }
        return try await typedTurn(speaker, text: words, languages: nil, replaying: nil)
    }

    /// Speaks a past turn's translation again, as a turn of its speaker (echo guard and all),
    /// without translating or storing it again. Returns once it was spoken.
    public func replay(_ turn: TurnRecord) async throws -> TurnRecord {
        let speaker = turn.speaker
        guard let translation = turn.translatedText else {
            throw ConversationRefusal("turn \(turn.id ?? 0) has no translation to speak")
        }
        let languages = TurnLanguages(source: turn.sourceLang, target: turn.targetLang)
        return try await typedTurn(speaker, text: turn.sourceText, languages: languages, replaying: (turn, translation))
    }

    /// Starts a turn that did not come from the microphone, if the machine takes it now; in
    /// `languages`, else the settings' (the turn is recorded in the languages the machine
    /// fixed). `replaying`: a past turn spoken again, with its translation.
    private func typedTurn(
        _ speaker: Speaker, text: String, languages: TurnLanguages?, replaying: (turn: TurnRecord, translation: String)?
    ) async throws -> TurnRecord {
        try await withCheckedThrowingContinuation { continuation in
            let actions = shared.withLock { state -> [ConversationMachine.Action] in
                guard !closing.load(ordering: .relaxed) else { return [] }
                let actions = state.turn.typed(speaker, text: text, languages: languages, translation: replaying?.translation, at: clock.now)
                guard !actions.isEmpty else { return [] }
                // The last spoken turn's speculation serves no typed turn (even on the same words).
                forgetDroppedSpeculation(&state)
                state.waiter = TurnWaiter(completion: { continuation.resume(with: $0) }, replaying: replaying?.turn)
                return actions
            }
            guard !actions.isEmpty else {
                continuation.resume(throwing: ConversationRefusal("busy with a turn (\(snapshot.state)); try again when Parley is listening"))
                return
            }
            perform(actions)
        }
    }

    /// What `set` can change (the wire's own type, checked there); nil fields stay as they are.
    public typealias Change = SettingsChange

    /// Changes settings; languages and mode apply from the next turn. Throws, changing nothing,
    /// when a language cannot be spoken or translated.
    @discardableResult
    public func apply(_ change: Change) throws(ConversationRefusal) -> RuntimeSettings {
        try settingsChange.withLock { _ throws(ConversationRefusal) in
            var next = snapshot.settings
            next.speakerA = change.speakerA ?? next.speakerA
            next.speakerB = change.speakerB ?? next.speakerB
            next.mode = change.mode ?? next.mode
            next.silenceMs = change.silenceMs ?? next.silenceMs
            next.echoTailMs = change.echoTailMs ?? next.echoTailMs
            next.minConfidence = change.minConfidence ?? next.minConfidence
            try check(next)
            return commit(next)
        }
    }

    /// Exchanges the two speakers' languages, from the next turn.
    @discardableResult
    public func swapLanguages() -> RuntimeSettings {
        settingsChange.withLock { _ in
            var next = snapshot.settings
            swap(&next.speakerA, &next.speakerB)
            return commit(next)
        }
    }

    private func check(_ settings: RuntimeSettings) throws(ConversationRefusal) {
        for (key, language) in [("speaker_a", settings.speakerA), ("speaker_b", settings.speakerB)] {
            guard language.count == 2, language.allSatisfy({ $0.isASCII && $0.isLowercase }) else {
                throw ConversationRefusal("\(key) \"\(language)\" is not a two-letter ISO 639-1 code such as \"en\"")
            }
            guard canSpeak(language) else {
                throw ConversationRefusal("\(key): espeak-ng has no voice for \"\(language)\"; see `espeak-ng --voices`")
            }
        }
        guard settings.speakerA != settings.speakerB else {
            throw ConversationRefusal("speaker_a and speaker_b are both \"\(settings.speakerA)\"; give them different languages")
        }
        for pair in [LanguagePair(settings.speakerA, settings.speakerB), LanguagePair(settings.speakerB, settings.speakerA)]
        where !translator.supports(pair) {
            let translator = self.translator
            let hint = TranslationHints.missingRoute(source: pair.source, target: pair.target) { translator.supports(LanguagePair($0, $1)) }
            throw ConversationRefusal("no installed translation for \(pair), so \(settings.speakerA)-\(settings.speakerB) is not taken; \(hint)")
        }
        func refusal<T: Comparable>(_ key: String, _ range: ClosedRange<T>) -> ConversationRefusal {
            ConversationRefusal("\(key) must be from \(range.lowerBound) to \(range.upperBound)")
        }
        guard SettingBounds.silenceMs.contains(settings.silenceMs) else { throw refusal("silence_ms", SettingBounds.silenceMs) }
        guard SettingBounds.echoTailMs.contains(settings.echoTailMs) else { throw refusal("echo_tail_ms", SettingBounds.echoTailMs) }
        guard SettingBounds.minConfidence.contains(settings.minConfidence) else { throw refusal("min_confidence", SettingBounds.minConfidence) }
    }

    private func commit(_ settings: RuntimeSettings) -> RuntimeSettings {
        let hearable = Self.hearable(settings, hearing)
        let actions = shared.withLock { state -> [ConversationMachine.Action] in
            state.settings = settings
            var machineSettings = state.turn.machine.settings
            machineSettings.mode = settings.mode
            machineSettings.echoTail = samples(ms: settings.echoTailMs)
            machineSettings.hearable = hearable
            machineSettings.languageA = settings.speakerA
            machineSettings.languageB = settings.speakerB
            return state.turn.reconfigure(
                machineSettings, silenceMs: settings.silenceMs, dualDecoding: Self.dualDecoding(settings, hearing: hearing, laneKey: laneKey))
        }
        perform(actions)
        // Keep the new languages' engines warm before their first turn.
        for language in [settings.speakerA, settings.speakerB] {
            lane(for: language).inbox.yield(.warm(language: language))
        }
        let translator = self.translator
        Task {
            for pair in [LanguagePair(settings.speakerA, settings.speakerB), LanguagePair(settings.speakerB, settings.speakerA)] {
                try? await translator.prepare(pair)
            }
        }
        logger.notice("settings changed", metadata: ["a": "\(settings.speakerA)", "b": "\(settings.speakerB)", "mode": "\(settings.mode.rawValue)"])
        publishState()
        return settings
    }
}
