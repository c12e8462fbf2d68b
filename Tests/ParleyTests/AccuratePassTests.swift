import Foundation
import ParleyConfig
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyTesting
@testable import ParleyRecognition
import ParleyConversation
import Synchronization
import Testing
@testable import ParleyRuntime

/// The accurate pass's decisions with engines in memory: who spoke, which engine's words, and
/// what happens when an engine fails.
@Suite("The accurate pass, in memory")
struct AccuratePassTests {
    /// An engine that answers from a script, and counts what it was asked.
    final class ScriptedEngine: UtteranceTranscriber, @unchecked Sendable {
        let name: String
        let languages: Set<String>
        let detectsLanguage: Bool
        var detected = "en"
        var failing = false
        /// Hears a voice but does not trust its words (`Transcript.distrusted`), as Whisper on a
        /// soft, accented learner.
        var distrusting = false
        /// Answers as an engine asked to stop the utterance (`UtteranceTranscriber.stop`).
        var stopping = false
        var requests: [TranscriptionRequest] = []
        var heardCounts: [Int] = []
        /// Requests so far, safe to read while a worker asks (`requests` is read once it is done).
        let asked = Atomic(0)
        /// When set, a request for the language alone waits for it (a detector still telling).
        var gate: DispatchSemaphore?
        let holdsUpInNoise: Bool

        init(name: String, languages: Set<String>, detects: Bool = false) {
            self.name = name
            self.languages = languages
            self.detectsLanguage = detects
            self.holdsUpInNoise = detects
        }

        func hears(_ language: String) -> Bool { languages.contains(language) }

        func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript {
            requests.append(request)
            heardCounts.append(samples.count)
            asked.add(1, ordering: .sequentiallyConsistent)
            if let gate, request.language == nil, !request.detectOnly.isEmpty {
                gate.wait()
                gate.signal()
            }
            if failing { throw RecognizerError("\(name) crashed") }
            if stopping { throw RecognizerError("\(name) stopped", stopped: true) }
            let language = request.language ?? detected
            if request.language == nil, request.detectOnly.contains(language) {
                return Transcript(text: "", language: language, languageProbabilities: [language: 0.97], decoded: false, engine: name)
            }
            if distrusting { return Transcript(text: "", language: language, confidence: 0.29, engine: name, distrusted: true) }
            return Transcript(text: "\(name) heard \(language)", language: language, confidence: 0.8, engine: name)
        }
    }

    let samples = [Int16](repeating: 0, count: 16_000)

    func utterance(detect: Bool = true, streaming: [(String, String)] = [("en", "streamed english"), ("es", "streamed spanish")]) -> AccuratePass.Utterance {
        AccuratePass.Utterance(
            samples: samples, expected: .a, sides: TurnLanguages(source: "en", target: "es"), detect: detect,
            streaming: streaming.map { (language: $0.0, recognition: Recognition(text: $0.1, confidence: 0.6, score: -1, frames: 300)) },
            laneLanguages: ["en", "es"])
    }

