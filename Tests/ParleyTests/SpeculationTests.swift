import Foundation
import ParleyConfig
import ParleyConversation
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import ParleyTesting
import Testing

/// Speculation: during a pause the words so far are translated and synthesized ahead of the
/// turn. A turn that ends on those words uses them; anything else drops them unplayed,
/// unstored and unpublished. In memory, as a recording (exact endpoints).
@Suite("Speculation, in memory")
struct SpeculationTests {
    func conversation(judging end: SentenceEnd) throws -> TestConversation {
        try EndOfTurnTests().conversation(judging: end)
    }

    /// "young man", then 400 ms of a pause that a likely end would end only at 1 s: a
    /// speculation on "young man" is running or done, and the utterance is still open.
    func pausedAfterYoungMan() async throws -> TestConversation {
        let conversation = try EndOfTurnTests().conversation(judging: SentenceEnd(probability: 0.3, words: 2, text: "young man")) {
            $0.endpoint.likelyEndMs = 1_000
        }
        conversation.recognizers.willHear("young man", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 400])
        #expect(await conversation.microphone.drained())
        return conversation
    }

    /// Samples the silent synthesizer makes for `text` (1,000 a character).
    func samples(of text: String) -> Int { text.count * 1_000 }

    @Test func aTurnEndingOnTheWordsOfThePauseUsesTheTranslationAndAudioMadeDuringIt() async throws {
        let conversation = try conversation(judging: SentenceEnd(probability: 0.3, words: 2, text: "young man"))
        conversation.recognizers.willHear("young man", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.translatedText == "[es] young man")
        #expect(turn.timings.speculated == true)
        #expect(conversation.translator.requests == ["young man"], "translated once, during the pause")
        #expect(conversation.synthesizer.texts == ["[es] young man"], "synthesized once, during the pause")
        #expect(conversation.speaker.played.count == samples(of: "[es] young man"))
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.count == 1 && stored.first?.speculated == true)
        _ = await conversation.finish()
    }

    @Test func aSpeculationOnWordsTheTurnDidNotEndWithIsNeverPlayedStoredOrPublished() async throws {
        // "cold hearted and" is judged a likely end at each pause; the sentence goes on after
        // 600 ms of the first one (before likely_end_ms, set to 1 s here, ends it).
        let conversation = try EndOfTurnTests().conversation(judging: SentenceEnd(probability: 0.3, words: 3, text: "cold hearted and")) {
            $0.endpoint.likelyEndMs = 1_000
        }
        conversation.recognizers.willHear("cold hearted and rather selfish", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 700, 600, 600, 2_000])
        let translation = try #require(await conversation.next(EventType.translation, as: TextEvent.self))
        #expect(translation.text == "[es] cold hearted and rather selfish", "the first translation published is the turn's")
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "cold hearted and rather selfish")
        #expect(turn.translatedText == "[es] cold hearted and rather selfish")
        #expect(turn.timings.speculated == nil)
        #expect(conversation.translator.requests.contains("cold hearted and"), "the pause was used")
        #expect(conversation.speaker.played.count == samples(of: "[es] cold hearted and rather selfish"), "only the turn's translation played")
        _ = await conversation.finish()
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["cold hearted and rather selfish"])
        #expect(await conversation.next(EventType.translation, as: TextEvent.self, seconds: 0.2) == nil)
    }

    @Test func aPauseWhereTheSentenceCannotEndCostsNoTranslationOrSynthesis() async throws {
        let conversation = try conversation(judging: SentenceEnd(probability: 0.002, words: 3, text: "cold hearted and"))
        conversation.recognizers.willHear("cold hearted and rather selfish", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 700, 1_000, 600])
        #expect(await conversation.microphone.drained())
        // The final pause is judged on all the words; it nears the silence limit, so it is
        // speculated on (`lateSpeculationMs`), but the thinking pause of one second was not.
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.002, words: 5, text: "cold hearted and rather selfish"), in: "en")
        conversation.microphone.silence(ms: 2_000)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "cold hearted and rather selfish" && turn.timings.endedBy == "silence")
        _ = await conversation.finish()
        #expect(conversation.translator.requests == ["cold hearted and rather selfish"], "nothing translated in the thinking pause")
        #expect(conversation.synthesizer.texts == ["[es] cold hearted and rather selfish"])
    }

    @Test func aPauseNearingTheSilenceLimitIsSpeculatedOnWhateverTheLanguageModelSaid() async throws {
        // "how about" (the last word misheard): the language model sees no end, so the silence
        // limit ends the turn; 400 ms before it, its translation and audio were made.
        let conversation = try conversation(judging: SentenceEnd(probability: 0.002, words: 2, text: "how about"))
        conversation.recognizers.willHear("how about", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.timings.endedBy == "silence" && turn.timings.pauseMs == 1_500)
        #expect(turn.timings.speculated == true)
        #expect(conversation.translator.requests == ["how about"], "translated once, during the pause")
        #expect(conversation.synthesizer.texts == ["[es] how about"])
        #expect(conversation.speaker.played.count == samples(of: "[es] how about"))
        _ = await conversation.finish()
    }

    @Test func aTurnAskedToBeRepeatedDropsItsSpeculationAndPlaysOnlyThePrompt() async throws {
        let conversation = try EndOfTurnTests().conversation(judging: SentenceEnd(probability: 0.3, words: 2, text: "young man")) {
            $0.minConfidence = 0.5
            $0.repeatPrompt = true
        }
        conversation.recognizers.willHear("young man", in: "en", confidence: 0.1)
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.lowConfidence && turn.translatedText == nil)
        _ = await conversation.finish()
        let prompt = try #require(conversation.synthesizer.texts.last)
        #expect(prompt != "[es] young man")
        #expect(conversation.speaker.played.count == samples(of: prompt), "the prompt, not the speculation")
    }

    @Test func aStopDuringASpeculationEndsTheTurnWholeAndSpeaksItOnce() async throws {
        // An unlikely end: the pause would run to silence_ms, but `stop` ends it.
        let conversation = try await pausedAfterYoungMan()
        conversation.interpreter.stopTurn()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "young man" && turn.translatedText == "[es] young man")
        #expect(turn.timings.speculated == true)
        #expect(conversation.speaker.played.count == samples(of: "[es] young man"))
        _ = await conversation.finish()
    }

    @Test func aPauseDuringASpeculationCancelsTheUtteranceAndPlaysNothing() async throws {
        let conversation = try await pausedAfterYoungMan()
        conversation.interpreter.pause()
        conversation.microphone.nudge()
        conversation.microphone.silence(ms: 20)  // the device's next period: the loop sees the pause
        #expect(await TestConversation.until { conversation.microphone.closes == 1 })
        conversation.interpreter.resume()
        #expect(await TestConversation.until { conversation.microphone.opens == 2 })
        conversation.microphone.silence(ms: 2_000)
        _ = await conversation.finish()
        #expect(conversation.recognizers.calls == [.start("en"), .cancel("en")])
        #expect(conversation.speaker.played.count == 0)
        #expect(try await conversation.history.recentTurns(limit: 5).isEmpty)
    }

    @Test func aTypedTurnDuringASpeculationIsRefusedWithAReasonAndTheSpokenTurnGoesOn() async throws {
        let conversation = try await pausedAfterYoungMan()
        await #expect(throws: ConversationRefusal.self) { try await conversation.interpreter.say(.b, text: "hola") }
        conversation.microphone.silence(ms: 2_000)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "young man" && turn.timings.speculated == true)
        #expect(conversation.speaker.played.count == samples(of: "[es] young man"))
        _ = await conversation.finish()
    }
}
