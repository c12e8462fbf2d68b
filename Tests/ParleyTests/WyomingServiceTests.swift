import Foundation
import ParleyTesting
import Testing

@testable import ParleyRecognition

#if canImport(Glibc)
    import Glibc
#endif

/// The server side of Wyoming (`WyomingService`, what `parleyd worker moonshine` runs), driven
/// over pipes by the client side Parley uses, with an engine in memory on a thread.
@Suite("Wyoming service", .blocksThreads)
struct WyomingServiceTests {
    /// Hears "N samples in LANGUAGE"; fails on an utterance of exactly 1,000 samples.
    final class CountingEngine: UtteranceTranscriber {
        let name = "counting"
        let detectsLanguage = false
        func hears(_ language: String) -> Bool { language == "en" }
        func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript {
            if samples.count == 1_000 { throw RecognizerError("the engine broke") }
            let sum = samples.reduce(0) { $0 + Int($1) }
            return Transcript(text: "\(samples.count) samples summing \(sum)", language: request.language ?? "?", confidence: 0.5, engine: name)
        }
    }

    /// Starts a service on a thread: the client's link to it, and how it ended (nil while it runs).
    /// `quiet` counts the times it ran its quiet work (1 s after an answer with no request).
    func serve(quiet: Gate<Int> = Gate(0)) throws -> (link: Link, outcome: Gate<String?>) {
        var toService: [Int32] = [-1, -1]
        var fromService: [Int32] = [-1, -1]
        try #require(pipe(&toService) == 0 && pipe(&fromService) == 0)
        let outcome = Gate<String?>(nil)
        let (input, output) = (toService[0], fromService[1])
        Thread {
            var ended = "ended"
            do throws(RecognizerError) {
                try WyomingService.serve(
                    CountingEngine(), languages: ["en"], input: input, output: output, quietMs: 1_000, quiet: { quiet.withLock { $0 += 1 } })
            } catch {
                ended = "failed: \(error)"
            }
            close(input)
            close(output)
            outcome.withLock { $0 = ended }
        }.start()
        return (Link.attached(input: fromService[0], output: toService[1]), outcome)
    }

    /// How the service ended, once it has (nil: still running after 5 s).
    func end(of outcome: Gate<String?>) -> String? {
        outcome.wait(for: { $0 }, until: Date() + 5)
    }

    @Test func itDescribesItselfAndHearsEachUtteranceWhole() throws {
        let served = try serve()
        let info = try served.link.exchange([WyomingEvent(type: "describe")], timeoutMs: 5_000)
        #expect(info.type == "info")
        let described = try JSONSerialization.jsonObject(with: info.data) as? [String: Any]
        let program = (described?["asr"] as? [[String: Any]])?.first
        #expect(program?["name"] as? String == "counting")
        // 40,000 samples go in three chunks; each utterance is heard alone.
        for count in [40_000, 16_000] {
            let samples = (0..<count).map { Int16(truncatingIfNeeded: $0 % 7 - 3) }
            let request = TranscriptionRequest(language: "en")
            let answer = try served.link.exchange(try WyomingRequest.events(for: samples, request), timeoutMs: 5_000)
            let transcript = try WyomingRequest.transcript(from: answer, request, engine: "counting")
            #expect(transcript.text == "\(count) samples summing \(samples.reduce(0) { $0 + Int($1) })")
            #expect(transcript.language == "en" && transcript.confidence == 0.5)
        }
        served.link.close()
        #expect(end(of: served.outcome) == "ended", "the service ends, without an error, when the client closes")
    }

    @Test func anEngineFailureIsAnErrorAnswerAndTheServiceGoesOn() throws {
        let served = try serve()
        let request = TranscriptionRequest(language: "en")
        let failed = try served.link.exchange(try WyomingRequest.events(for: [Int16](repeating: 1, count: 1_000), request), timeoutMs: 5_000)
        #expect(failed.type == "error")
        do {
            _ = try WyomingRequest.transcript(from: failed, request, engine: "counting")
            Issue.record("an error answer was taken for a transcript")
        } catch {
            #expect(error.description.contains("the engine broke"))
        }
        let answer = try served.link.exchange(try WyomingRequest.events(for: [1, 2, 3], request), timeoutMs: 5_000)
        #expect(try WyomingRequest.transcript(from: answer, request, engine: "counting").text == "3 samples summing 6")
        served.link.close()
        #expect(end(of: served.outcome) == "ended")
    }

    @Test func itGivesMemoryBackOnlyOnceNoRequestHasComeForAWhile() throws {
        let quiet = Gate(0)
        let served = try serve(quiet: quiet)
        let request = TranscriptionRequest(language: "en")
        // Two requests back to back: the second comes well within 1 s of the first answer.
        _ = try served.link.exchange(try WyomingRequest.events(for: [1, 2], request), timeoutMs: 5_000)
        _ = try served.link.exchange(try WyomingRequest.events(for: [3, 4], request), timeoutMs: 5_000)
        #expect(quiet.withLock { $0 } == 0, "not between two requests a moment apart")
        #expect(quiet.wait(for: { $0 == 1 ? true : nil }, until: Date() + 5) == true, "once the service has been quiet for 1 s")
        served.link.close()
        #expect(end(of: served.outcome) == "ended")
        #expect(quiet.withLock { $0 } == 1)
    }

    @Test func samplesAreReadLittleEndian() {
        #expect(WyomingService.littleEndianSamples([1, 0, 0xff, 0xff, 0x00, 0x80, 7]) == [1, -1, Int16.min])
    }
}

/// What a Wyoming service's `info` answer says it hears.
@Suite("Wyoming info languages")
struct WyomingInfoLanguagesTests {
    @Test func theLanguagesOfEverySpeechToTextModelAreRead() {
        let info = #"{"asr":[{"name":"a","models":[{"name":"tiny.en","languages":["en"]}]},{"name":"b","models":[{"name":"x","languages":["es-ES","pt_PT"]}]}]}"#
        #expect(WyomingTranscriber.declaredLanguages(Data(info.utf8)) == ["en", "es", "pt"])
    }

    @Test func anAnswerNamingNoLanguageLeavesTheConfiguredOnes() {
        #expect(WyomingTranscriber.declaredLanguages(Data("{}".utf8)) == nil)
        #expect(WyomingTranscriber.declaredLanguages(Data(#"{"asr":[{"name":"a","models":[{"name":"m"}]}]}"#.utf8)) == nil)
        #expect(WyomingTranscriber.declaredLanguages(Data("not json".utf8)) == nil)
    }
}
