import Foundation
import Logging
import ParleyControl
import ParleyCore
import ParleyHistory
import ParleyConversation
import ParleyEndpoint
import ParleyProtocol
import ParleyRecognition
import ParleyTranslation
import Synchronization

/// Performing the machine's actions, and the workers' results coming back.
extension Interpreter {
    /// `serial`: the turn the actions belong to (`TurnLogic.turnSerial`, read under the lock
    /// that decided them; nil: the current one).
    func perform(_ actions: [ConversationMachine.Action], serial: Int? = nil) {
        for action in actions {
            switch action {
            case .startRecognition, .cancelRecognition:
                break  // queued by `locked`
            case .resumeRecognition(let speaker, _):
                // Queued by `locked`; the lanes go on from the withdrawn end.
                logger.debug("the end of the utterance was withdrawn: the person went on", metadata: ["speaker": "\(speaker.rawValue)"])
            case .finishRecognition(let speaker, let languages):
                // The work was queued by `locked`.
                publish(EventType.speechEnd, speaker: speaker, language: languages.source)
            case .translate(let speaker, let text, let languages):
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                translationInbox.yield((speaker, text, languages, serial ?? shared.withLock { $0.turn.turnSerial }))
            case .speak(let speaker, let text, let language):
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                say(text, in: language, to: speaker.other, prompt: false)
            case .askToRepeat(let speaker, let language):
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                say(RepeatPrompt.text(for: language), in: language, to: speaker, prompt: true)
            case .tellUntranslated(let speaker, let language):
                // The failed turn is already stored; `language` is the one it was spoken in.
                guard !closing.load(ordering: .relaxed) else { abandonTurn(); continue }
                say(UntranslatedNotice.text(for: language), in: language, to: speaker, prompt: true)
            case .stopSpeaking:
                speech.stop()
            case .reportNoSpeech(let speaker):
                logger.info("nothing recognized; still listening", metadata: ["speaker": "\(speaker.rawValue)"])
                publish(EventType.noSpeech, speaker: speaker)
            case .stateChanged(let state):
                logger.debug("state", metadata: ["state": "\(state.name)", "speaker": "\(state.speaker?.rawValue ?? "-")"])
                if case .hearing(let speaker, _) = state {
                    let decided = shared.withLock { speakerDecided($0.turn) }
                    let language = snapshot.settings.language(of: speaker)
                    events.publish(EventType.speechStart, SpeakerEvent(speaker: speaker.rawValue, language: language, decided: decided))
                }
                publishState()
                wakeup.wake()
            case .releaseCapture, .reopenCapture:
                wakeup.wake()  // the capture loop follows `userPaused`
            case .resetEndpointer:
                break  // applied by `TurnLogic.handle`
            }
        }
    }

    /// Shutting down: the turn in flight is stored as it stands (untranslated or unspoken), and
    /// whoever waits for it (`say`) is answered.
    func abandonTurn() {
        if let taken = shared.withLock({ $0.takeDraft(for: recorder) }) {
            record(taken.draft, waiter: taken.waiter)
        }
    }

    /// The utterance's words, from `speaker` (decided by `detection` in auto mode).
    func recognized(
        _ finished: Recognition, speaker: Speaker, language: String, target: String, detection: SpeakerDetection?, serial: Int
    ) {
        let actions = shared.withLock { state -> [ConversationMachine.Action]? in
            // Its end was withdrawn (the person went on): the whole utterance is heard later.
            guard state.turn.turnSerial == serial else { return nil }
            
            let heard = state.turn.recognized(
                finished, from: speaker, language: language, target: target, detection: detection, minConfidence: state.settings.minConfidence,
                at: clock.now)
            // A speculation on other words (or a turn that will not be translated) was dropped.
            forgetDroppedSpeculation(&state)
            return heard.actions
        }
        guard let actions else {
            logger.debug("the words of an utterance whose end was withdrawn are dropped")
            return
        }
        if !finished.text.isEmpty {
            events.publish(
                EventType.transcript,
                TextEvent(
                    speaker: speaker.rawValue, language: language, text: finished.text, confidence: finished.confidence,
                    words: finished.words.isEmpty ? nil : finished.wordConfidences, detection: detection, engine: finished.engine))
        }
        perform(actions, serial: serial)
    }

