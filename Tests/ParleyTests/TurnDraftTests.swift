import ParleyCore
import ParleyEndpoint
import ParleyRecognition
import Testing
@testable import ParleyConversation

private let enEs = TurnLanguages(source: "en", target: "es")

/// An instant `ms` after the runtime's clock was made.
private func at(_ ms: Int) -> ParleyClock.Instant { ParleyClock.Instant(offset: .milliseconds(ms)) }

/// A turn by A that has just ended: its words, a pause the language model ends ("go forward"),
/// the turn recorded from 10 s on the runtime's clock; speculating (by translation) as the
/// runtime would.
private func endedTurn(judging text: String = "go forward", repeatPrompt: Bool = false) throws -> Drive {
    var drive = Drive(repeatPrompt: repeatPrompt)
    drive.speculating = { _ in false }
    drive.feed(Drive.background + Drive.words + Drive.pause(ms: 400)) { _ in [("en", SentenceEnd(probability: 0.4, words: 2, text: text))] }
    let ended = try #require(drive.actions.lazy.compactMap { action -> (Speaker, TurnLanguages)? in
        guard case .finishRecognition(let speaker, let languages) = action else { return nil }
        return (speaker, languages)
    }.first)
    drive.logic.recognitionFinishing(ended.0, ended.1, at: at(10_000))
    return drive
}

/// A turn by A whose pause runs (a likely end would end it only at 1 s): a speculation on
/// "young man" was started, the utterance is still open.
private func pausedTurn(accurately: Bool = false) -> Drive {
    var endpoint = EndpointSettings()
    endpoint.likelyEndMs = 1_000
    var drive = Drive(endpoint: endpoint)
    drive.speculating = { _ in accurately }
    drive.feed(Drive.background + Drive.words + Drive.pause(ms: 400)) { _ in [("en", SentenceEnd(probability: 0.3, words: 2, text: " young man"))] }
    return drive
}

@Suite("The turn's record and timings, from given instants")
struct TurnDraftTests {
    @Test func aSpokenTurnIsRecordedWithWhatEndedItAndEveryTimingFromTheInstantsGiven() throws {
        var drive = try endedTurn()
        let pause = try #require(drive.logic.utteranceEnd?.pause)
        #expect(drive.logic.draft?.endedBy == "language_model")
        // The language model ended it as soon as `likely_end_ms` of pause had run.
        let likely = EndpointSettings().likelyEndMs
        #expect(drive.logic.draft?.pauseMs == likely)
        #expect(pause == Int64(likely * 16))
        let detection = SpeakerDetection(decidedBy: .audio, scores: ["en": -3.5, "es": -6.0], rivalLanguage: "es", rivalText: "go for")
        let words = Recognition(text: "go forward", confidence: 0.9)
        let heard = drive.logic.recognized(words, from: .a, language: "en", target: "es", detection: detection, minConfidence: 0.5, at: at(10_350))
        #expect(heard.actions == [.stateChanged(.translating(.a)), .translate(.a, text: "go forward", enEs)])
        let translated = drive.logic.translated("avanza", route: "apertium", speculated: true, started: at(10_360), at: at(10_485))
        #expect(translated == [.stateChanged(.speaking(.a)), .speak(.a, text: "avanza", language: "es")])
        #expect(drive.logic.speakingStarted(synthesisMs: 12, prompt: false, at: at(10_530)).isEmpty)
        _ = drive.logic.speakingFinished(played: 16_000, error: nil, ipa: "aβanθa")
        var expected = TurnDraft(speaker: .a, sourceLang: "en", targetLang: "es", endOfSpeech: at(10_000))
        expected.recognition = words
        expected.detection = detection
        expected.translation = "avanza"
        expected.route = "apertium"
        expected.ipa = "aβanθa"
        expected.asrMs = 350
        expected.mtMs = 125
        expected.ttsMs = 12
        expected.responseMs = 530
        expected.endedBy = "language_model"
        expected.pauseMs = likely
        expected.speculated = true
        #expect(drive.logic.takeDraft() == expected)
        #expect(drive.logic.takeDraft() == nil, "taken once")
    }

    @Test func aThinkingPauseIsEndedBySilenceAndItsPauseIsRecorded() throws {
        var drive = Drive()
        drive.feed(Drive.background + Drive.words + Drive.pause(ms: 1600)) { _ in [("en", SentenceEnd(probability: 0.001, words: 2, text: "and then"))] }
        drive.logic.recognitionFinishing(.a, enEs, at: at(0))
        #expect(drive.logic.draft?.endedBy == "silence")
        #expect(drive.logic.draft?.pauseMs == 1_500)
    }

