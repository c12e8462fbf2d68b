import Foundation
import ParleyAudio
import ParleyConfig
import ParleyConversation
import ParleyHistory
import ParleyProtocol
import ParleyRuntime
import ParleyTesting
import Testing

/// The conversation runtime on in-memory engines, driven period by period: no sound card, no
/// model, no disk, no wall-clock assertions. Time on the capture timeline passes only when the
/// test gives the scripted microphone audio; turn timings come from a manual clock.
@Suite("Runtime, in memory")
struct RuntimeTests {
    /// Waits (bounded, as a guard against a hung test) until `condition` holds.
    func until(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<10_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    /// One spoken utterance: 200 ms of silence, `speech` ms of speech, then silence that ends it.
    func utterance(_ conversation: TestConversation, speech: Int = 1_000) {
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: speech)
        conversation.microphone.silence(ms: 800)
    }

    @Test func aSpokenUtteranceIsRecognizedTranslatedSpokenAndStoredThenTheOtherSideListens() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("good morning", in: "en")
        conversation.start()
        utterance(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.speaker == "a" && turn.sourceLang == "en" && turn.targetLang == "es")
        #expect(turn.sourceText == "good morning")
        #expect(turn.translatedText == "[es] good morning")
        #expect(turn.ipa == "[es] [es] good morning")
        #expect(conversation.speaker.played.count == "[es] good morning".count * 1_000)
        #expect(conversation.recognizers.calls == [.start("en"), .finish("en")])
        #expect(conversation.recognizers.fed("en") >= 16_000, "the whole second of speech reaches the recognizer")
        // The turn is in history.
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["good morning"])
        // After the echo tail, the other side is heard.
        conversation.microphone.silence(ms: 1_500)
        #expect(await conversation.microphone.drained())
        #expect(conversation.interpreter.snapshot.state == "listening")
        #expect(conversation.interpreter.snapshot.speaker == .b)
        _ = await conversation.finish()
    }

    @Test func turnTimingsComeFromTheInjectedClock() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("how are you", in: "en")
        conversation.translator.hold()
        conversation.start()
        utterance(conversation)
        #expect(await until { conversation.translator.requests == ["how are you"] })
        conversation.clock.advance(by: .milliseconds(250))
        conversation.translator.release()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.timings.asrMs == 0, "the clock did not move while recognizing")
        #expect(turn.timings.mtMs == 250)
        #expect(turn.timings.ttsMs == 0)
        #expect(turn.timings.responseMs == 250, "from the end of speech to the first sample played")
        _ = await conversation.finish()
    }

    @Test func parleyNeverHearsItselfWhileSpeakingNorDuringTheEchoTail() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("hello", in: "en")
        conversation.recognizers.willHear("hola", in: "es")
        conversation.speaker.hold()
        conversation.start()
        utterance(conversation)
        _ = try #require(await conversation.next(EventType.speakingStart, as: SpeakerEvent.self))
        // The microphone hears the loudspeaker: loud audio while Parley speaks.
        conversation.microphone.speech(ms: 1_000)
        #expect(await conversation.microphone.drained())
        conversation.speaker.release()
        _ = try #require(await conversation.next(EventType.speakingEnd, as: SpeakerEvent.self))
        // The room still rings within the 300 ms echo tail.
        conversation.microphone.speech(ms: 200)
        conversation.microphone.silence(ms: 400)
        #expect(await conversation.microphone.drained())
        #expect(conversation.recognizers.calls == [.start("en"), .finish("en")], "nothing Parley said was heard")
        #expect(conversation.interpreter.snapshot.state == "listening" && conversation.interpreter.snapshot.speaker == .b)
        // The other person is heard after the tail.
        utterance(conversation)
        let reply = try #require(await conversation.next(EventType.transcript, as: TextEvent.self))
        #expect(reply.speaker == "b" && reply.text == "hola")
        #expect(conversation.recognizers.calls == [.start("en"), .finish("en"), .start("es"), .finish("es")])
        _ = await conversation.finish()
    }

    @Test func stopCutsTheSpeechAndTheTurnIsStillStored() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("a long story", in: "en")
        conversation.speaker.hold()
        conversation.start()
        utterance(conversation)
        _ = try #require(await conversation.next(EventType.speakingStart, as: SpeakerEvent.self))
        conversation.interpreter.stopTurn()
        conversation.speaker.release()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.translatedText == "[es] a long story")
        #expect(conversation.speaker.played.count < "[es] a long story".count * 1_000, "the speech was cut")
        #expect(conversation.speaker.discards == 1, "what the device had queued was dropped")
        _ = await conversation.finish()
    }

    @Test func stopWhileHearingEndsTheUtteranceAndProcessesIt() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("wait", in: "en")
        conversation.start()
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: 600)
        #expect(await conversation.microphone.drained())
        #expect(conversation.interpreter.snapshot.state == "hearing")
        conversation.interpreter.stopTurn()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "wait")
        _ = await conversation.finish()
    }

    @Test func pauseReleasesTheMicrophoneAndResumeTakesItBack() async throws {
        let conversation = try TestConversation()
        conversation.start()
        conversation.microphone.silence(ms: 100)
        #expect(await conversation.microphone.drained())
        conversation.interpreter.pause()
        conversation.microphone.nudge()
        conversation.microphone.silence(ms: 20)  // the device's next period: the loop sees the pause
        #expect(await until { conversation.microphone.closes == 1 })
        #expect(conversation.interpreter.snapshot.state == "paused")
        // A typed turn while paused is spoken and stored; the microphone stays released.
        let typed = try await conversation.interpreter.say(.b, text: "hola")
        #expect(typed.translatedText == "[en] hola")
        #expect(conversation.microphone.opens == 1)
        conversation.interpreter.resume()
        #expect(await until { conversation.microphone.opens == 2 })
        #expect(conversation.interpreter.snapshot.state == "listening")
        _ = await conversation.finish()
    }

    @Test func aLostMicrophoneIsReopenedAndTheConversationGoesOn() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("still here", in: "en")
        conversation.start()
        conversation.microphone.silence(ms: 100)
        conversation.microphone.fail(reopensFailing: 2)
        #expect(await until { conversation.microphone.opens == 2 })
        let states = await conversation.types(until: EventType.state)
        #expect(states != nil)
        #expect(await until { conversation.interpreter.snapshot.state == "listening" })
        #expect(conversation.microphone.closes == 1, "the failed device was closed")
        utterance(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "still here")
        _ = await conversation.finish()
    }

    @Test func theDeviceLossIsReportedAsAStateAndAnError() async throws {
        let conversation = try TestConversation()
        conversation.start()
        conversation.microphone.silence(ms: 100)
        conversation.microphone.fail(reopensFailing: 1)
        let error = try #require(await conversation.next(EventType.error, as: ErrorEvent.self))
        #expect(error.message.contains("microphone lost"))
        var states: [String] = []
        while states.last != "listening", let state = await conversation.next(EventType.state, as: StateEvent.self) {
            states.append(state.state)
        }
        #expect(states.first == "device_lost")
        #expect(states.last == "listening", "\(states)")
        _ = await conversation.finish()
    }

    @Test func shutdownFinishesTheTurnInFlightStoresItAndClosesTheSpeaker() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("one more thing", in: "en")
        conversation.translator.hold()
        conversation.start()
        utterance(conversation)
        #expect(await until { conversation.translator.requests == ["one more thing"] })
        conversation.interpreter.stop()
        conversation.microphone.silence(ms: 20)  // the loop sees the stop after this period
        let finished = Task { await conversation.finish() }
        conversation.translator.release()
        let result = await finished.value
        #expect((try? result?.get()) != nil)
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.translatedText) == ["[es] one more thing"])
        #expect(conversation.speaker.isClosed)
    }

    @Test func anUtteranceInProgressAtTheEndOfARecordingIsStillProcessed() async throws {
        let conversation = try TestConversation(realTime: false)
        conversation.recognizers.willHear("the end", in: "en")
        conversation.start()
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: 600)
        let result = await conversation.finish()
        #expect((try? result?.get()) != nil)
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["the end"])
    }

    @Test func aTypedTurnWhileBusyIsRefusedWithWhatToDo() async throws {
        let conversation = try TestConversation()
        conversation.recognizers.willHear("busy now", in: "en")
        conversation.translator.hold()
        conversation.start()
        utterance(conversation)
        #expect(await until { conversation.translator.requests == ["busy now"] })
        await #expect(throws: ConversationRefusal.self) { try await conversation.interpreter.say(.b, text: "hola") }
        conversation.translator.release()
        _ = await conversation.next(EventType.turn, as: TurnInfo.self)
        _ = await conversation.finish()
    }

    @Test func aFailedTranslationIsStoredUntranslatedAndTheSpeakerKeepsTheFloor() async throws {
        let conversation = try TestConversation(translator: EchoTranslator(failing: ["gibberish"]))
        conversation.recognizers.willHear("gibberish", in: "en")
        conversation.start()
        utterance(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.status == "untranslated" && turn.translatedText == nil)
        #expect(turn.error?.contains("cannot translate") == true)
        #expect(conversation.interpreter.snapshot.speaker == .a)
        _ = await conversation.finish()
    }
}
