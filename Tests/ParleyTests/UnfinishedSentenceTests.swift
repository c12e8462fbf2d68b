import ParleyCore
import ParleyEndpoint
import ParleyRecognition
import Testing
@testable import ParleyConversation

private let esEn = TurnLanguages(source: "es", target: "en")

private func at(_ ms: Int) -> ParleyClock.Instant { ParleyClock.Instant(offset: .milliseconds(ms)) }

/// A Spanish turn by A that the language model ended after 300 ms of pause (100 ms more heard),
/// its words `words` recognized: what `translated` answered.
/// `engine`: the accurate engine that gave the words (nil: the streaming recognizer).
/// `voice`: what the person said (a second of it unless given).
private func endedTurn(
    saying words: String, recording: Bool = false, endpoint: EndpointSettings = noAnswerAfter, engine: String? = nil,
    voice: [Int16] = Drive.words
) throws -> (Drive, [ConversationMachine.Action]) {
    var drive = Drive(endpoint: endpoint)
    drive.logic.captureOpened(hearsPlayback: false, realTime: !recording)
    _ = drive.logic.reconfigure(
        .init(echoTail: 4_800, languageA: "es", languageB: "en"), silenceMs: EndpointSettings().silenceMs, dualDecoding: false)
    drive.feed(Drive.background + voice + Drive.pause(ms: 400)) { _ in [("es", SentenceEnd(probability: 0.4, words: 2, text: words))] }
    let ended = try #require(drive.actions.lazy.compactMap { action -> (Speaker, TurnLanguages)? in
        guard case .finishRecognition(let speaker, let languages) = action else { return nil }
        return (speaker, languages)
    }.first)
    #expect(drive.logic.utteranceEnd?.reason == .languageModel)
    drive.logic.recognitionFinishing(ended.0, ended.1, at: at(10_000))
    var recognition = Recognition(text: words, confidence: 0.9)
    recognition.engine = engine
    _ = drive.logic.recognized(recognition, from: .a, language: "es", target: "en", minConfidence: 0.5, at: at(10_300))
    let answered = drive.logic.translated("translated", route: nil, speculated: false, started: at(10_310), at: at(10_400))
    return (drive, answered)
}

/// The endpoint as shipped but for Spanish's `answerAfterMs`: what the words alone make wait.
private let noAnswerAfter: EndpointSettings = {
    var settings = EndpointSettings()
    settings.answerAfterMs = [:]
    return settings
}()

private func speaks(_ actions: [ConversationMachine.Action]) -> Bool {
    actions.contains { if case .speak = $0 { true } else { false } }
}

/// The answer to an end the language model decided (`endedTurn`: 400 ms of pause heard) waits until
/// the pause reaches the silence limit, and goes then.
private func expectTheAnswerAtTheSilenceLimit(_ drive: inout Drive, answered: [ConversationMachine.Action]) {
    #expect(!speaks(answered), "answered at the language model's end: \(answered)")
    let silence = EndpointSettings().silenceMs
    drive.feed(Drive.pause(ms: silence - 400 - 100))
    #expect(!speaks(drive.actions), "answered before the silence limit")
    drive.feed(Drive.pause(ms: 200))
    #expect(speaks(drive.actions), "answered once the pause reached the silence limit")
}

@Suite("Words that say the sentence goes on")
struct UnfinishedSentenceTests {
    @Test(arguments: [
        ("Se puede definir a una civilización como una cultura específica de que", "es", UnfinishedSentence.Ending.danglingWord),
        ("una cultura específica de la", "es", .danglingWord),
        ("Se puede definir a una civilización como una cultura.", "es", nil),
        ("¿De qué?", "es", nil),
        ("He was not an ill-disposed young man,", "en", .clauseMark),
        ("I put it on the", "en", .danglingWord),
        ("And the.", "en", .danglingWord),
        ("What are you looking at?", "en", nil),
        ("That is the end.", "en", nil),
        ("Il vérifie à sa perfusion et", "fr", .danglingWord),
        ("Eles moram aqui desde os anos 70.", "pt", nil),
        ("Credo che", "it", .danglingWord),
        // A language without a list: only its marks tell.
        ("ein Satz und", "de", nil),
        ("ein Satz,", "de", .clauseMark),
        ("", "es", nil),
    ])
    func aSentenceEndsMidWayOnADanglingWordOrAClauseMark(text: String, language: String, ending: UnfinishedSentence.Ending?) {
        #expect(UnfinishedSentence.ending(of: text, language: language) == ending)
    }

