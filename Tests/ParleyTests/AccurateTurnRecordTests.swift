import Foundation
import ParleyConfig
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import ParleyTesting
import Testing

/// The accurate pass on in-memory engines: a scripted accurate engine re-hears the utterance
/// the scripted streaming recognizer heard, and the turn keeps which one gave its words.
@Suite("The turn keeps who heard it, in memory")
struct AccurateTurnRecordTests {
    /// Turns taken in order (`alternate`), ended on silence alone (as RuntimeTests).
    private func accurateConversation(_ engine: ScriptedTranscriber) throws -> TestConversation {
        var config = RuntimeTests.config()
        config.mode = .alternate
        return try TestConversation(config: config, accurate: AccurateHearing(engines: [engine]))
    }

    /// One spoken utterance: 200 ms of silence, a second of speech, then silence that ends it.
    private func utterance(_ conversation: TestConversation) {
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: 1_000)
        conversation.microphone.silence(ms: 800)
    }

    @Test func theAccurateEnginesWordsAreTheTurnsAndTheTurnKeepsWhoHeardThemAndTheStreamingWords() async throws {
        // Given an accurate engine for English that hears better than the streaming recognizer
        let moonshine = ScriptedTranscriber(name: "moonshine-tiny", languages: ["en"])
        let conversation = try accurateConversation(moonshine)
        conversation.recognizers.willHear("go for word ten meters", in: "en")
        moonshine.willHear("go forward ten meters", confidence: 0.93)
        conversation.start()
        // When a turn is spoken
        utterance(conversation)
        // Then the transcript and the turn are the engine's words, and say who heard them
        let transcript = try #require(await conversation.next(EventType.transcript, as: TextEvent.self))
        #expect(transcript.text == "go forward ten meters" && transcript.engine == "moonshine-tiny")
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "go forward ten meters" && turn.translatedText == "[es] go forward ten meters")
        #expect(turn.engine == "moonshine-tiny")
        #expect(turn.streamingText == "go for word ten meters", "what the streaming recognizer heard is kept beside them")
        #expect(moonshine.requests == [TranscriptionRequest(language: "en")])
        // And the history keeps both
        let stored = try #require(try await conversation.history.recentTurns(limit: 1).first)
        #expect(stored.engine == "moonshine-tiny" && stored.streamingText == "go for word ten meters")
        _ = await conversation.finish()
    }

    @Test func whenTheEngineFailsTheStreamingWordsAreTheTurnsWithNoEngine() async throws {
        // Given an accurate engine that fails
        let moonshine = ScriptedTranscriber(name: "moonshine-tiny", languages: ["en"])
        moonshine.fail()
        let conversation = try accurateConversation(moonshine)
        conversation.recognizers.willHear("good morning", in: "en")
        conversation.start()
        utterance(conversation)
        // Then the streaming recognizer's words are the turn's, and no engine is named
        let transcript = try #require(await conversation.next(EventType.transcript, as: TextEvent.self))
        #expect(transcript.text == "good morning" && transcript.engine == nil)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "good morning" && turn.engine == nil && turn.streamingText == nil)
        // Asked near the silence limit (the lanes judged no words: the pass hears the audio
        // alone), then again at the end: a pass that failed is not reused.
        #expect(moonshine.requests.count == 2, "the engine was asked at the pause and at the end")
        let stored = try #require(try await conversation.history.recentTurns(limit: 1).first)
        #expect(stored.engine == nil && stored.streamingText == nil)
        _ = await conversation.finish()
    }
}
