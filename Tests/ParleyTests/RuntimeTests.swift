import Foundation
import ParleyAudio
import ParleyConfig
import ParleyConversation
import ParleyCore
import ParleyEndpoint
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
    /// These tests take turns (`alternate`): one decoder per utterance, the expected speaker's.
    func alternating() -> ParleyConfig {
        var config = RuntimeTests.config()
        config.mode = .alternate
        return config
    }

    /// The scripted recognizer cannot judge a pause, so a turn ends on silence alone: 700 ms
    /// here, as the utterances below are scripted (EndOfTurnTests covers the judged ends).
    static func config() -> ParleyConfig {
        var config = ParleyConfig()
        config.endpoint.silenceMs = 700
        return config
    }

    /// Waits (bounded, as a guard against a hung test) until `condition` holds.
    func until(_ condition: () -> Bool) async -> Bool {
        await TestConversation.until(condition)
    }

    /// One spoken utterance: 200 ms of silence, `speech` ms of speech, then silence that ends it.
    func utterance(_ conversation: TestConversation, speech: Int = 1_000) {
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: speech)
        conversation.microphone.silence(ms: 800)
    }

    @Test func aSpokenUtteranceIsRecognizedTranslatedSpokenAndStoredThenTheOtherSideListens() async throws {
        let conversation = try TestConversation(config: alternating())
        conversation.recognizers.willHear("good morning", in: "en")
        conversation.start()
        utterance(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.speaker == .a && turn.sourceLang == "en" && turn.targetLang == "es")
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
        let conversation = try TestConversation(config: alternating())
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
        let conversation = try TestConversation(config: alternating())
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
        let conversation = try TestConversation(config: alternating())
        conversation.recognizers.willHear("a long story", in: "en")
        conversation.speaker.hold()
        conversation.start()
        utterance(conversation)
        _ = try #require(await conversation.next(EventType.speakingStart, as: SpeakerEvent.self))
        #expect(conversation.interpreter.stopTurn() == .speech, "stop says it cut the speech")
        conversation.speaker.release()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.translatedText == "[es] a long story")
        #expect(conversation.speaker.played.count < "[es] a long story".count * 1_000, "the speech was cut")
        #expect(conversation.speaker.discards == 1, "what the device had queued was dropped")
        _ = await conversation.finish()
    }

    @Test func stopWhileHearingEndsTheUtteranceAndProcessesIt() async throws {
        let conversation = try TestConversation(config: alternating())
        conversation.recognizers.willHear("wait", in: "en")
        conversation.start()
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: 600)
        #expect(await conversation.microphone.drained())
        #expect(conversation.interpreter.snapshot.state == "hearing")
        #expect(conversation.interpreter.stopTurn() == .utterance, "stop says it ended the utterance")
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "wait")
        _ = await conversation.finish()
    }

    @Test func stopWithNothingHeardOrPlayedSaysSoAndChangesNothing() async throws {
        let conversation = try TestConversation(config: alternating())
        conversation.start()
        conversation.microphone.silence(ms: 200)
        #expect(await conversation.microphone.drained())
        let before = conversation.interpreter.snapshot
        #expect(conversation.interpreter.stopTurn() == nil)
        #expect(conversation.interpreter.snapshot.state == before.state && conversation.interpreter.snapshot.speaker == before.speaker)
        _ = await conversation.finish()
    }

    @Test func pauseReleasesTheMicrophoneAndResumeTakesItBack() async throws {
        let conversation = try TestConversation(config: alternating())
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
        let conversation = try TestConversation(config: alternating())
        conversation.recognizers.willHear("still here", in: "en")
        conversation.start()
        conversation.microphone.silence(ms: 100)
        conversation.microphone.fail(reopensFailing: 2)
        // Tried again after 0.5 s, 1 s and 2 s on the runtime's clock; the third try opens it.
        #expect(await conversation.clock.letSleepsPass(3) == [.milliseconds(500), .seconds(1), .seconds(2)])
        #expect(await until { conversation.microphone.opens == 2 })
        let states = await conversation.types(until: EventType.state)
        #expect(states != nil)
        #expect(await until { conversation.interpreter.snapshot.state == "listening" })
        #expect(conversation.microphone.closes == 1, "the failed device was closed")
        // The sound server may have restarted with the microphone: the speaker is opened afresh.
        #expect(await until { conversation.speaker.renewals == 1 })
        utterance(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "still here")
        _ = await conversation.finish()
    }

    /// A hands-free device's USB microphone unplugged: tried again after 0.5 s, 1 s, then every
    /// 2 s on the runtime's clock; once it reads again, the next loss starts at 0.5 s again.
    @Test func aLostMicrophoneIsTriedEveryTwoSecondsAtMostAndTheBackoffStartsAgainOnceItWorks() async throws {
        let conversation = try TestConversation(config: alternating())
        conversation.start()
        conversation.microphone.silence(ms: 100)
        conversation.microphone.fail(reopensFailing: 5)
        let waits = await conversation.clock.letSleepsPass(6)
        #expect(waits == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(2), .seconds(2), .seconds(2)])
        #expect(await until { conversation.microphone.opens == 2 })
        conversation.microphone.silence(ms: 20)
        conversation.microphone.fail()
        #expect(await conversation.clock.nextSleep() == .milliseconds(500))
        // A stop does not wait for the backoff to end.
        let result = await conversation.finish(stop: true)
        #expect((try? result?.get()) != nil)
        #expect(conversation.microphone.opens == 2)
    }

    @Test func theDeviceLossIsReportedAsAStateAndAnError() async throws {
        let conversation = try TestConversation(config: alternating())
        conversation.start()
        conversation.microphone.silence(ms: 100)
        conversation.microphone.fail(reopensFailing: 1)
        let error = try #require(await conversation.next(EventType.error, as: ErrorEvent.self))
        #expect(error.message.contains("microphone lost"))
        _ = await conversation.clock.letSleepsPass(2)
        var states: [String] = []
        while states.last != "listening", let state = await conversation.next(EventType.state, as: StateEvent.self) {
            states.append(state.state)
        }
        #expect(states.first == "device_lost")
        #expect(states.last == "listening", "\(states)")
        _ = await conversation.finish()
    }

    @Test func shutdownFinishesTheTurnInFlightStoresItAndClosesTheSpeaker() async throws {
        let conversation = try TestConversation(config: alternating())
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
        let conversation = try TestConversation(config: alternating(), realTime: false)
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
        let conversation = try TestConversation(config: alternating())
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
        let conversation = try TestConversation(config: alternating(), translator: EchoTranslator(failing: ["gibberish"]))
        conversation.recognizers.willHear("gibberish", in: "en")
        conversation.start()
        utterance(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.status == .untranslated && turn.translatedText == nil)
        #expect(turn.error?.contains("cannot translate") == true)
        #expect(conversation.interpreter.snapshot.speaker == .a)
        _ = await conversation.finish()
    }
}