    /// An accurate engine writes a full stop after a whole sentence heard with its pause: its
    /// words without one, or trailing off, are a sentence not over. The streaming recognizer
    /// writes no stops, so its words say nothing by lacking one.
    @Test(arguments: [
        ("Duval que está casado y tiene", "es", true, UnfinishedSentence.Ending.noStop),
        ("Entre los fenómenos climáticos regionales y estacionales extremos en contra...", "es", true, .noStop),
        ("ligeramente turbios…", "es", true, .noStop),
        ("In 1813", "en", true, .noStop),
        ("Los luchadores compañeros de Luna también les rindieron homenaje.", "es", true, nil),
        ("¿De qué?", "es", true, nil),
        ("He said \"stop.\"", "en", true, nil),
        ("(That is all.)", "en", true, nil),
        ("He said \"stop\"", "en", true, .noStop),
        ("Dijo «turbios,»", "es", true, .clauseMark),
        ("Duval que está casado y tiene—", "es", true, .noStop),
        ("He was not an ill-disposed young man,", "en", true, .clauseMark),
        ("una cultura específica de", "es", true, .danglingWord),
        ("Duval que está casado y tiene", "es", false, nil),
        ("go forward ten meters", "en", false, nil),
    ])
    func anAccurateEnginesWordsWithoutAStopAreASentenceNotOver(text: String, language: String, punctuated: Bool, ending: UnfinishedSentence.Ending?) {
        #expect(UnfinishedSentence.ending(of: text, language: language, punctuated: punctuated) == ending)
    }

    /// The accurate words alone end a turn the language model saw no end in only beyond doubt:
    /// a stop after a word a sentence seldom ends on is written at thinking pauses too.
    @Test(arguments: [
        ("She is believed to be in South Africa.", "en", true),
        ("Will we ever forget it?", "en", true),
        ("Los luchadores compañeros de Luna también les rindieron homenaje.", "es", true),
        ("He was not.", "en", false),
        ("And Mr. John Dashwood had then leisure to.", "en", false),
        ("He might even have.", "en", false),
        ("Had he married?", "en", true),
        ("Se sentó sobre.", "es", false),
        ("Duval que está casado y tiene", "es", false),
        ("He was not an ill-disposed young man,", "en", false),
        ("I put it on the.", "en", false),
        ("Il est là.", "fr", true),
        ("", "en", false),
    ])
    func theAccurateWordsEndASentenceBeyondDoubtOnlyAfterAWordThatEndsOne(text: String, language: String, ends: Bool) {
        #expect(UnfinishedSentence.endsWithoutDoubt(text, language: language) == ends)
    }

    /// An accurate engine's words without a stop, and a comma (a reader's pause at one is as
    /// long as a thinking pause: it waited half the limit, and "…ligeramente turbios, | por la
    /// humedad" was answered at Spanish's 800 ms), wait for the silence limit, Spanish's
    /// `answerAfterMs` or not.
    @Test(arguments: [("Duval que está casado y tiene", false), ("ligeramente turbios,", true)])
    func wordsWithoutAStopOrOnACommaWaitForTheSilenceLimit(words: String, shippedEndpoint: Bool) throws {
        var (drive, answered) = try endedTurn(
            saying: words, endpoint: shippedEndpoint ? EndpointSettings() : noAnswerAfter, engine: "whisper-base")
        expectTheAnswerAtTheSilenceLimit(&drive, answered: answered)
    }

    @Test func thePersonWhoGoesOnAfterWordsWithoutAStopGoesOnWithTheSameUtterance() throws {
        var (drive, answered) = try endedTurn(saying: "Duval que está casado y tiene", engine: "whisper-base")
        #expect(!speaks(answered))
        drive.feed(Drive.pause(ms: 500) + Drive.words + Drive.pause(ms: 200))
        #expect(drive.actions.contains(.resumeRecognition(.a, esEn)), "\(drive.actions)")
        #expect(!speaks(drive.actions))
    }

    /// The streaming recognizer's words (no accurate engine) have no stops: they are answered
    /// at the language model's end, as before.
    @Test func theStreamingRecognizersWordsWithoutAStopAreAnsweredAtOnce() throws {
        let (drive, answered) = try endedTurn(saying: "Duval que está casado y tiene")
        #expect(speaks(answered))
        #expect(drive.logic.answerWait == 0)
    }

    @Test func wordsThatEndMidSentenceWaitForTheSilenceLimitThenAreSpoken() throws {
        var (drive, answered) = try endedTurn(saying: "una cultura específica de que")
        #expect(!speaks(answered), "not answered at the language model's end: \(answered)")
        #expect(drive.logic.heldAnswer != nil)
        // The pause was 400 ms; the wait runs to the silence limit (1500 ms of pause).
        let silence = EndpointSettings().silenceMs
        drive.feed(Drive.pause(ms: silence - 400 - 100))
        #expect(!speaks(drive.actions), "answered before the silence limit")
        drive.feed(Drive.pause(ms: 200))
        #expect(speaks(drive.actions), "answered once the pause reached the silence limit")
        #expect(drive.logic.heldAnswer == nil)
    }