    @Test func doubtfulWordsFlagTheRecordAndAPromptIsNotTheResponse() throws {
        var drive = try endedTurn(repeatPrompt: true)
        let heard = drive.logic.recognized(
            Recognition(text: "mumble", confidence: 0.3), from: .a, language: "en", target: "es", minConfidence: 0.5, at: at(10_200))
        #expect(heard.actions == [.stateChanged(.speaking(.a)), .askToRepeat(.a, language: "en")])
        _ = drive.logic.speakingStarted(synthesisMs: 8, prompt: true, at: at(10_300))
        let draft = try #require(drive.logic.draft)
        #expect(draft.lowConfidence && draft.error == "low confidence; the speaker was asked to repeat")
        #expect(draft.asrMs == 200 && draft.ttsMs == 8)
        #expect(draft.responseMs == nil, "the prompt is not the turn's response")
    }

    @Test func aFailedTranslationKeepsTheTurnUntranslatedWithItsTime() throws {
        var drive = try endedTurn()
        _ = drive.logic.recognized(Recognition(text: "go forward", confidence: 0.9), from: .a, language: "en", target: "es", minConfidence: 0.5, at: at(10_100))
        let actions = drive.logic.translationFailed("no route", started: at(10_100), at: at(12_600))
        #expect(actions == [.stateChanged(.listening(.a))])
        let taken = drive.logic.takeDraft()
        let draft = try #require(taken)
        #expect(draft.error == "no route" && draft.mtMs == 2_500 && draft.translation == nil && draft.speculated == nil)
    }

    @Test func aTypedTurnIsRecordedInTheMachinesLanguagesAndAReplayKeepsItsTranslation() throws {
        var logic = Drive().logic
        let typed = logic.typed(.b, text: "hola", languages: nil, at: at(3_000))
        #expect(typed == [.stateChanged(.translating(.b)), .translate(.b, text: "hola", enEs.swapped)])
        var expected = TurnDraft(speaker: .b, sourceLang: "es", targetLang: "en", endOfSpeech: at(3_000))
        expected.recognition = Recognition(text: "hola", confidence: nil)
        #expect(logic.draft == expected)
        #expect(logic.replayedTranslation == nil, "translated")
        // Busy translating: refused, the turn in flight untouched.
        #expect(logic.typed(.a, text: "hello", languages: nil, at: at(3_100)).isEmpty)
        #expect(logic.draft == expected)

        var replay = Drive().logic
        #expect(!replay.typed(.a, text: "go forward", languages: enEs.swapped, translation: "avanza", at: at(0)).isEmpty)
        #expect(replay.replayedTranslation == "avanza")
        #expect(replay.draft?.sourceLang == "es" && replay.draft?.replayed == true)
    }
}

@Suite("A speculation's life, sample by sample")
struct SpeculationLifeTests {
    @Test func aPauseStartsOneSpeculationAndTheSameWordsJudgedAgainKeepIt() throws {
        let drive = pausedTurn()
        let candidate = SpeculationCandidate(text: "young man", language: "en", target: "es")
        // Judged at every period of the pause: one start.
        #expect(drive.started == [TurnLogic.Speculating(start: .translate(candidate), id: 1)])
        #expect(drive.logic.speculation == Speculation(id: 1, words: candidate, heardSamples: nil))
        #expect(drive.logic.speculation(serving: "young man", from: "en", to: "es") == 1)
        #expect(drive.logic.speculation(serving: "young man", from: "en", to: "fr") == nil)
        #expect(drive.logic.speculation(serving: "young men", from: "en", to: "es") == nil)
    }

    @Test func speechThatResumesDropsItAndTheNextPauseStartsAnother() throws {
        var drive = pausedTurn()
        drive.feed(Drive.words) { _ in [("en", SentenceEnd(probability: 0.3, words: 4, text: "young man over there"))] }
        #expect(drive.logic.speculation == nil)
        drive.feed(Drive.pause(ms: 400)) { _ in [("en", SentenceEnd(probability: 0.3, words: 4, text: "young man over there"))] }
        #expect(drive.logic.speculation?.id == 2)
        #expect(drive.logic.speculation?.words?.text == "young man over there")
        #expect(drive.logic.speculationCount == 2)
    }

    @Test func aCancelledOrNewUtteranceDropsIt() throws {
        var paused = pausedTurn()
        #expect(paused.logic.speculation != nil)
        _ = paused.logic.microphone(.paused)
        #expect(paused.logic.machine.state == .paused(next: .a))
        #expect(paused.logic.speculation == nil, "the utterance was cancelled")

        var restarted = pausedTurn()
        _ = restarted.logic.absorb([.startRecognition(.a, enEs)])
        #expect(restarted.logic.speculation == nil, "a new utterance")
    }