    /// Translates turns one at a time, as the machine asks for them, until the runtime ends.
    func translateTurns() async {
        for await (speaker, text, languages, serial) in translations {
            await translate(text, spokenBy: speaker, in: languages, serial: serial)
        }
    }

    private func translate(_ text: String, spokenBy speaker: Speaker, in languages: TurnLanguages, serial: Int) async {
        let (source, target) = (languages.source, languages.target)
        let replayed = shared.withLock { $0.turn.replayedTranslation }
        let started = clock.now
        do {
            let speculated = replayed == nil ? await speculatedTranslation(of: text, from: source, to: target) : nil
            let routed =
                if let replayed { RoutedTranslation(text: replayed, route: nil) } else if let speculated { speculated } else {
                    try await translator.translateNamingRoute(text, from: source, to: target)
                }
            let translation = routed.text
            guard !translation.isEmpty else {
                throw TranslationError("the translation of the \(source) text came back empty")
            }
            let done = clock.now
            let actions = shared.withLock { state -> [ConversationMachine.Action]? in
                // The person went on after a pause (the end was withdrawn): not this turn's.
                guard state.turn.turnSerial == serial else { return nil }
                return state.turn.translated(translation, route: routed.route, speculated: speculated != nil, started: started, at: done)
            }
            guard let actions else {
                logger.debug("the translation of an utterance whose end was withdrawn is dropped")
                return
            }
            events.publish(EventType.translation, TextEvent(speaker: speaker.rawValue, language: target, text: translation, route: routed.route))
            perform(actions)
            // A recording waiting for this turn reads on if its answer is held (`mayGoOn`).
            wakeup.wake()
        } catch {
            guard shared.withLock({ $0.turn.turnSerial == serial }) else { return }
            report("translation failed; the turn is kept untranslated: \(error)")
            let (actions, taken) = shared.withLock { state in
                (state.turn.translationFailed("\(error)", started: started, at: clock.now), state.takeDraft(for: recorder))
            }
            if let taken { record(taken.draft, waiter: taken.waiter) }
            perform(actions)
        }
    }

    /// Speaks `text` to `listener`: a translation, or a prompt to the speaker in their own
    /// language (not timed as the turn's response, no IPA).
    private func say(_ text: String, in language: String, to listener: Speaker, prompt: Bool) {
        speech.speak(
            .init(
                text: text, language: language, wantsIPA: !prompt,
                started: { [self] synthesisMs in
                    let actions = shared.withLock { state in
                        state.turn.speakingStarted(synthesisMs: synthesisMs, prompt: prompt, at: clock.now)
                    }
                    publish(EventType.speakingStart, speaker: listener, language: language)
                    perform(actions)
                },
                finished: { [self] outcome in
                    if let error = outcome.error {
                        report("speech output failed: \(error)")
                    }
                    publish(EventType.speakingEnd, speaker: listener, language: language)
                    let (actions, taken) = shared.withLock { state in
                        (
                            state.turn.speakingFinished(played: outcome.played, error: outcome.error, ipa: outcome.ipa),
                            state.takeDraft(for: recorder)
                        )
                    }
                    if let taken { record(taken.draft, waiter: taken.waiter) }
                    perform(actions)
                }))
    }

    // MARK: - Events and history

    func publish(_ type: String, speaker: Speaker, language: String? = nil) {
        let language = language ?? snapshot.settings.language(of: speaker)
        events.publish(type, SpeakerEvent(speaker: speaker.rawValue, language: language))
    }

    func publishState() {
        let snapshot = self.snapshot
        events.publish(EventType.state, StateEvent(state: snapshot.state, speaker: snapshot.speaker?.rawValue, decided: snapshot.decided))
        observer?.stateChanged(snapshot)
    }

    /// Stores a turn taken with `takeDraft`, and tells whoever waits for it.
    func record(_ draft: TurnDraft, waiter: TurnWaiter?) {
        recorder.record(
            draft, waiter: waiter, stored: { [self] in shared.withLock { $0.turnCount += 1 } },
            failed: { [self] in report($0) })
    }
}
