import Foundation
import Logging
import ParleyAudio
import ParleyConversation
import ParleyCore
import ParleyEndpoint
import ParleyRecognition
import ParleyTranslation
import Synchronization

/// Work done while a pause runs: the words heard so far, translated and synthesized in the
/// background before anyone knows whether the person has finished.
///
/// When the lanes judge a pause a likely end, their hypothesis is taken as it stands: its
/// translation starts on the concurrency pool, and the speech worker makes the audio into
/// memory. The utterance goes on meanwhile.
/// - If the turn ends with the same words, in the same language, the translation and the audio
///   already made are used: the reply starts as soon as recognition has finished.
/// - If speech resumes, the utterance is cancelled, a new one starts, or the turn ends with
///   other words, the speculation is dropped: its audio is never played, and it is never
///   stored or published (its translation, already running, is left to finish and ignored, so
///   a translator is never interrupted mid-answer).
///
/// Which speculation runs, its words and when it is dropped are the turn's logic's
/// (`ParleyConversation.Speculation`, pure); the runtime keeps only its translation task, under
/// its id, and tells the speech worker.
struct SpeculationWork: Sendable {
    let id: Int
    /// The translation being made; nil while the accurate pass hears the words it will translate.
    var translation: Task<RoutedTranslation, any Error>?
}

extension Interpreter {
    /// Starts a speculation on the latest judgement, unless one already runs on the same words.
    /// Called under the lock, after a lane judged a pause, and at each period of a pause.
    ///
    /// When the accurate pass gives the words, the speculation is that pass on the audio so
    /// far: the accurate worker hears it during the pause, and its words are translated and
    /// spoken into memory as soon as they are known. When the turn ends on the same audio, the
    /// worker answers from what it heard (`AccurateWorker`), and the translation and the audio
    /// are ready.
    func speculate(_ state: inout Shared) {
        let started = state.turn.speculate(accurately: hearsAccurately, canSpeak: speaking)
        forgetDroppedSpeculation(&state)
        guard let started else { return }
        let id = started.id
        switch started.start {
        case .accuratePass(let candidate, let length, let pause):
            state.speculationWork = SpeculationWork(id: id)
            guard let accurate, let sides = state.turn.utteranceSides, let speaker = state.turn.machine.state.speaker else { return }
            // Called at every period of a pause, under the capture loop's lock: the audio is
            // copied only when a new pass starts.
            logger.debug("the accurate pass starts at a pause of \(pause * 1000 / captureSampleRate) ms")
            let pass = heardSoFar(
                state.turn, through: length, speaker: speaker, sides: sides,
                streaming: [(language: candidate.language, recognition: Recognition(text: candidate.text, confidence: nil))])
            accurate.inbox.yield(
                .hear(pass, speculative: true, wanted: { [weak self] in self?.shared.withLock { $0.turn.isSpeculating(id) } ?? false }) { [weak self] heard in
                    self?.shared.withLock { state in
                        guard let self,
                            let words = state.turn.speculationHeard(
                                id: id, heard.recognition.text, language: heard.language, target: heard.target, canSpeak: self.speaking(heard.target))
                        else { return }
                        state.speculationWork = SpeculationWork(
                            id: id, translation: self.speculativeTranslation(id: id, of: words.text, from: words.language, to: words.target))
                    }
                    // A recording waiting for these words goes on (`isAwaitingAccurateWords`).
                    self?.wakeup.wake()
                })
        case .translate(let candidate):
            state.speculationWork = SpeculationWork(
                id: id, translation: speculativeTranslation(id: id, of: candidate.text, from: candidate.language, to: candidate.target))
        }
    }

    /// Has the accurate worker tell the language of the utterance's opening, its first `length`
    /// samples, while the person goes on speaking (`TurnLogic.Period.tellOpening`), where the
    /// accurate pass tells who spoke: the pass at its pause then finds it told, and Moonshine
    /// hears the words with the processor to itself. Called under the lock.
    func tellOpening(_ state: inout Shared, through length: Int) {
        let turn = state.turn
        guard let accurate, let sides = turn.utteranceSides, let speaker = turn.machine.state.speaker, hearsAccurately(sides),
            detectsSpeaker(turn, languages: turn.utteranceLanguages, sides: sides)
        else { return }
        let opening = heardSoFar(turn, through: length, speaker: speaker, sides: sides, streaming: [])
        let serial = turn.turnSerial
        // Wanted while the utterance is the one heard (its pause's or end's pass needs it).
        accurate.inbox.yield(.tell(opening, wanted: { [weak self] in self?.shared.withLock { $0.turn.turnSerial == serial } ?? false }))
    }

    /// The utterance being heard, through its first `length` samples (from its pre-roll), as the
    /// accurate pass hears it, with what the streaming lanes heard of it. Called under the lock
    /// (the audio is copied).
    private func heardSoFar(
        _ turn: TurnLogic, through length: Int, speaker: Speaker, sides: TurnLanguages, streaming: [(language: String, recognition: Recognition)]
    ) -> AccuratePass.Utterance {
        AccuratePass.Utterance(
            samples: turn.accurateAudio(through: length), expected: speaker, sides: sides,
            detect: detectsSpeaker(turn, languages: turn.utteranceLanguages, sides: sides), streaming: streaming,
            aboveFloorDB: turn.endpointer.speechAboveFloorDB, voiceFrom: turn.accurateVoiceFrom, laneLanguages: streamingLanes(turn.utteranceLanguages))
    }

    /// Translates a speculation's words on the concurrency pool, and has its audio made.
    private func speculativeTranslation(id: Int, of text: String, from language: String, to target: String) -> Task<RoutedTranslation, any Error> {
        let translator = self.translator
        return Task { [weak self] () throws -> RoutedTranslation in
            let routed = try await translator.translateNamingRoute(text, from: language, to: target)
            let translation = routed.text
            // Its audio is queued before the translation is handed on, so a turn that uses the
            // translation finds the audio made (or being made) when it speaks.
            self?.shared.withLock { state in
                guard state.turn.isSpeculating(id), !translation.isEmpty else { return }
                self?.speech.prepare(.init(id: id, text: translation, language: target))
            }
            return routed
        }
    }

    /// Forgets the work of a speculation the turn's logic dropped (or replaced): its audio is
    /// never played. Called under the lock, after whatever may have dropped it.
    func forgetDroppedSpeculation(_ state: inout Shared) {
        guard let work = state.speculationWork, !state.turn.isSpeculating(work.id) else { return }
        state.speculationWork = nil
        speech.dropPreparation()
    }

    /// The speculation's translation of `text`, if one was made from these words: waited for
    /// if still running; nil if there is none or it failed (the turn then translates afresh).
    func speculatedTranslation(of text: String, from source: String, to target: String) async -> RoutedTranslation? {
        let running = shared.withLock { state in
            state.turn.speculation(serving: text, from: source, to: target).flatMap { id in
                state.speculationWork?.id == id ? state.speculationWork?.translation : nil
            }
        }
        guard let running, let translation = try? await running.value, !translation.text.isEmpty else { return nil }
        return translation
    }
}
