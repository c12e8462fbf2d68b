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

/// The end of a turn decided by what was said: the runtime asks the recognizer, during a pause,
/// how likely the words so far end the sentence. In memory, as a recording (the capture waits
/// for the recognizer's judgement, so the endpoints are exact).
@Suite("End of turn, in memory")
struct EndOfTurnTests {
    /// A recording in alternate mode whose English pauses are judged as `end`; `configure`
    /// changes more of the config.
    func conversation(judging end: SentenceEnd?, configure: (inout ParleyConfig) -> Void = { _ in }) throws -> TestConversation {
        var config = ParleyConfig()
        config.mode = .alternate
        configure(&config)
        let conversation = try TestConversation(config: config, realTime: false)
        conversation.recognizers.judgeEnds(end, in: "en")
        return conversation
    }

    @Test func aLikelyEndIsAnsweredAfterAShortPauseAndTheTurnSaysWhy() async throws {
        let conversation = try conversation(judging: SentenceEnd(probability: 0.3, words: 2))
        conversation.recognizers.willHear("young man", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "young man")
        #expect(turn.timings.endedBy == "language_model")
        // The first 20 ms period at or past likely_end_ms.
        let likely = ParleyConfig().endpoint.likelyEndMs
        #expect(turn.timings.pauseMs == likely)
        let stored = try await conversation.history.recentTurns(limit: 1)
        #expect(stored.first?.endedBy == "language_model" && stored.first?.pauseMs == likely)
        _ = await conversation.finish()
    }

    @Test func aThinkingPauseWhereTheSentenceCannotEndKeepsItWhole() async throws {
        let conversation = try conversation(judging: SentenceEnd(probability: 0.002, words: 3))
        conversation.recognizers.willHear("cold hearted and rather selfish", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 700, 1_000, 600, 2_000])  // "cold hearted and ..."
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "cold hearted and rather selfish")
        #expect(turn.timings.endedBy == "silence")
        #expect(turn.timings.pauseMs == 1_500, "an unlikely end waits for silence_ms")
        #expect(conversation.recognizers.calls == [.start("en"), .finish("en")], "one utterance, not two")
        _ = await conversation.finish()
    }

    @Test func withNoWordsToJudgeOnlyTheSilenceLimitEndsTheTurn() async throws {
        let conversation = try conversation(judging: nil)
        conversation.recognizers.willHear("hello", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 800, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.timings.endedBy == "silence" && turn.timings.pauseMs == 1_500)
        _ = await conversation.finish()
    }

    @Test func silenceMsSetAtRuntimeStaysTheUpperBound() async throws {
        let conversation = try conversation(judging: SentenceEnd(probability: 0.002, words: 3))
        conversation.recognizers.willHear("to be", in: "en")
        _ = try conversation.interpreter.apply(.init(silenceMs: 400))
        conversation.start()
        conversation.microphone.alternate(ms: [200, 800, 1_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.timings.endedBy == "silence" && turn.timings.pauseMs == 400)
        _ = await conversation.finish()
    }

    @Test func inAutoModeALaneThatIsAheadDoesNotEndTheTurnAlone() async throws {
        // English explains the audio better and says the sentence goes on; Spanish, "hearing"
        // English, takes its words for an end. The English lane falls behind.
        var config = ParleyConfig()
        config.mode = .auto
        let conversation = try TestConversation(config: config)
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.002, words: 3, score: -4, text: "cold hearted and"), in: "en")
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.3, words: 3, score: -6, text: "col jarte"), in: "es")
        conversation.recognizers.willHear("cold hearted and rather selfish", in: "en", score: -4, frames: 150)
        conversation.recognizers.willHear("col jarte", in: "es", score: -6, frames: 150)
        conversation.recognizers.holdJudgements(in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000])
        // The pause, period by period; from 100 ms to 400 ms each period is judged (in Spanish
        // only) before the next comes.
        for period in 1...30 {
            let judged = conversation.recognizers.judgements(in: "es")
            conversation.microphone.silence(ms: 20)
            #expect(await conversation.microphone.drained())
            if (5...19).contains(period), conversation.interpreter.snapshot.state == "hearing" {
                #expect(await TestConversation.until { conversation.recognizers.judgements(in: "es") > judged || conversation.interpreter.snapshot.state != "hearing" })
            }
        }
        #expect(conversation.interpreter.snapshot.state == "hearing", "600 ms into the pause, Spanish alone ended the turn")
        conversation.recognizers.releaseJudgements()
        conversation.microphone.silence(ms: 2_000)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "cold hearted and rather selfish")
        #expect(turn.timings.endedBy == "silence" && turn.timings.pauseMs == 1_500)
        _ = await conversation.finish()
    }
}
