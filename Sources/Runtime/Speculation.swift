import Foundation
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
struct Speculation: Sendable {
    let id: Int
    let text: String
    let language: String
    let target: String
    let translation: Task<String, any Error>

    /// Whether this speculation translated `text` from `language` into `target`.
    func serves(_ text: String, from language: String, to target: String) -> Bool {
        self.text == text && self.language == language && self.target == target
    }
}

extension Interpreter.Shared {
    /// What a speculation would translate now: the hypothesis of the language that explains the
    /// audio best, at the latest audio every language of the utterance has judged (nil when
    /// nothing was heard). Only while the utterance's end is undecided or being recognized, and
    /// a pause is on, and only where the language model takes the words for a likely end
    /// (`end_probability`), or the pause has run to within `lateSpeculationMs` of the silence
    /// limit (a last word misheard, whose end the language model cannot see): a thinking pause
    /// after "and" costs no translation or synthesis for its first second, and the person who
    /// goes on speaking competes with none for the processor.
    var speculationCandidate: (text: String, language: String, target: String)? {
        var late = false
        switch machine.state {
        case .hearing(_, _):
            guard let pause = endpointer.pause else { return nil }
            let limit = SampleTime(endpointer.settings.silenceMs - Interpreter.lateSpeculationMs) * SampleTime(endpointer.sampleRate) / 1000
            late = pause >= limit
        case .recognizing(_): break
        default: return nil
        }
        guard let sides = utteranceSides, let (language, end, through) = bestJudgement,
            end.probability >= endpointer.settings.endProbability || late
        else { return nil }
        // A late judgement of an earlier pause (a lane that lags) speaks for old words.
        if case .hearing = machine.state, through < endpointer.cueFrom { return nil }
        let text = end.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        return (text, language, language == sides.speaker ? sides.other : sides.speaker)
    }
}

extension Interpreter {
    /// A pause this close to `silence_ms` is speculated on whatever the language model said:
    /// the silence limit will most likely end it, and its translation and audio are then ready
    /// (Apertium and espeak-ng take well under this). Thinking pauses of up to a second cost
    /// nothing with the default 1.5 s limit.
    static let lateSpeculationMs = 400

    /// Starts a speculation on the latest judgement, unless one already runs on the same words.
    /// Called under the lock, after a lane judged a pause, and at each period of a pause.
    func speculate(_ state: inout Shared) {
        guard let candidate = state.speculationCandidate, speaking(candidate.target) else { return }
        if let running = state.speculation, running.serves(candidate.text, from: candidate.language, to: candidate.target) { return }
        dropSpeculation(&state)
        state.speculations += 1
        let id = state.speculations
        let translator = self.translator
        let translation = Task { [weak self] () throws -> String in
            let translation = try await translator.translate(candidate.text, from: candidate.language, to: candidate.target)
            // Its audio is queued before the translation is handed on, so a turn that uses the
            // translation finds the audio made (or being made) when it speaks.
            self?.shared.withLock { state in
                guard state.speculation?.id == id, !translation.isEmpty else { return }
                self?.speech.prepare(.init(id: id, text: translation, language: candidate.target))
            }
            return translation
        }
        state.speculation = Speculation(id: id, text: candidate.text, language: candidate.language, target: candidate.target, translation: translation)
    }

    /// Forgets the speculation: its audio is never played.
    func dropSpeculation(_ state: inout Shared) {
        guard state.speculation != nil else { return }
        state.speculation = nil
        speech.dropPreparation()
    }

    /// The speculation's translation of `text`, if one was made from these words: waited for
    /// if still running; nil if there is none or it failed (the turn then translates afresh).
    func speculatedTranslation(of text: String, from source: String, to target: String) async -> String? {
        let running = shared.withLock { state in
            state.speculation.flatMap { $0.serves(text, from: source, to: target) ? $0.translation : nil }
        }
        guard let running, let translation = try? await running.value, !translation.isEmpty else { return nil }
        return translation
    }
}
