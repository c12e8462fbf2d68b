import Foundation
import ParleyCore
import Testing
@testable import ParleyConfig
import ParleyConversation
@testable import ParleyHistory
import ParleyProtocol
@testable import ParleyRecognition
@testable import ParleyRuntime
import ParleyTesting

/// The calibration of word and turn confidence, and where the words' confidences go.
@Suite("Confidence")
struct ConfidenceTests {
    /// A word of `phones` phones lasting `frames` frames, with a per-frame acoustic score.
    private func word(_ text: String, posterior: Double, frames: Int = 30, phones: Int = 3, perFrame: Double = -3) -> WordEvidence {
        WordEvidence(text: text, posterior: posterior, frames: frames, phones: phones, acousticScore: perFrame * Double(frames))
    }

    @Test func alternatePronunciationMarksAreNotPartOfTheWord() {
        #expect(WordEvidence.spelling("with(2)") == "with")
        #expect(WordEvidence.spelling("to(3)") == "to")
        #expect(WordEvidence.spelling("forward") == "forward")
        #expect(WordEvidence.spelling("(") == "(")
        #expect(WordEvidence.spelling("a(b)") == "a(b)")
    }

    @Test func aWordAtASpeakingRateKeepsItsPosterior() {
        #expect(ConfidenceCalibration.confidence(of: word("go", posterior: 0.97, frames: 20, phones: 2)) == 0.97)
        // 320 ms per phone: a drawn-out last word is still speech.
        #expect(ConfidenceCalibration.confidence(of: word("or", posterior: 0.98, frames: 64, phones: 2)) == 0.98)
        // Out-of-range posteriors (rounding in the log domain) are clamped.
        #expect(ConfidenceCalibration.confidence(of: word("three", posterior: 1.0001)) == 1)
        #expect(ConfidenceCalibration.confidence(of: word("x", posterior: .nan)) == 0)
    }

    @Test func aWordStretchedPastAnySpeakingRateIsDoubtful() {
        // A hum decoded as one two-phone word lasting 1.2 s: alone in its lattice, posterior 1.
        let hum = ConfidenceCalibration.confidence(of: word("thigh", posterior: 1, frames: 120, phones: 2))
        #expect(hum < 0.25)
        let longer = ConfidenceCalibration.confidence(of: word("thigh", posterior: 1, frames: 240, phones: 2))
        #expect(longer < hum)
    }

    @Test func cleanSpeechScoresAboveTheDefaultAndTheOtherLanguageBelow() {
        let minimum = ParleyConfig().minConfidence
        #expect(minimum == 0.5)
        // "go forward ten meters": sure words, an acoustic fit of clean speech.
        let clean = [0.99, 0.99, 0.77, 0.78].enumerated().map { word("w\($0.offset)", posterior: $0.element, perFrame: -3.1) }
        let cleanConfidence = try! #require(ConfidenceCalibration.confidence(of: clean))
        #expect(cleanConfidence > minimum && cleanConfidence < 1)
        // Spanish heard by the English model: words the lattice doubts, a poor acoustic fit.
        let wrong = [0.5, 0.2, 0.02, 0.07, 0.08, 0.96, 0.96].enumerated().map { word("w\($0.offset)", posterior: $0.element, perFrame: -4.8) }
        #expect(try! #require(ConfidenceCalibration.confidence(of: wrong)) < minimum)
        // Sure words the acoustic model cannot fit (the other language, short): doubtful too.
        let unfit = [0.95, 0.9].enumerated().map { word("w\($0.offset)", posterior: $0.element, perFrame: -5.5) }
        #expect(try! #require(ConfidenceCalibration.confidence(of: unfit)) < minimum)
        #expect(ConfidenceCalibration.confidence(of: []) == nil)
    }

    @Test func theAcousticFitFallsAsTheScoreDoes() {
        let fits = [-2.5, -4.0, -5.0, -6.0].map { ConfidenceCalibration.acousticFit(of: [word("a", posterior: 1, perFrame: $0)]) }
        #expect(fits == fits.sorted(by: >))
        #expect(fits[0] > 0.99)
        #expect(abs(fits[2] - 0.5) < 1e-3)
        #expect(fits[3] < 0.2)
        // Steady noise held by one word: a fit no speech has.
        #expect(ConfidenceCalibration.acousticFit(of: [word("fbi", posterior: 1, perFrame: -0.4)]) < 0.05)
        #expect(ConfidenceCalibration.acousticFit(of: []) == 1)
    }

    @Test func theRecognitionCarriesEachWordAndItsConfidence() {
        let evidence = [word("go", posterior: 0.97, frames: 20, phones: 2), word("thigh", posterior: 1, frames: 120, phones: 2)]
        let words = ConfidenceCalibration.recognizedWords(evidence)
        #expect(words.map(\.text) == ["go", "thigh"])
        #expect(words[0].confidence == 0.97)
        #expect(words[1].confidence < 0.25)
        let recognition = Recognition(text: "go thigh", confidence: 0.4, words: words)
        #expect(recognition.wordConfidences.map(\.text) == ["go", "thigh"])
        #expect(recognition.wordConfidences[0].confidence == 0.97)
        #expect(recognition.wordConfidences[1].isDoubtful(below: 0.5))
    }