    @Test func whisperTellsWhoSpokeAndMoonshineHearsTheEnglishWithoutWhisperDecodingIt() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        let heard = AccuratePass.hear(utterance(), with: AccurateHearing(engines: [moonshine, whisper])) { Issue.record("reported \($0)") }
        #expect(heard.speaker == .a && heard.language == "en" && heard.target == "es")
        #expect(heard.recognition.text == "moonshine heard en" && heard.recognition.engine == "moonshine")
        #expect(heard.recognition.streamingText == "streamed english")
        #expect(heard.detection?.decidedBy == .languageID && heard.detection?.rivalLanguage == "es")
        #expect(whisper.requests == [TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en", "es"])])
        #expect(moonshine.requests == [TranscriptionRequest(language: "en")])
    }

    /// While Moonshine hears a long English utterance, Whisper tells the language from its
    /// opening alone; the next pass over the same utterance (its end, a later pause) gives the
    /// same opening, and Whisper is not asked again.
    @Test func theLanguageIsToldFromTheOpeningOnceAnUtterance() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        let hearing = AccurateHearing(engines: [moonshine, whisper])
        var long = utterance()
        long.samples = [Int16](repeating: 0, count: 5 * captureSampleRate)
        long.voiceFrom = captureSampleRate / 2
        let heard = AccuratePass.hear(long, with: hearing) { Issue.record("reported \($0)") }
        #expect(heard.language == "en" && heard.recognition.text == "moonshine heard en")
        #expect(whisper.heardCounts == [(500 + TurnLogic.openingMs) * captureSampleRate / 1000], "the pre-roll and the opening")
        #expect(moonshine.heardCounts == [long.samples.count])
        var later = long
        later.samples += [Int16](repeating: 0, count: captureSampleRate)
        let again = AccuratePass.hear(later, with: hearing, known: { heard.opening }) { Issue.record("reported \($0)") }
        #expect(again.language == "en" && again.detection?.decidedBy == .languageID)
        #expect(whisper.requests.count == 1, "the opening's language was known")
        var other = long
        other.samples[100] = 1
        _ = AccuratePass.hear(other, with: hearing, known: { heard.opening }) { _ in }
        #expect(whisper.requests.count == 2, "another opening is told again")
    }

    /// Where the other language has no streaming lane (Portuguese, which Whisper alone hears),
    /// the lanes cannot have told it: Whisper hears the whole, and decodes it if it is Portuguese.
    @Test func whereTheOtherLanguageHasNoLaneWhisperTellsAndDecodesInOneCall() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "pt"], detects: true)
        whisper.detected = "pt"
        var portuguese = utterance(streaming: [("en", "streamed english")])
        portuguese.sides = TurnLanguages(source: "en", target: "pt")
        portuguese.laneLanguages = ["en"]
        portuguese.samples = [Int16](repeating: 0, count: 5 * captureSampleRate)
        let heard = AccuratePass.hear(portuguese, with: AccurateHearing(engines: [moonshine, whisper])) { Issue.record("reported \($0)") }
        #expect(heard.language == "pt" && heard.recognition.text == "whisper heard pt")
        #expect(whisper.requests == [TranscriptionRequest(language: nil, candidates: ["en", "pt"], detectOnly: ["en"])])
        #expect(whisper.heardCounts == [portuguese.samples.count])
    }

    @Test func inANoisyRoomWhisperHearsTheEnglishToo() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        var noisy = utterance()
        noisy.aboveFloorDB = 14
        let heard = AccuratePass.hear(noisy, with: AccurateHearing(engines: [moonshine, whisper])) { Issue.record("reported \($0)") }
        #expect(heard.recognition.text == "whisper heard en" && heard.recognition.engine == "whisper")
        // Detected and decoded in one request; Moonshine was not asked.
        #expect(whisper.requests == [TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: [])])
        #expect(moonshine.requests.isEmpty)
        // A quiet room (30 dB above the floor) is Moonshine's again.
        var quiet = utterance()
        quiet.aboveFloorDB = 35
        #expect(AccuratePass.hear(quiet, with: AccurateHearing(engines: [moonshine, whisper])) { _ in }.recognition.engine == "moonshine")
    }

    /// Whisper hears a noisy room's English first; a voice it heard but could not make out (it
    /// did not trust its words) goes to Moonshine, which hears English too, once.
    @Test func englishWhoseWordsWhisperDidNotTrustIsHeardByMoonshine() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        whisper.distrusting = true
        var noisy = utterance()
        noisy.aboveFloorDB = 18
        let heard = AccuratePass.hear(noisy, with: AccurateHearing(engines: [moonshine, whisper])) { Issue.record("reported \($0)") }
        #expect(heard.language == "en" && heard.recognition.text == "moonshine heard en" && heard.recognition.engine == "moonshine")
        #expect(heard.distrustedBy == "whisper")
        #expect(whisper.requests == [TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: [])], "Whisper heard it once")
        #expect(moonshine.requests == [TranscriptionRequest(language: "en")])
        // Trusted, Whisper's words are the turn's, and Moonshine is not asked.
        whisper.distrusting = false
        let trusted = AccuratePass.hear(noisy, with: AccurateHearing(engines: [moonshine, whisper])) { Issue.record("reported \($0)") }
        #expect(trusted.recognition.engine == "whisper" && trusted.distrustedBy == nil && moonshine.requests.count == 1)
    }

    /// Words nobody could make out are nothing recognized: not the streaming lanes' guess (they
    /// write words of any noise), whether no other engine hears the language (Spanish) or the
    /// next one fails too.
    @Test func wordsNoEngineTrustsAreNothingRecognizedNotTheStreamingGuess() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        whisper.distrusting = true
        whisper.detected = "es"
        let spanish = AccuratePass.hear(utterance(streaming: [("es", "streamed spanish")]), with: AccurateHearing(engines: [moonshine, whisper])) {
            Issue.record("reported \($0)")
        }
        #expect(spanish.language == "es" && spanish.recognition.text.isEmpty && spanish.recognition.engine == "whisper")
        #expect(spanish.distrustedBy == "whisper" && moonshine.requests.isEmpty)
        whisper.detected = "en"
        moonshine.failing = true
        var noisy = utterance()
        noisy.aboveFloorDB = 18
        var reports: [String] = []
        let english = AccuratePass.hear(noisy, with: AccurateHearing(engines: [moonshine, whisper])) { reports.append($0) }
        #expect(english.language == "en" && english.recognition.text.isEmpty && english.recognition.engine == "whisper")
        // Whisper heard it first (a noisy room) and did not trust its words: nobody hears it after Moonshine.
        #expect(reports.count == 1 && reports.first?.contains("moonshine could not hear") == true, "\(reports)")
        #expect(reports.first?.hasSuffix("nobody hears it") == true, "\(reports)")
    }

    @Test func aSpanishUtteranceTheLanesCouldNotTellIsTheOtherSpeakersAndWhisperDecodesItWhole() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        whisper.detected = "es"
        let heard = AccuratePass.hear(utterance(), with: AccurateHearing(engines: [moonshine, whisper])) { Issue.record("reported \($0)") }
        #expect(heard.speaker == .b && heard.language == "es" && heard.target == "en")
        #expect(heard.recognition.text == "whisper heard es")
        // Whisper told the language from the opening, then decoded the whole (Moonshine heard the
        // English ahead, unused: the streaming lanes could not tell the two apart).
        #expect(
            whisper.requests == [
                TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en", "es"]), TranscriptionRequest(language: "es"),
            ])
    }

    /// A pause's pass started on the Spanish lane's words: Whisper tells the language and decodes
    /// the Spanish alone, with no Moonshine beside it taking a core.
    @Test func speechTheLanesTakeForSpanishIsHeardByWhisperAlone() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        whisper.detected = "es"
        let heard = AccuratePass.hear(utterance(streaming: [("es", "streamed spanish")]), with: AccurateHearing(engines: [moonshine, whisper])) {
            Issue.record("reported \($0)")
        }
        #expect(heard.speaker == .b && heard.recognition.text == "whisper heard es")
        #expect(whisper.requests == [TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en"])])
        #expect(moonshine.requests.isEmpty, "Moonshine was not run beside Whisper: \(moonshine.requests)")
    }

    /// The lanes were wrong (they took English for Spanish): Whisper tells English, and Moonshine
    /// hears it then, after the detector rather than beside it. The words are the same.
    @Test func speechTheLanesTookForSpanishThatIsEnglishIsStillMoonshines() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        let heard = AccuratePass.hear(utterance(streaming: [("es", "streamed spanish")]), with: AccurateHearing(engines: [moonshine, whisper])) {
            Issue.record("reported \($0)")
        }
        #expect(heard.speaker == .a && heard.recognition.text == "moonshine heard en")
        #expect(moonshine.requests == [TranscriptionRequest(language: "en")])
    }

    @Test func aFailingEngineGivesWayToTheNextThenToTheStreamingWords() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        moonshine.failing = true
        var reports: [String] = []
        let heard = AccuratePass.hear(utterance(), with: AccurateHearing(engines: [moonshine, whisper])) { reports.append($0) }
        #expect(heard.recognition.text == "whisper heard en")
        #expect(reports.count == 1 && reports.first?.contains("moonshine could not hear the en turn") == true)
        #expect(reports.first?.hasSuffix("whisper hears it") == true)

        whisper.failing = true
        reports = []
        let fallen = AccuratePass.hear(utterance(), with: AccurateHearing(engines: [moonshine, whisper])) { reports.append($0) }
        // The detection failed too: the streaming recognizers decide.
        #expect(fallen.language == "en" && fallen.recognition.text == "streamed english" && fallen.recognition.engine == nil)
        #expect(fallen.detection != nil && fallen.detection?.decidedBy != .languageID)
        #expect(reports.count == 3, "\(reports)")
        #expect(reports.last?.hasSuffix("the streaming recognizer hears it") == true)
    }

    /// A pass stopped because nobody wants it any more gives no words and asks no other engine:
    /// neither while Whisper tells the language (Moonshine, hearing beside it, is waited for),
    /// nor while it hears the words.
    @Test func aStoppedPassGivesNoWordsAndAsksNoOtherEngine() {
        let moonshine = ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        whisper.stopping = true
        let hearing = AccurateHearing(engines: [moonshine, whisper])
        let told = AccuratePass.hear(utterance(), with: hearing) { Issue.record("reported \($0)") }
        #expect(told.stopped && told.recognition.text.isEmpty)
        #expect(whisper.requests.count == 1 && moonshine.requests.count == 1, "moonshine heard beside it, and was waited for")
        let spanish = AccuratePass.hear(utterance(detect: false, streaming: [("es", "streamed spanish")]), with: AccurateHearing(engines: [whisper, moonshine])) {
            Issue.record("reported \($0)")
        }
        #expect(spanish.stopped && spanish.recognition.text.isEmpty, "not the streaming words either")
        #expect(whisper.requests.count == 2 && moonshine.requests.count == 1)
    }

    @Test func withoutDetectionTheExpectedSpeakersLanguageIsHeard() {
        let whisper = ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        let heard = AccuratePass.hear(utterance(detect: false, streaming: [("en", "streamed")]), with: AccurateHearing(engines: [whisper])) { _ in }
        #expect(heard.language == "en" && heard.detection == nil)
        #expect(whisper.requests == [TranscriptionRequest(language: "en")])
    }

    @Test func nothingHeardIsNoWords() {
        final class Silent: UtteranceTranscriber, @unchecked Sendable {
            let name = "silent"
            let detectsLanguage = false
            func hears(_ language: String) -> Bool { true }
            func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript {
                Transcript(text: "", language: request.language ?? "en", engine: name)
            }
        }
        let heard = AccuratePass.hear(utterance(detect: false), with: AccurateHearing(engines: [Silent()])) { _ in }
        #expect(heard.recognition.text.isEmpty)
    }
}

