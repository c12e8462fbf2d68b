import Foundation
import ParleyConfig
import ParleyConversation
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import ParleyTesting
import Testing

/// The edges of a turn that issue 14 names: a person who talks past `max_speech_ms`, a
/// background that never falls silent, a cough right after the sentence. None may lose a turn
/// or play a half-made one. In memory, as a recording (exact endpoints); every pause is judged
/// a likely end on "young man", so a speculation starts at each one.
@Suite("Edges of a turn, in memory")
struct TurnEdgeCaseTests {
    /// Samples the silent synthesizer makes for `text` (1,000 a character).
    func samples(of text: String) -> Int { text.count * 1_000 }

    func conversation(maxSpeechMs: Int = 20_000) throws -> TestConversation {
        try EndOfTurnTests().conversation(judging: SentenceEnd(probability: 0.3, words: 2, text: "young man")) {
            $0.endpoint.maxSpeechMs = maxSpeechMs
        }
    }

    func turns(_ conversation: TestConversation, count: Int) async throws -> [TurnInfo] {
        var turns: [TurnInfo] = []
        for _ in 0..<count { turns.append(try #require(await conversation.next(EventType.turn, as: TurnInfo.self))) }
        return turns
    }

    @Test func aCoughRightAfterTheSentenceKeepsOneTurnSpokenOnce() async throws {
        let conversation = try conversation()
        conversation.recognizers.willHear("young man", in: "en")
        conversation.start()
        // The sentence, 120 ms of pause (judged a likely end: a speculation starts), a 160 ms
        // cough (the pause is over: the speculation is dropped), then silence.
        conversation.microphone.alternate(ms: [200, 1_000, 120, 160, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "young man" && turn.translatedText == "[es] young man")
        #expect(turn.timings.endedBy == "language_model")
        #expect(turn.timings.pauseMs == ParleyConfig().endpoint.likelyEndMs, "the pause counts from the end of the cough")
        _ = await conversation.finish()
        #expect(conversation.recognizers.calls == [.start("en"), .finish("en")], "one utterance")
        #expect(conversation.speaker.played.count == samples(of: "[es] young man"), "spoken once")
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["young man"])
    }

    @Test func talkingPastTheMaximumCutsTheTurnAndTheRestIsTheNextTurn() async throws {
        let conversation = try conversation(maxSpeechMs: 2_000)
        conversation.recognizers.willHear("the first part", in: "en")
        // Alternate mode: the next utterance is the other side's.
        conversation.recognizers.willHear("the rest", in: "es")
        conversation.start()
        // A pause of 150 ms starts a speculation; the person goes on, past max_speech_ms.
        conversation.microphone.alternate(ms: [200, 800, 150, 2_500, 2_000])
        let (first, second) = try await { let both = try await turns(conversation, count: 2); return (both[0], both[1]) }()
        #expect(first.sourceText == "the first part" && first.timings.endedBy == "max_length")
        #expect(first.timings.speculated == nil, "the speculation of the pause was dropped when speech resumed")
        #expect(second.sourceText == "the rest" && second.translatedText == "[en] the rest")
        _ = await conversation.finish()
        #expect(
            conversation.speaker.played.count == samples(of: "[es] the first part") + samples(of: "[en] the rest"),
            "both turns whole, nothing of the speculation on \"young man\"")
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(Set(stored.map(\.sourceText)) == ["the first part", "the rest"])
    }

    @Test func aBackgroundThatNeverFallsSilentIsCutOnceThenLearnedAndSpeechIsHeardAgain() async throws {
        let conversation = try conversation(maxSpeechMs: 2_000)
        conversation.recognizers.willHear("", in: "en")  // the noise: no words
        conversation.recognizers.willHear("young man", in: "en")
        conversation.start()
        // A quiet room, then six seconds of a steady loud background: one cut at
        // max_speech_ms, after which that level is the noise floor and no longer speech.
        conversation.microphone.silence(ms: 400)
        conversation.microphone.speech(ms: 6_000)
        // The room goes quiet again, and a person speaks.
        conversation.microphone.alternate(ms: [600, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "young man")
        _ = await conversation.finish()
        let starts = conversation.recognizers.calls.filter { if case .start = $0 { true } else { false } }
        #expect(starts.count == 2, "one cut of the noise, then the sentence: \(conversation.recognizers.calls)")
        #expect(conversation.speaker.played.count == samples(of: "[es] young man"), "nothing spoken for the noise")
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["young man"])
    }
}
