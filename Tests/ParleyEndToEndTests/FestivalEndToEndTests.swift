import Foundation
import ParleySynthesis
import ParleyTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Festival and its English voice are installed (`make deps`).
let festivalInstalled = FestivalVoice.festivalInstalled && FestivalVoice.table["en"]?.isInstalled == true

/// The lines a synthesizer reports.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

/// The samples `synthesizer` makes of English `text`, and how many chunks they came in.
func synthesized(_ synthesizer: any SpeechSynthesizer, _ text: String) throws -> (samples: [Int16], chunks: Int) {
    var samples: [Int16] = []
    var chunks = 0
    try synthesizer.synthesize(text, language: "en") {
        samples += $0
        chunks += 1
    }
    return (samples, chunks)
}

/// Speech: 10 words said in 2-8 s, loud enough, with pauses (a tone or noise has none).
func expectSpeech(_ samples: [Int16], rate: Int, _ comment: Comment) {
    let seconds = Double(samples.count) / Double(rate)
    #expect(seconds > 2 && seconds < 8, "\(seconds) s of audio; \(comment)")
    // 20 ms frames: speech has loud ones and near-silent ones between words.
    let frame = rate / 50
    let levels = stride(from: 0, to: samples.count - frame, by: frame).map { start in
        (samples[start..<start + frame].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(frame)).squareRoot()
    }
    let loud = levels.filter { $0 > 1_000 }.count
    let quiet = levels.filter { $0 < 100 }.count
    #expect(loud * 4 > levels.count, "\(loud) of \(levels.count) frames loud; \(comment)")
    #expect(quiet > 3, "\(quiet) near-silent frames; \(comment)")
}

/// Real Festival, behind the same synthesizer parleyd uses: a warm `festival --pipe` process.
@Suite(
    "Festival, for real", .serialized, .startsProcesses,
    .enabled(if: festivalInstalled, "install festival and festvox-us-slt-hts (make deps)"))
struct FestivalEndToEndTests {
    static let sentence = "Go forward ten meters, then turn left at the station."

    private func englishSynthesizer(_ lines: Lines) throws -> FestivalSynthesizer {
        let english = try #require(FestivalVoice.table["en"])
        return FestivalSynthesizer(espeak: try EspeakSynthesizer(), festivalVoices: ["en": english], report: { lines.add($0) })
    }

    @Test func anEnglishSentenceIsSpokenByFestival() throws {
        let lines = Lines()
        let synthesizer = try englishSynthesizer(lines)
        synthesizer.prepare()
        let pid = try #require(synthesizer.festivalProcess)
        let (samples, chunks) = try synthesized(synthesizer, Self.sentence)
        expectSpeech(samples, rate: synthesizer.sampleRate, "Festival's English")
        #expect(chunks > 10, "handed on in 50 ms chunks, so a stop cuts it")
        #expect(lines.all.isEmpty, "nothing went wrong: \(lines.all)")
        #expect(synthesizer.festivalProcess == pid, "the same warm process speaks every sentence")
        // Festival's voice, not espeak-ng's: espeak-ng says the sentence in another length.
        var espeak: [Int16] = []
        try EspeakSynthesizer().synthesize(Self.sentence, language: "en") { espeak += $0 }
        #expect(abs(espeak.count - samples.count) > synthesizer.sampleRate / 20)
    }

    @Test func aKilledFestivalFallsBackToEspeakThenRecovers() throws {
        let lines = Lines()
        let synthesizer = try englishSynthesizer(lines)
        synthesizer.prepare()
        let first = try #require(synthesizer.festivalProcess)
        #expect(kill(first, SIGKILL) == 0)
        let fallback = try synthesized(synthesizer, Self.sentence)
        expectSpeech(fallback.samples, rate: synthesizer.sampleRate, "espeak-ng's fallback")
        #expect(lines.all.count == 1, "one line: \(lines.all)")
        #expect(lines.all.first?.contains("Festival failed") == true)
        let second = try #require(synthesizer.festivalProcess, "a fresh process started")
        #expect(second != first)
        let recovered = try synthesized(synthesizer, Self.sentence)
        expectSpeech(recovered.samples, rate: synthesizer.sampleRate, "Festival again")
        #expect(lines.all.count == 1, "Festival spoke again: \(lines.all)")
        #expect(abs(recovered.samples.count - fallback.samples.count) > synthesizer.sampleRate / 20, "not espeak-ng's length")
    }

    @Test func festivalStaysSmall() throws {
        // Not a speed: its memory, which the heap setting keeps (320 MB with Festival's default).
        let lines = Lines()
        let synthesizer = try englishSynthesizer(lines)
        synthesizer.prepare()
        _ = try synthesized(synthesizer, Self.sentence)
        let pid = try #require(synthesizer.festivalProcess)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        let kilobytes = try #require(rss)
        #expect(kilobytes < 150_000, "Festival holds \(kilobytes) kB")
    }
}