    @Test func aPersonWhoGoesOnAfterWordsThatEndMidSentenceGoesOnWithTheSameUtterance() throws {
        var (drive, answered) = try endedTurn(saying: "una cultura específica de que")
        #expect(!speaks(answered))
        drive.feed(Drive.pause(ms: 300) + Drive.words + Drive.pause(ms: 200))
        #expect(drive.actions.contains(.resumeRecognition(.a, esEn)), "\(drive.actions)")
        #expect(!speaks(drive.actions))
        #expect(drive.logic.heldAnswer == nil, "the withdrawn end's answer is dropped")
    }

    @Test func wordsThatEndASentenceAreAnsweredAtOnce() throws {
        let (drive, answered) = try endedTurn(saying: "una cultura específica.")
        #expect(speaks(answered))
        #expect(drive.logic.answerWait == 0)
    }

    /// Spanish's language model ends read sentences at commas and thinking pauses: the answer
    /// to its end waits until the pause reaches `answerAfterMs` (800 ms as shipped), whatever
    /// the words.
    @Test func aSpanishEndIsAnsweredOnceThePauseReachesItsAnswerAfter() throws {
        let wait = try #require(EndpointSettings().answerAfterMs["es"])
        var (drive, answered) = try endedTurn(saying: "una cultura específica.", endpoint: EndpointSettings())
        #expect(!speaks(answered), "answered at the language model's end: \(answered)")
        drive.feed(Drive.pause(ms: wait - 400 - 60))
        #expect(!speaks(drive.actions), "answered before the pause reached \(wait) ms")
        drive.feed(Drive.pause(ms: 120))
        #expect(speaks(drive.actions), "answered once the pause reached \(wait) ms")
    }

    @Test func aPersonWhoGoesOnWithinTheAnswerAfterGoesOnWithTheSameUtterance() throws {
        var (drive, answered) = try endedTurn(saying: "una cultura específica.", endpoint: EndpointSettings())
        #expect(!speaks(answered))
        drive.feed(Drive.pause(ms: 200) + Drive.words + Drive.pause(ms: 200))
        #expect(drive.actions.contains(.resumeRecognition(.a, esEn)), "\(drive.actions)")
        #expect(!speaks(drive.actions))
    }

    /// The longer wait holds: a dangling word's silence limit outlasts Spanish's 800 ms.
    @Test func theLongerWaitHolds() throws {
        let shipped = EndpointSettings()
        var (dangling, answeredToo) = try endedTurn(saying: "una cultura específica de que", endpoint: shipped)
        #expect(!speaks(answeredToo))
        dangling.feed(Drive.pause(ms: shipped.silenceMs - 400 - 100))
        #expect(!speaks(dangling.actions), "answered before the silence limit")
        dangling.feed(Drive.pause(ms: 200))
        #expect(speaks(dangling.actions))
    }

    /// A language `answerAfterMs` does not name is answered as soon as its words are ready.
    @Test func aLanguageNotNamedIsAnsweredAtOnce() throws {
        var endpoint = EndpointSettings()
        endpoint.answerAfterMs = ["pt": 800]
        let (drive, answered) = try endedTurn(saying: "una cultura específica.", endpoint: endpoint)
        #expect(speaks(answered))
        #expect(drive.logic.answerWait == 0)
    }

    /// Never longer than the silence limit, which would have ended the turn anyway.
    @Test func theWaitIsNeverLongerThanTheSilenceLimit() throws {
        var endpoint = EndpointSettings()
        endpoint.answerAfterMs = ["es": 5_000]
        var (drive, answered) = try endedTurn(saying: "una cultura específica.", endpoint: endpoint)
        #expect(!speaks(answered))
        drive.feed(Drive.pause(ms: endpoint.silenceMs - 400 + 100))
        #expect(speaks(drive.actions), "still waiting past the silence limit")
    }

    @Test func aRecordingReadsOnPastItsHoldWhileWordsThatEndMidSentenceWait() throws {
        var (drive, answered) = try endedTurn(saying: "una cultura específica de que", recording: true)
        #expect(!speaks(answered))
        // Past `recordingAnswerMs` (500 ms after the end) the utterance may still go on.
        drive.feed(Drive.pause(ms: TurnLogic.recordingAnswerMs + 100))
        #expect(drive.logic.mayGoOn)
        #expect(!speaks(drive.actions))
        drive.feed(Drive.pause(ms: EndpointSettings().silenceMs))
        #expect(!drive.logic.mayGoOn)
        #expect(speaks(drive.actions))
    }
}

@Suite("Slow speech waits for the silence limit")
struct SlowSpeechTests {
    @Test(arguments: [
        ("A quarter drop of water.", 7), ("una cultura específica.", 10), ("In 1813, I", 6), ("Il était à 60 millions", 8),
        ("¿Qué?", 1), ("Hmm.", 0), ("", 0),
    ])
    func syllablesAreRunsOfVowelsAndDigits(text: String, syllables: Int) {
        #expect(SlowSpeech.syllables(in: text) == syllables)
    }