    @Test func wordConfidenceIsStoredAndComesBackInTheTurn() async throws {
        let database = try AppDatabase.inMemory()
        let session = try await database.startSession(speakerA: "en", speakerB: "es")
        let words = [WordConfidence(text: "go", confidence: 0.97), WordConfidence(text: "forward", confidence: 0.31)]
        _ = try await database.insert(
            TurnRecord(
                sessionID: try #require(session.id), speaker: .a, sourceLang: "en", targetLang: "es", sourceText: "go forward",
                translatedText: nil, confidence: 0.6, words: words, status: .untranslated, createdAt: Date()))
        let stored = try #require(try await database.recentTurns(limit: 1).first)
        #expect(stored.words == words)
        #expect(stored.info.words == words)
        // In the protocol the turn's words are a list of {text, confidence}.
        let encoded = String(decoding: try JSONEncoder().encode(stored.info), as: UTF8.self)
        #expect(encoded.contains(#""words":[{"#))
    }

    @Test func watchMarksDoubtfulWords() {
        let words = [WordConfidence(text: "go", confidence: 0.97), WordConfidence(text: "forward", confidence: 0.99), WordConfidence(text: "ten", confidence: 0.3)]
        #expect(WordConfidence.marking("go forward ten", words: words, below: 0.5) == "go forward [ten]")
        #expect(WordConfidence.marking("go forward ten", words: words, below: 0.5, colour: true) == "go forward \u{1B}[33m[ten]\u{1B}[39m")
        #expect(WordConfidence.marking("go forward ten", words: words, below: 0) == "go forward ten")
        // Typed turns have no words; words that are not the text's are not trusted.
        #expect(WordConfidence.marking("go forward ten", words: nil, below: 0.5) == "go forward ten")
        #expect(WordConfidence.marking("go back", words: words, below: 0.5) == "go back")
    }

    @Test func aDoubtfulTurnsWordsReachTheTranscriptTheTurnAndHistory() async throws {
        var config = RuntimeTests.config()
        config.mode = .alternate
        let conversation = try TestConversation(config: config)
        conversation.recognizers.willHear(
            "go forward", in: "en", confidence: 0.3,
            words: [RecognizedWord(text: "go", confidence: 0.9), RecognizedWord(text: "forward", confidence: 0.123456)])
        conversation.start()
        conversation.microphone.silence(ms: 200)
        conversation.microphone.speech(ms: 1_000)
        conversation.microphone.silence(ms: 800)
        let expected = [WordConfidence(text: "go", confidence: 0.9), WordConfidence(text: "forward", confidence: 0.123)]
        let transcript = try #require(await conversation.next(EventType.transcript, as: TextEvent.self))
        #expect(transcript.confidence == 0.3)
        #expect(transcript.words == expected)
        let turn = try #require(await conversation.next(EventType.turn, as: TurnInfo.self))
        #expect(turn.words == expected)
        // Under the default minimum: flagged, and (no prompt configured) translated anyway.
        #expect(turn.lowConfidence)
        #expect(turn.error == "low confidence (0.30 < 0.50)")
        #expect(turn.translatedText?.isEmpty == false)
        let stored = try #require(try await conversation.history.recentTurns(limit: 1).first)
        #expect(stored.words == expected)
        _ = await conversation.finish()
    }
}

@Suite("A lane's words carried on after a withdrawn end")
struct CarriedRecognitionTests {
    @Test func theTwoPartsAreOneAfterTheOtherTheirConfidenceAndScoreWeighted() {
        let before = Recognition(
            text: "a young man", confidence: 0.9,
            words: ["a", "young", "man"].map { RecognizedWord(text: $0, confidence: 0.9) }, score: -2, frames: 60)
        let after = Recognition(text: "and his dog", confidence: 0.3, words: [RecognizedWord(text: "dog", confidence: 0.3)], score: -5, frames: 20)
        let whole = before.followed(by: after)
        #expect(whole.text == "a young man and his dog")
        #expect(whole.words.map(\.text) == ["a", "young", "man", "dog"])
        #expect(whole.frames == 80)
        #expect(abs((whole.confidence ?? 0) - 0.75) < 1e-9, "three words at 0.9, one at 0.3")
        #expect(abs((whole.score ?? 0) - -2.75) < 1e-9, "60 frames at -2, 20 at -5")
    }

    @Test func aPartWithNothingHeardLeavesTheOther() {
        let words = Recognition(text: "a young man", confidence: 0.8, score: -2, frames: 60)
        let nothing = Recognition(text: "", confidence: nil)
        #expect(words.followed(by: nothing) == words)
        #expect(nothing.followed(by: words) == words)
    }
}