    @Test func aTurnEndingOnTheSameWordsKeepsItAndOtherWordsDropIt() throws {
        var same = try endedTurn()
        let id = try #require(same.logic.speculation?.id)
        _ = same.logic.recognized(Recognition(text: " go forward", confidence: 0.9), from: .a, language: "en", target: "es", minConfidence: 0.5, at: at(10_100))
        #expect(same.logic.speculation(serving: "go forward", from: "en", to: "es") == id)

        var other = try endedTurn()
        _ = other.logic.recognized(Recognition(text: "go further", confidence: 0.9), from: .a, language: "en", target: "es", minConfidence: 0.5, at: at(10_100))
        #expect(other.logic.speculation == nil)
        // Nothing heard: no translation, so nothing served.
        var none = try endedTurn()
        _ = none.logic.recognized(Recognition(text: "", confidence: nil), from: .a, language: "en", target: "es", minConfidence: 0.5, at: at(10_100))
        #expect(none.logic.speculation == nil)
        // A typed turn is never served by a spoken turn's speculation.
        var typed = try endedTurn()
        _ = typed.logic.recognized(Recognition(text: "go forward", confidence: 0.9), from: .a, language: "en", target: "es", minConfidence: 0.5, at: at(10_100))
        _ = typed.logic.translated("avanza", route: nil, speculated: true, started: at(10_100), at: at(10_110))
        _ = typed.logic.speakingFinished(played: 0, error: nil, ipa: nil)
        #expect(typed.logic.speculation?.id == id)
        #expect(!typed.logic.typed(.a, text: "go forward", languages: nil, at: at(20_000)).isEmpty)
        #expect(typed.logic.speculation == nil)
    }

    @Test func withNoWordsFromTheLanesTheAccuratePassHearsTheAudioAloneNearTheSilenceLimit() throws {
        // A language no lane hears (Whisper alone): the lanes answer without words.
        for accurately in [true, false] {
            var drive = Drive()
            drive.speculating = { _ in accurately }
            let limit = EndpointSettings().silenceMs - TurnLogic.lateSpeculationMs
            drive.feed(Drive.background + Drive.words + Drive.pause(ms: limit - 100)) { _ in [("en", nil)] }
            #expect(drive.started.isEmpty, "a thinking pause costs nothing before \(limit) ms")
            drive.feed(Drive.pause(ms: 200)) { _ in [("en", nil)] }
            guard accurately else {
                #expect(drive.started.isEmpty, "no words to translate without the accurate pass")
                continue
            }
            let first = try #require(drive.started.first)
            #expect(drive.started.count == 1)
            guard case .accuratePass(let candidate, _, _) = first.start else {
                Issue.record("expected the accurate pass, got \(first.start)")
                continue
            }
            #expect(candidate == SpeculationCandidate(text: "", language: "en", target: "es"), "the expected speaker's language")
        }
    }

    @Test func theAccuratePassHearsThePauseOnceAndItsWordsAreThenServed() throws {
        var drive = pausedTurn(accurately: true)
        let first = try #require(drive.started.first)
        guard case .accuratePass(_, let samples, _) = first.start else {
            Issue.record("expected the accurate pass, got \(first.start)")
            return
        }
        #expect(drive.started.count == 1, "the pause grows; the audio the pass keeps of it does not")
        #expect(drive.logic.speculation == Speculation(id: first.id, words: nil, heardSamples: samples))
        #expect(drive.logic.speculation(serving: "young man", from: "en", to: "es") == nil, "nothing translated yet")
        #expect(drive.logic.speculationHeard(id: first.id + 1, "young man", language: "en", target: "es", canSpeak: true) == nil, "another one's words")
        #expect(drive.logic.speculationHeard(id: first.id, "  ", language: "en", target: "es", canSpeak: true) == nil, "no words")
        #expect(drive.logic.speculationHeard(id: first.id, "young man", language: "en", target: "es", canSpeak: false) == nil, "no voice")
        let words = drive.logic.speculationHeard(id: first.id, " young man ", language: "en", target: "es", canSpeak: true)
        #expect(words == SpeculationCandidate(text: "young man", language: "en", target: "es"))
        #expect(drive.logic.isSpeculating(first.id))
        #expect(drive.logic.speculation(serving: "young man", from: "en", to: "es") == first.id)
    }
}