    @Test func aTurnIsSlowBelowTheRateOverEnoughVoice() {
        // 7 syllables over 3.2 s: 2.2 a second (speechocean762's readers), against 2.5.
        #expect(SlowSpeech.isSlow("A quarter drop of water.", voiceMs: 3_200, below: 2.5))
        #expect(!SlowSpeech.isSlow("A quarter drop of water.", voiceMs: 2_000, below: 2.5))
        // Too little voice to judge: a short answer said with its pre-roll.
        #expect(!SlowSpeech.isSlow("Yes.", voiceMs: SlowSpeech.minimumVoiceMs - 1, below: 2.5))
        #expect(SlowSpeech.isSlow("Yes.", voiceMs: SlowSpeech.minimumVoiceMs, below: 2.5))
        // 0: never.
        #expect(!SlowSpeech.isSlow("A quarter drop of water.", voiceMs: 3_200, below: 0))
        // Words in another script have no vowels to count: not judged.
        #expect(!SlowSpeech.isSlow("Привет, как дела", voiceMs: 3_000, below: 2.5))
    }

    /// Two seconds of voice whose words have 1 syllable: the language model's
    /// end is answered once the pause reaches the silence limit, though the words end with a stop.
    @Test func aSlowTurnWaitsForTheSilenceLimit() throws {
        var (drive, answered) = try endedTurn(saying: "Bien.", engine: "whisper-base", voice: Drive.words + Drive.words)
        expectTheAnswerAtTheSilenceLimit(&drive, answered: answered)
    }

    @Test func theSlowPersonWhoGoesOnGoesOnWithTheSameUtterance() throws {
        var (drive, answered) = try endedTurn(saying: "Bien.", engine: "whisper-base", voice: Drive.words + Drive.words)
        #expect(!speaks(answered))
        drive.feed(Drive.pause(ms: 500) + Drive.words + Drive.pause(ms: 200))
        #expect(drive.actions.contains(.resumeRecognition(.a, esEn)), "\(drive.actions)")
        #expect(!speaks(drive.actions))
        // Ended again, the utterance's voice runs from its first voice to its last: 2 s, the
        // 900 ms pause, 1 s.
        drive.feed(Drive.pause(ms: 400)) { _ in [("es", SentenceEnd(probability: 0.4, words: 2, text: "Bien."))] }
        #expect(drive.logic.utteranceEnd?.reason == .languageModel)
        #expect(abs(ms(drive.logic.utteranceVoice) - 3_900) <= 150, "\(ms(drive.logic.utteranceVoice)) ms")
    }

    /// The same voice at a speaker's pace (10 syllables in 2 s), or with the rule off, is
    /// answered at once.
    @Test(arguments: [("una cultura específica.", 2.5), ("Bien.", 0)])
    func aTurnAtASpeakersPaceOrWithTheRuleOffIsAnsweredAtOnce(words: String, below: Double) throws {
        var endpoint = noAnswerAfter
        endpoint.slowSpeechBelow = below
        let (drive, answered) = try endedTurn(saying: words, endpoint: endpoint, engine: "whisper-base", voice: Drive.words + Drive.words)
        #expect(speaks(answered), "\(answered)")
        #expect(drive.logic.answerWait == 0)
        // The voice from its first sound to its last: not the pre-roll, not the pause.
        #expect(abs(ms(drive.logic.utteranceVoice) - 2_000) <= 150, "\(ms(drive.logic.utteranceVoice)) ms")
    }

    /// A typed turn has no voice: its answer waits for nothing, whatever the utterance before.
    @Test func aTypedTurnAfterASlowOneWaitsForNothing() throws {
        var (drive, answered) = try endedTurn(saying: "Bien.", engine: "whisper-base", voice: Drive.words + Drive.words)
        #expect(!speaks(answered))
        drive.feed(Drive.pause(ms: EndpointSettings().silenceMs))
        #expect(speaks(drive.actions))
        _ = drive.logic.takeDraft()
        _ = drive.logic.handle(.speakingStarted)
        _ = drive.logic.handle(.speakingFinished(playedSamples: 0))
        drive.feed(Drive.pause(ms: 500))
        #expect(!drive.logic.typed(.a, text: "Bien.", languages: nil, at: at(20_000)).isEmpty)
        let typedAnswer = drive.logic.translated("translated", route: nil, speculated: false, started: at(20_010), at: at(20_100))
        #expect(speaks(typedAnswer), "\(typedAnswer)")
        #expect(drive.logic.answerWait == 0)
    }
}

private func ms(_ samples: SampleTime) -> Int { Int(samples * 1000 / SampleTime(captureSampleRate)) }
