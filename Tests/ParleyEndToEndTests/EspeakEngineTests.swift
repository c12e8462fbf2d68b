import ParleyTesting
import Testing
import ParleySynthesis

/// espeak-ng keeps one global voice; each `EspeakSynthesizer` has its own settings, and the
/// lock around the library remembers which are selected.
@Suite("espeak-ng: one library, instances with their own voices", .startsProcesses)
struct EspeakEngineTests {
    private func samples(_ synthesizer: EspeakSynthesizer, _ text: String) throws -> Int {
        try synthesizer.synthesize(text, language: "en") { _ in }
    }

    @Test func twoInstancesSpeakWithTheirOwnRatesWhateverTheOrder() throws {
        let slow = try EspeakSynthesizer()
        slow.voices["en"] = VoiceSettings(rate: 90)
        let fast = try EspeakSynthesizer()
        fast.voices["en"] = VoiceSettings(rate: 400)
        #expect(slow.sampleRate == fast.sampleRate, "one library, initialised once")
        let text = "go forward ten meters and then turn left"
        let slowFirst = try samples(slow, text)
        let fastThen = try samples(fast, text)
        let slowAgain = try samples(slow, text)
        #expect(fastThen * 2 < slowFirst, "slow \(slowFirst) samples, fast \(fastThen)")
        // (espeak-ng's length varies by a few samples from one sentence to the next.)
        #expect(abs(slowAgain - slowFirst) * 100 < slowFirst, "the slow voice is selected again after the fast one spoke: \(slowAgain) then \(slowFirst)")
    }

    @Test func aChangedVoiceSettingIsUsedAtTheNextSentence() throws {
        let synthesizer = try EspeakSynthesizer()
        let text = "the house is red"
        let normal = try samples(synthesizer, text)
        synthesizer.voices["en"] = VoiceSettings(rate: 400)
        let faster = try samples(synthesizer, text)
        #expect(faster < normal, "normal \(normal), at 400 words a minute \(faster)")
        #expect(synthesizer.ipa("hello", language: "en") != nil)
    }

    @Test func aLanguageWithoutAVoiceIsRefused() throws {
        let synthesizer = try EspeakSynthesizer()
        #expect(throws: SynthesisError.self) { try synthesizer.synthesize("x", language: "zz-nothing") { _ in } }
    }
}