/// The Wyoming framing and the events of one request.
@Suite("Wyoming events")
struct WyomingTests {
    func reader(_ bytes: [UInt8]) -> (Int?) throws(RecognizerError) -> [UInt8] {
        var rest = bytes[...]
        return { (count: Int?) throws(RecognizerError) -> [UInt8] in
            if let count {
                guard rest.count >= count else { throw RecognizerError("short") }
                defer { rest = rest.dropFirst(count) }
                return Array(rest.prefix(count))
            }
            guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")) else { throw RecognizerError("no line") }
            defer { rest = rest[(newline + 1)...] }
            return Array(rest[..<newline])
        }
    }

    @Test func anEventReadsBackAsWritten() throws {
        let event = WyomingEvent(type: "audio-chunk", data: Data(#"{"rate":16000}"#.utf8), payload: [1, 2, 3, 10])
        let read = try WyomingEvent.read(reader(event.encoded))
        #expect(read == event)
    }

    @Test func dataInsideTheHeaderAsOlderServersSendIt() throws {
        let line = Array(#"{"type": "transcript", "data": {"text": "hola"}}"#.utf8) + [10]
        let event = try WyomingEvent.read(reader(line))
        let transcript = try WyomingRequest.transcript(from: event, TranscriptionRequest(language: "es"), engine: "server")
        #expect(transcript.text == "hola" && transcript.language == "es" && transcript.decoded && !transcript.distrusted)
    }

    /// Parley's worker says when it dropped words it did not trust; words it sent are never so.
    @Test func aTranscriptTheWorkerDidNotTrustSaysSo() throws {
        let dropped = WyomingEvent(type: "transcript", data: Data(#"{"text":"","language":"en","decoded":true,"distrusted":true}"#.utf8))
        #expect(try WyomingRequest.transcript(from: dropped, TranscriptionRequest(language: "en"), engine: "s").distrusted)
        let kept = WyomingEvent(type: "transcript", data: Data(#"{"text":"hello","language":"en","distrusted":true}"#.utf8))
        #expect(try !WyomingRequest.transcript(from: kept, TranscriptionRequest(language: "en"), engine: "s").distrusted)
    }

    @Test func aRequestIsTranscribeThenTheAudioInChunks() throws {
        let samples = (0..<40_000).map { Int16(truncatingIfNeeded: $0) }
        let events = try WyomingRequest.events(for: samples, TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en"]))
        #expect(events.map(\.type) == ["transcribe", "audio-start", "audio-chunk", "audio-chunk", "audio-chunk", "audio-stop"])
        let transcribe = try JSONSerialization.jsonObject(with: events[0].data) as? [String: Any]
        #expect(transcribe?["languages"] as? [String] == ["en", "es"])
        #expect(transcribe?["skip_languages"] as? [String] == ["en"])
        #expect(transcribe?["language"] == nil)
        #expect(events[2].payload.count == 32_000 && events[4].payload.count == 16_000)
        // Little-endian 16-bit: sample 1 is 01 00.
        #expect(Array(events[2].payload[2..<4]) == [1, 0])
    }

    @Test func aServersErrorIsAnErrorThatSaysWhy() throws {
        let event = WyomingEvent(type: "error", data: Data(#"{"text":"model not loaded"}"#.utf8))
        #expect(throws: RecognizerError.self) { try WyomingRequest.transcript(from: event, TranscriptionRequest(language: "es"), engine: "s") }
        do {
            _ = try WyomingRequest.transcript(from: event, TranscriptionRequest(language: "es"), engine: "s")
        } catch {
            #expect(error.description.contains("model not loaded"))
        }
    }

    @Test func aWorkerThatStoppedAsAskedSaysSo() throws {
        let stopped = WyomingEvent(type: "error", data: Data(#"{"text":"stopped, as asked","code":"stopped"}"#.utf8))
        let failed = WyomingEvent(type: "error", data: Data(#"{"text":"model not loaded","code":"parley-whisper"}"#.utf8))
        for (event, isStopped) in [(stopped, true), (failed, false)] {
            do {
                _ = try WyomingRequest.transcript(from: event, TranscriptionRequest(language: "es"), engine: "s")
                Issue.record("an error is an error")
            } catch {
                #expect(error.stopped == isStopped, "\(error)")
            }
        }
    }

    @Test func aHeaderThatIsNotJSONIsRefused() {
        #expect(throws: RecognizerError.self) { try WyomingEvent.read(reader(Array("not json\n".utf8))) }
    }
}

/// The accurate pass in a whole in-memory conversation: its words are the turn's, it runs during
/// the pause, and the end of the turn is answered from what it heard then.
@Suite("The accurate pass in a conversation, in memory")
struct AccurateConversationTests {
    /// A conversation over a recording (not real time, not hearing Parley).
    func conversation(_ accurate: ScriptedTranscriber, likelyEndMs: Int = 200, englishAnswerAfterMs: Int? = nil) throws -> TestConversation {
        var config = ParleyConfig()
        config.mode = .alternate
        config.endpoint.likelyEndMs = likelyEndMs
        if let englishAnswerAfterMs { config.endpoint.answerAfterMs["en"] = englishAnswerAfterMs }
        let conversation = try TestConversation(
            config: config, realTime: false, hearsPlayback: false, accurate: AccurateHearing(engines: [accurate]))
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.3, words: 2, text: "young man"), in: "en")
        conversation.recognizers.willHear("young man", in: "en")
        return conversation
    }

    /// "a young man", a second of speech after `silenceMs` of the room, heard through `engine`.
    func aYoungMan(after silenceMs: Int, heardBy engine: ScriptedTranscriber) async throws -> (TestConversation, TurnInfo) {
        engine.willHear("a young man")
        let conversation = try conversation(engine)
        conversation.start()
        conversation.microphone.alternate(ms: [silenceMs, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "a young man")
        return (conversation, turn)
    }

    /// An engine that hears a fifth of a second of the room before the voice (Moonshine: given
    /// half a second of room noise first, it made words of it) hears that, not the whole
    /// pre-roll; one that asks for no less (Whisper) hears all the endpointer kept.
    @Test(arguments: [(Int?.some(200), 200), (nil, 500)])
    func theAccurateEngineHearsAsMuchOfTheRoomBeforeTheVoiceAsItAsks(room: Int?, heardBefore: Int) async throws {
        let engine = ScriptedTranscriber(name: "accurate", roomBeforeVoiceMs: room)
        let (conversation, _) = try await aYoungMan(after: 1_000, heardBy: engine)
        let heardMs = (engine.heard.last ?? 0) * 1000 / captureSampleRate
        // The room before the voice, its second, 80 ms of the pause (a period either way).
        #expect(abs(heardMs - (heardBefore + 1_000 + TurnLogic.keptPauseMs)) <= 40, "heard \(heardMs) ms")
        _ = await conversation.finish()
    }

    @Test func theAccurateWordsAreTheTurnsAndThePauseMadeThemReady() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        let (conversation, turn) = try await aYoungMan(after: 200, heardBy: engine)
        #expect(turn.translatedText == "[es] a young man")
        #expect(turn.timings.speculated == true, "translated and synthesized during the pause")
        #expect(conversation.translator.requests == ["a young man"])
        #expect(engine.heard.count == 1, "heard once, during the pause: the end was answered from it (\(engine.heard))")
        _ = await conversation.finish()
    }

    @Test func speechAfterThePauseIsHeardAgainWhole() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        // 200 ms of pre-roll and 1 s of speech are 19,200 samples; more is the second stretch.
        engine.willHear("a young man")
        engine.willHear("a young man and his dog", from: 25_000)
        // The pause (400 ms) is judged, but likely_end_ms (1 s) has not ended it when speech resumes.
        let conversation = try conversation(engine, likelyEndMs: 1_000)
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 400, 600, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "a young man and his dog")
        #expect(turn.translatedText == "[es] a young man and his dog")
        let heard = engine.heard
        #expect(heard.first.map { $0 < 25_000 } == true, "the first pause was heard: \(heard)")
        #expect(heard.last.map { $0 >= 25_000 } == true, "the end heard the whole utterance: \(heard)")
        _ = await conversation.finish()
    }

    /// Portuguese has no streaming recognizer (Whisper alone hears it), so the lanes cannot have
    /// told it from English: Whisper hears the whole utterance to tell who spoke, not only its
    /// opening (3 s told Portuguese from English wrong on recordings the whole told right).
    @Test func whisperHearsTheWholeUtteranceWhereTheOtherLanguageHasNoStreamingRecognizer() async throws {
        let moonshine = AccuratePassTests.ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = AccuratePassTests.ScriptedEngine(name: "whisper", languages: ["en", "pt"], detects: true)
        var config = ParleyConfig()
        config.speakerB = "pt"
        let conversation = try TestConversation(
            config: config, hearable: ["en"], realTime: false, hearsPlayback: false, accurate: AccurateHearing(engines: [moonshine, whisper]))
        conversation.recognizers.willHear("a long sentence", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 5_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "moonshine heard en")
        _ = await conversation.finish()
        let heard = whisper.heardCounts
        #expect(!heard.isEmpty && heard.allSatisfy { $0 >= 5 * captureSampleRate }, "Whisper heard \(heard) samples")
    }

    /// A long English utterance in auto mode: Whisper tells its language from the opening while
    /// the person is still speaking, so the pass at the pause is Moonshine's alone (it had shared
    /// the processor with Whisper's telling), and answers from the language told.
    @Test func theLanguageIsToldFromTheOpeningWhileThePersonSpeaks() async throws {
        let moonshine = AccuratePassTests.ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = AccuratePassTests.ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        let conversation = try TestConversation(realTime: false, hearsPlayback: false, accurate: AccurateHearing(engines: [moonshine, whisper]))
        conversation.recognizers.willHear("a long sentence", in: "en")
        conversation.start()
        // The person has spoken for 4 s, and goes on (nothing more is heard yet).
        conversation.microphone.alternate(ms: [200, 4_000])
        let deadline = Date(timeIntervalSinceNow: TestConversation.patience)
        while whisper.asked.load(ordering: .sequentiallyConsistent) == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(whisper.asked.load(ordering: .sequentiallyConsistent) == 1, "Whisper told the language while the person spoke")
        #expect(moonshine.asked.load(ordering: .sequentiallyConsistent) == 0, "no pause yet, no pass")
        conversation.microphone.speech(ms: 1_000)
        conversation.microphone.silence(ms: 2_000)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "moonshine heard en")
        _ = await conversation.finish()
        #expect(whisper.requests == [TranscriptionRequest(language: nil, candidates: ["en", "es"], detectOnly: ["en", "es"])], "told once")
        let opening = try #require(whisper.heardCounts.first)
        #expect(opening < 4_000 * captureSampleRate / 1000 && opening >= TurnLogic.openingMs * captureSampleRate / 1000, "\(opening) samples")
        #expect(!moonshine.heardCounts.isEmpty && moonshine.heardCounts.allSatisfy { $0 >= 5 * captureSampleRate }, "\(moonshine.heardCounts)")
    }

    /// The person pauses while Whisper is still telling the opening's language: the pass at the
    /// pause has Moonshine hear the words at once, beside it, and takes the language told.
    @Test func aPassThatStartsWhileTheOpeningIsToldHasMoonshineHearBesideIt() async throws {
        let moonshine = AccuratePassTests.ScriptedEngine(name: "moonshine", languages: ["en"])
        let whisper = AccuratePassTests.ScriptedEngine(name: "whisper", languages: ["en", "es"], detects: true)
        let telling = DispatchSemaphore(value: 0)
        whisper.gate = telling
        let conversation = try TestConversation(realTime: false, hearsPlayback: false, accurate: AccurateHearing(engines: [moonshine, whisper]))
        conversation.recognizers.willHear("a long sentence", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, TurnLogic.openingMs + 500])
        let deadline = Date(timeIntervalSinceNow: TestConversation.patience)
        while whisper.asked.load(ordering: .sequentiallyConsistent) == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(whisper.asked.load(ordering: .sequentiallyConsistent) == 1, "Whisper is telling the opening")
        conversation.microphone.silence(ms: 2_000)
        while moonshine.asked.load(ordering: .sequentiallyConsistent) == 0 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(moonshine.asked.load(ordering: .sequentiallyConsistent) >= 1, "Moonshine hears while the opening is told")
        #expect(whisper.asked.load(ordering: .sequentiallyConsistent) == 1, "Whisper is asked nothing else meanwhile")
        telling.signal()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "moonshine heard en")
        _ = await conversation.finish()
        #expect(whisper.requests.count == 1, "the language told was the pass's: \(whisper.requests)")
    }

    /// "a young man", a second of speech and two of the room, where the language model sees no
    /// end in the lanes' words (`lanes`: a last word misheard), heard by an engine that writes
    /// `accurate`.
    func aYoungMan(lanes: String, accurate: String, englishAnswerAfterMs: Int? = nil) async throws -> (TestConversation, TurnInfo) {
        let engine = ScriptedTranscriber(name: "accurate")
        engine.willHear(accurate)
        let conversation = try conversation(engine, englishAnswerAfterMs: englishAnswerAfterMs)
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.002, words: 2, text: lanes), in: "en")
        conversation.recognizers.willHear(lanes, in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == accurate)
        return (conversation, turn)
    }

    /// The lanes misheard the last word, so the language model sees no end; the accurate pass,
    /// asked at the same short pause all the same, writes a whole sentence: the turn ends there,
    /// not at the silence limit, and is answered from that pass.
    @Test func aSentenceTheAccurateWordsEndIsAnsweredAtTheShortPause() async throws {
        let (conversation, turn) = try await aYoungMan(lanes: "young men", accurate: "A young man.")
        #expect(turn.timings.endedBy == "accurate_words")
        let pause = try #require(turn.timings.pauseMs)
        #expect(pause >= 200 && pause < 400, "ended after \(pause) ms of pause")
        #expect(turn.timings.speculated == true, "translated and synthesized during the pause")
        _ = await conversation.finish()
    }

    /// In a language whose answers wait `answer_after_ms` (Spanish, whose readers think for a
    /// second after words Whisper writes a stop after), the accurate words end no pause.
    @Test func aLanguageWhoseAnswersWaitIsNotEndedOnTheAccurateWords() async throws {
        let (conversation, turn) = try await aYoungMan(lanes: "young men", accurate: "A young man.", englishAnswerAfterMs: 800)
        #expect(turn.timings.endedBy == "silence")
        _ = await conversation.finish()
    }

    /// The same, where the accurate words do not end a sentence (no stop, a comma, a word no
    /// sentence ends on), or the lanes' last word is one (the accurate engine may leave it out:
    /// "Had he married?"): the pause may be a thinking pause, and the silence limit ends it.
    @Test(arguments: [("young men", "A young man"), ("young men", "A young man,"), ("young men", "A young man and."), ("young man and", "A young man.")])
    func wordsThatMayGoOnWaitForTheSilenceLimit(lanes: String, accurate: String) async throws {
        let (conversation, turn) = try await aYoungMan(lanes: lanes, accurate: accurate)
        #expect(turn.timings.endedBy == "silence")
        #expect(turn.timings.pauseMs == 1_500)
        _ = await conversation.finish()
    }

    /// The pause's pass is still being heard (a slow engine on a long sentence) when the person
    /// goes on: it is stopped, and the end's pass over the whole utterance does not wait for it.
    @Test func aPauseThePersonWentOnFromStopsItsPass() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        engine.willHear("a young man")
        engine.willHear("a young man and his dog", from: 25_000)
        engine.holds(under: 25_000)
        let conversation = try conversation(engine, likelyEndMs: 1_000)
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 400])
        let deadline = Date(timeIntervalSinceNow: TestConversation.patience)
        while !engine.isHolding && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(engine.isHolding, "the pause's pass started")
        conversation.microphone.speech(ms: 600)
        conversation.microphone.silence(ms: 2_000)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "a young man and his dog")
        #expect(engine.stops == 1, "the pause's pass was stopped")
        #expect(engine.heard.count == 2 && engine.heard.last.map { $0 >= 25_000 } == true, "\(engine.heard)")
        _ = await conversation.finish()
    }

    /// The person pauses (long enough for the silence limit to end the utterance; a comma pause
    /// the language model takes for the end is the same) and goes on while Parley is still
    /// translating: the end is withdrawn and the utterance goes on, so the turn is the whole
    /// sentence, heard once whole, and nothing of the first part is spoken or kept.
    @Test func speechThatGoesOnBeforeParleyAnswersWithdrawsTheEnd() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        engine.willHear("a young man")
        engine.willHear("a young man and his dog", from: 40_000)
        var config = ParleyConfig()
        config.mode = .alternate
        config.endpoint.likelyEndMs = 200
        let conversation = try TestConversation(config: config, realTime: true, accurate: AccurateHearing(engines: [engine]))
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.3, words: 2, text: "young man"), in: "en")
        conversation.recognizers.willHear("young man", in: "en")
        conversation.translator.hold()
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 1_600])
        var states: [String] = []
        while states.last != "translating", let state = await conversation.next(EventType.state, as: StateEvent.self) {
            states.append(state.state)
        }
        #expect(states.last == "translating", "the pause ended the utterance: \(states)")
        // The person goes on while the translation is being made.
        conversation.microphone.alternate(ms: [0, 600, 2_000])
        while states.last != "hearing", let state = await conversation.next(EventType.state, as: StateEvent.self) {
            states.append(state.state)
        }
        #expect(states.last == "hearing", "the end was withdrawn: \(states)")
        while states.last != "translating", let state = await conversation.next(EventType.state, as: StateEvent.self) {
            states.append(state.state)
        }
        conversation.translator.release()
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "a young man and his dog")
        #expect(turn.translatedText == "[es] a young man and his dog")
        #expect(engine.heard.last.map { $0 >= 40_000 } == true, "the whole utterance was heard: \(engine.heard)")
        _ = await conversation.finish()
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["a young man and his dog"], "one turn, the whole sentence")
        #expect(!conversation.synthesizer.texts.contains("[es] a young man"), "nothing of the withdrawn end was spoken: \(conversation.synthesizer.texts)")
    }

    /// French has no streaming recognizer (Whisper alone hears it): in auto mode the English
    /// lane decodes the same audio, but its language model must not judge a French speaker's
    /// pauses. A 1 s pause mid-sentence, which English's cue would call an end after 200 ms, is
    /// waited out to the silence limit, so the sentence stays one turn.
    @Test func aLanguageWithoutAStreamingRecognizerIsNotEndedByTheOthersLanguageModel() async throws {
        let engine = ScriptedTranscriber(name: "accurate", languages: ["en", "fr"])
        engine.willHear("un jeune homme et son chien")
        var config = ParleyConfig()
        config.speakerA = "fr"
        config.speakerB = "en"
        config.mode = .auto
        config.endpoint.likelyEndMs = 200
        let conversation = try TestConversation(
            config: config, hearable: ["en"], realTime: false, hearsPlayback: false, accurate: AccurateHearing(engines: [engine]))
        conversation.recognizers.judgeEnds(SentenceEnd(probability: 0.3, words: 2, text: "young man"), in: "en")
        conversation.recognizers.willHear("young man", in: "en")
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 1_000, 600, 2_500])
        _ = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        _ = await conversation.finish()
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.count == 1, "one turn, not cut at the pause: \(stored.map(\.sourceText))")
        #expect(conversation.recognizers.judgements(in: "en") > 0, "the English lane did judge the pause")
    }

    /// A recording: the person goes on 300 ms after the pause's end was decided. The engines
    /// answer at once, but a recording's answer waits for `TurnLogic.recordingAnswerMs` of it,
    /// so the end is withdrawn as it would be on a slow machine: one turn, every word.
    @Test func aRecordingThatGoesOnWithinTheHoldIsOneTurnHoweverFastTheEngines() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        engine.willHear("a young man")
        engine.willHear("a young man and his dog", from: 30_000)
        let conversation = try conversation(engine)
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 500, 600, 2_000])
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "a young man and his dog")
        _ = await conversation.finish()
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.sourceText) == ["a young man and his dog"], "one turn, the whole sentence")
    }

    /// The same, as the lanes see it: they go on from where they were when the end was decided,
    /// fed the audio since, and their words are the two parts one after the other. They are not
    /// fed the utterance again from its start (on a Pi, decoding seconds of it again while the
    /// person speaks on could leave them behind when the sentence ends).
    @Test func theLanesGoOnFromAWithdrawnEndWithTheirWordsCarriedOn() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        engine.willHear("a young man")
        engine.willHear("a young man and his dog", from: 30_000)
        let conversation = try conversation(engine)
        conversation.recognizers.willHear("and his dog", in: "en")
        conversation.start()
        let signal = [200, 1_000, 500, 600, 2_000]
        conversation.microphone.alternate(ms: signal)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.sourceText == "a young man and his dog")
        _ = await conversation.finish()
        let stored = try await conversation.history.recentTurns(limit: 5)
        #expect(stored.map(\.streamingText) == ["young man and his dog"], "the lane's words before and after the withdrawn end")
        #expect(conversation.recognizers.calls.filter { $0 == .finish("en") }.count == 2, "\(conversation.recognizers.calls)")
        // Every sample at most once: no more than the utterance, from the room before it to 400 ms
        // into its last pause (fed again from its start, the first 1.5 s would count twice).
        let utterance = (signal.dropLast().reduce(0, +) + 400) * 16
        #expect(conversation.recognizers.fed("en") <= utterance, "\(conversation.recognizers.fed("en")) samples fed, of \(utterance)")
    }

    /// A recording: the translation is slow (held), and the person goes on a second after the
    /// pause's end was decided, past the hold. The recording is not read on while Parley works:
    /// it waits for the answer, and what follows is a turn of its own, as on a fast machine.
    @Test func aRecordingThatGoesOnAfterTheHoldWaitsForTheAnswerHoweverSlowTheEngines() async throws {
        let engine = ScriptedTranscriber(name: "accurate")
        engine.willHear("his dog")
        // A whole sentence, as an accurate engine writes it: with its stop (words without one
        // wait for the silence limit, `UnfinishedSentence.Ending.noStop`).
        engine.willHear("a young man.", from: 17_000)
        engine.willHear("a young man and his dog", from: 30_000)
        let conversation = try conversation(engine)
        conversation.translator.hold()
        conversation.start()
        conversation.microphone.alternate(ms: [200, 1_000, 1_200])
        var states: [String] = []
        while states.last != "translating", let state = await conversation.next(EventType.state, as: StateEvent.self) {
            states.append(state.state)
        }
        #expect(await !conversation.microphone.drained(seconds: 2), "the recording waits for the answer once its hold is heard")
        conversation.microphone.alternate(ms: [0, 300, 2_000])
        conversation.translator.release()
        let first = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        let second = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect([first.sourceText, second.sourceText] == ["a young man.", "his dog"])
        _ = await conversation.finish()
    }

    @Test func moonshineHearsSilenceAfterTheUtteranceCutIntoItsPause() {
        let heard = MoonshineTranscriber.heard([16_384, -32_768, 0])
        #expect(Array(heard.prefix(3)) == [0.5, -1, 0])
        #expect(heard.count == 3 + Int(MoonshineTranscriber.sampleRate) / 4)
        #expect(heard.dropFirst(3).allSatisfy { $0 == 0 })
    }

    @Test func moonshineCaughtInALoopIsNotTakenForWords() {
        #expect(MoonshineTranscriber.repeatsItself("2002, 2002, 2002, 200"))
        #expect(MoonshineTranscriber.repeatsItself("I think that I think that I think that it is"))
        #expect(!MoonshineTranscriber.repeatsItself("No, no, no."))
        #expect(!MoonshineTranscriber.repeatsItself("Two years ago I gave up civilization for this."))
        #expect(!MoonshineTranscriber.repeatsItself("It is what it is, and that is that."))
    }
}