/// Auto mode on in-memory engines: both languages decode every utterance; their scores say who spoke.
@Suite("Runtime, auto mode, in memory")
struct AutoModeRuntimeTests {
    func autoConversation() throws -> TestConversation {
        var config = RuntimeTests.config()
        config.mode = .auto
        return try TestConversation(config: config)
    }

    /// One utterance each language will "hear": the true language scores better.
    func script(_ conversation: TestConversation, _ text: String, spokenIn language: String, frames: Int = 150) {
        let other = language == "en" ? "es" : "en"
        conversation.recognizers.willHear(text, in: language, score: -4.0, frames: frames)
        conversation.recognizers.willHear("garbled \(text)", in: other, score: -6.5, frames: frames)
    }

    /// One utterance, spoken once Parley listens again (past the echo tail of its last answer):
    /// the scripted microphone runs ahead of the pipeline, as a recording would.
    func speak(_ conversation: TestConversation) async {
        for _ in 0..<100 where conversation.interpreter.snapshot.state != "listening" {
            conversation.microphone.silence(ms: 100)
            _ = await conversation.microphone.drained()
        }
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: 1_000)
        conversation.microphone.silence(ms: 800)
    }

    @Test func peopleMaySpeakInAnyOrderAndEachTurnGoesToWhoeverWasHeard() async throws {
        let conversation = try autoConversation()
        let order: [(String, String)] = [
            ("en", "good morning"), ("en", "how are you"), ("es", "muy bien gracias"), ("es", "y usted"), ("en", "fine"),
            ("es", "adiós"),
        ]
        for (language, text) in order { script(conversation, text, spokenIn: language) }
        conversation.start()
        for (language, text) in order {
            await speak(conversation)
            let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self), "no turn for \(text)")
            #expect(turn.sourceText == text)
            #expect(turn.speaker == (language == "en" ? Speaker.a : .b), "\(text)")
            #expect(turn.sourceLang == language && turn.targetLang == (language == "en" ? "es" : "en"))
            #expect(turn.translatedText == "[\(turn.targetLang)] \(text)")
            let detection = try #require(turn.detection)
            #expect(detection.decidedBy == .audio)
            #expect(detection.scores == [language: -4.0, (language == "en" ? "es" : "en"): -6.5])
            #expect(detection.rivalText == "garbled \(text)")
        }
        // Both languages decoded every utterance, side by side.
        let starts = conversation.recognizers.calls.filter { if case .start = $0 { true } else { false } }
        #expect(starts.count == 12)
        #expect(conversation.recognizers.fed("en") == conversation.recognizers.fed("es"))
        let stored = try await conversation.history.recentTurns(limit: 10)
        #expect(stored.reversed().map(\.speaker) == [.a, .a, .b, .b, .a, .b])
        #expect(stored.allSatisfy { $0.detection?.decidedBy == .audio })
        _ = await conversation.finish()
    }

    @Test func anUtteranceTooShortToTellGoesToWhoseTurnItIs() async throws {
        let conversation = try autoConversation()
        script(conversation, "hello there", spokenIn: "en")
        // "sí": Spanish scores better, but 0.3 s is too short to trust.
        script(conversation, "sí", spokenIn: "es", frames: 30)
        conversation.start()
        await speak(conversation)
        _ = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        await speak(conversation)
        let short = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(short.speaker == .b, "after A's turn it is B's: turn order decides")
        #expect(short.detection?.decidedBy == .turnOrder)
        _ = await conversation.finish()
    }

    /// What `state` (listening, hearing), `speech_start` and `partial` say of who speaks, until
    /// the turn: in auto mode, with both languages decoded, it is not decided (the side named
    /// is only expected, and the live words its language's guess); in alternate mode it is.
    func decisions(mode: ConversationMode) async throws -> [String: [Bool?]] {
        var config = RuntimeTests.config()
        config.mode = mode
        let conversation = try TestConversation(config: config)
        script(conversation, "good morning", spokenIn: "en")
        conversation.recognizers.liveWords("good morning", in: "en")
        conversation.recognizers.liveWords("garbled", in: "es")
        conversation.start()
        await speak(conversation)
        let events = try #require(await conversation.events(until: EventType.turn))
        // Listening again after the turn (the first listening came before the test subscribed).
        for _ in 0..<100 where conversation.interpreter.snapshot.state != "listening" {
            conversation.microphone.silence(ms: 100)
            _ = await conversation.microphone.drained()
        }
        var listening: StateEvent?
        while listening == nil, let state = await conversation.next(EventType.state, as: StateEvent.self) {
            if state.state == "listening" { listening = state }
        }
        // The status says it as the state event does.
        #expect(conversation.interpreter.snapshot.decided == listening?.decided)
        _ = await conversation.finish()
        struct Event: Decodable {
            struct Fields: Decodable {
                var state: String?
                var text: String?
                var decided: Bool?
            }
            var data: Fields
        }
        var found: [String: [Bool?]] = [:]
        for (type, line) in events {
            let data = try JSONDecoder().decode(Event.self, from: line).data
            switch type {
            case EventType.state where data.state == "listening" || data.state == "hearing":
                found[data.state ?? "", default: []].append(data.decided)
            case EventType.state:
                #expect(data.decided == nil, "\(data.state ?? ""): nothing to decide")
            case EventType.speechStart:
                found[type, default: []].append(data.decided)
            case EventType.partial:
                #expect(data.text == "good morning", "the expected speaker's lane gives the live words")
                found[type, default: []].append(data.decided)
            default:
                break
            }
        }
        found["listening", default: []].append(try #require(listening, "listening again after the turn").decided)
        return found
    }

    @Test func untilTheAudioTellsWhoSpeaksTheEventsSayItIsNotDecided() async throws {
        let found = try await decisions(mode: .auto)
        for type in ["listening", "hearing", EventType.speechStart, EventType.partial] {
            #expect(found[type]?.isEmpty == false, "no \(type) event: \(found)")
            #expect(found[type]?.allSatisfy { $0 == false } == true, "\(type): \(found)")
        }
    }

    @Test func inAlternateModeTheEventsSayWhoSpeaksIsDecided() async throws {
        let found = try await decisions(mode: .alternate)
        for type in ["listening", "hearing", EventType.speechStart, EventType.partial] {
            #expect(found[type]?.isEmpty == false, "no \(type) event: \(found)")
            #expect(found[type]?.allSatisfy { $0 == true } == true, "\(type): \(found)")
        }
    }

    @Test func withOneSideHearableAutoIsTurnOrderOnOneDecoder() async throws {
        var config = RuntimeTests.config()
        config.mode = .auto
        let conversation = try TestConversation(config: config, hearable: ["en"])
        conversation.recognizers.willHear("only english", in: "en", score: -4)
        conversation.start()
        await speak(conversation)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.speaker == .a && turn.detection == nil)
        #expect(conversation.recognizers.calls == [.start("en"), .finish("en")])
        _ = await conversation.finish()
    }
}
