import Foundation
import ParleyCore
import ParleyTesting
import Synchronization
import Testing
@testable import ParleyConfig
@testable import ParleyDaemon
@testable import ParleySynthesis

/// What an in-memory child (Festival, Piper's worker) does with each request, in order; once
/// the list is used up, it speaks.
enum FestivalStep: Sendable {
    case speak
    /// Dies: its output closes.
    case crash
    /// Never answers: the wait runs out (at once here; the real one waits `timeoutMs`).
    case hang
    /// It refuses: Festival's voice is not installed, Piper's worker has no voice for it.
    case refuse
}

/// The children a synthesizer starts, in memory (`start()` for Festival, `startPiper()` for
/// Piper's worker): what each does with each request, as `steps` say, and how many were started
/// and stopped.
final class ChildScript: Sendable {
    private struct State {
        var steps: [FestivalStep] = []
        var started = 0
        var stopped = 0
        var requests: [String] = []
        var failsToStart = false
    }

    private let state = Mutex(State())

    func then(_ steps: FestivalStep...) { state.withLock { $0.steps += steps } }
    func failToStart(_ fails: Bool) { state.withLock { $0.failsToStart = fails } }
    var started: Int { state.withLock { $0.started } }
    var stopped: Int { state.withLock { $0.stopped } }
    /// What each child was asked, in order.
    var requests: [String] { state.withLock { $0.requests } }

    /// Counts a child started, or fails as a missing program does.
    func starting() throws(ChildFailure) {
        let fails = state.withLock { state -> Bool in
            if !state.failsToStart { state.started += 1 }
            return state.failsToStart
        }
        if fails { throw .broken("cannot start it: No such file or directory") }
    }

    func start() throws(FestivalFailure) -> any FestivalLink {
        try starting()
        return InMemoryFestival(script: self)
    }

    func next(_ request: String) -> FestivalStep {
        state.withLock { state in
            state.requests.append(request)
            return state.steps.isEmpty ? .speak : state.steps.removeFirst()
        }
    }

    func stoppedOne() { state.withLock { $0.stopped += 1 } }
}

private final class InMemoryFestival: FestivalLink {
    let script: ChildScript
    var dead = false
    var stopped = false
    var process: pid_t? { nil }

    init(script: ChildScript) { self.script = script }

    func exchange(_ request: [UInt8], timeoutMs: Int) throws(FestivalFailure) -> FestivalAnswer {
        guard !dead, !stopped else { throw .exited(how: nil) }
        let text = String(decoding: request, as: UTF8.self)
        switch script.next(text) {
        case .speak:
            let spoken = text.split(separator: "\"").dropFirst().first ?? ""
            return .wave([Int16](repeating: 7, count: 10 * spoken.count))
        case .crash:
            dead = true
            throw .exited(how: "killed by signal 9")
        case .hang:
            throw .timedOut(timeoutMs)
        case .refuse:
            return .refused
        }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        script.stoppedOne()
    }
}

/// The lines a synthesizer reports.
final class Reports: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

@Suite("Festival in front of espeak-ng, in memory")
struct FestivalTests {
    let script = ChildScript()
    let espeak = SilentSynthesizer(languages: ["en", "es", "it", "ca"], samplesPerCharacter: 1, chunk: 100)
    let reports = Reports()

    func synthesizer(_ languages: [String] = ["en"]) -> FestivalSynthesizer {
        let voices = FestivalVoice.table.filter { languages.contains($0.key) }
        let reports = reports
        return FestivalSynthesizer(
            espeak: espeak, festivalVoices: voices, start: { () throws(FestivalFailure) -> any FestivalLink in try script.start() },
            report: { reports.add($0) })
    }

    /// Says `text`, and returns every sample handed on.
    func say(_ synthesizer: FestivalSynthesizer, _ text: String, _ language: String = "en") throws -> [Int16] {
        var samples: [Int16] = []
        let produced = try synthesizer.synthesize(text, language: language) { samples += $0 }
        #expect(produced == samples.count)
        return samples
    }

    // MARK: - Which engine speaks which language

    @Test func autoGivesFestivalTheLanguagesItWasHeardBetterIn() throws {
        #expect(Set(Daemon.festivalChoice(ParleyConfig()).keys) == ["en", "it", "ca"])
        #expect(Set(Daemon.festivalChoice(try parse("[voice]\nengine = \"espeak-ng\"")).keys).isEmpty)
        #expect(Set(Daemon.festivalChoice(try parse("[voice]\nengine = \"festival\"")).keys) == ["en", "it", "ca"])
    }

    @Test func aLanguagesOwnEngineWinsOverTheDefault() throws {
        let config = try parse("[voice.it]\nengine = \"espeak-ng\"\n[voice.es]\nengine = \"festival\"")
        // Spanish has no Festival voice in Debian: espeak-ng speaks it whatever the setting.
        #expect(Set(Daemon.festivalChoice(config).keys) == ["en", "ca"])
        let catalan = try parse("[voice]\nengine = \"espeak-ng\"\n[voice.ca]\nengine = \"festival\"")
        #expect(Set(Daemon.festivalChoice(catalan).keys) == ["ca"])
        let onlyEnglish = try parse("[voice]\nengine = \"espeak-ng\"\n[voice.en]\nengine = \"auto\"")
        #expect(Set(Daemon.festivalChoice(onlyEnglish).keys) == ["en"])
    }

    @Test func aNewEngineIsReadAtTheNextStart() throws {
        let old = try parse("")
        let new = try parse("[voice]\nengine = \"espeak-ng\"")
        let plan = Reloader.plan(from: old, to: new)
        #expect(plan.restartNeeded == ["voice.engine"], "the key, not \"other\"")
        #expect(plan.change == nil && plan.applied.isEmpty)
        let italian = try parse("[voice.it]\nengine = \"espeak-ng\"")
        #expect(Reloader.plan(from: old, to: italian).restartNeeded == ["voice.it"])
    }

    @Test func aMissingVoiceOrFestivalIsSaidOnceWithWhatToInstall() {
        let lines = Reports()
        let noItalian = Daemon.festivalVoices(ParleyConfig(), report: { lines.add($0) }, festivalInstalled: true) { $0.language != "it" }
        #expect(Set(noItalian.keys) == ["en", "ca"])
        #expect(lines.all.count == 1)
        #expect(lines.all.first?.contains("install festvox-italp16k") == true)

        let noFestival = Reports()
        #expect(Daemon.festivalVoices(ParleyConfig(), report: { noFestival.add($0) }, festivalInstalled: false) { _ in true }.isEmpty)
        #expect(noFestival.all == [
            "Festival is not installed, so espeak-ng speaks ca, en, it: install festival festvox-ca-ona-hts festvox-us-slt-hts festvox-italp16k (make deps), or set [voice] engine = \"espeak-ng\""
        ])

        let quiet = Reports()
        let none = Daemon.festivalVoices(try! parse("[voice]\nengine = \"espeak-ng\""), report: { quiet.add($0) }, festivalInstalled: false) { _ in false }
        #expect(none.isEmpty && quiet.all.isEmpty, "nothing to say when no language wants Festival")
    }

    @Test func festivalSpeaksItsLanguagesAndEspeakTheOthers() throws {
        let synthesizer = synthesizer(["en", "it"])
        synthesizer.prepare()
        #expect(script.started == 1, "started at once, warm for the first sentence")
        let english = try say(synthesizer, "Go forward ten meters.")
        #expect(english == [Int16](repeating: 7, count: 10 * "Go forward ten meters.".count))
        #expect(script.requests == [#"(parley.say (quote voice_cmu_us_slt_arctic_hts) "Go forward ten meters.")"#])
        let spanish = try say(synthesizer, "Hola.", "es")
        #expect(spanish.count == 5 && espeak.texts == ["Hola."])
        _ = try say(synthesizer, "Ciao.", "it")
        #expect(script.requests.last?.contains("voice_lp_diphone") == true)
        #expect(script.started == 1 && reports.all.isEmpty)
        #expect(synthesizer.hasVoice(for: "ca") && !synthesizer.hasVoice(for: "zz"))
    }

    // MARK: - Failures

    @Test func aCrashFallsBackToEspeakAndAFreshProcessSpeaksNext() throws {
        let synthesizer = synthesizer()
        synthesizer.prepare()
        script.then(.crash)
        let samples = try say(synthesizer, "Where is the station?")
        #expect(samples.count == "Where is the station?".count, "espeak-ng said it")
        #expect(espeak.texts == ["Where is the station?"])
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("Festival failed (it exited (killed by signal 9))") == true)
        #expect(script.stopped == 1 && script.started == 2, "the dead one reaped, a fresh one started at once")
        let next = try say(synthesizer, "Thank you.")
        #expect(next.first == 7, "Festival speaks the next text")
        #expect(reports.all.count == 1)
    }

    @Test func aHangFallsBackToEspeakAndAFreshProcessSpeaksNext() throws {
        let synthesizer = synthesizer()
        script.then(.hang)
        _ = try say(synthesizer, "Where is the station?")
        #expect(espeak.texts == ["Where is the station?"])
        #expect(reports.all.first?.contains("it did not answer within \(FestivalSynthesizer.timeoutMs("Where is the station?")) ms") == true)
        #expect(script.stopped == 1 && script.started == 2)
        #expect(try say(synthesizer, "Thank you.").first == 7)
    }

    @Test func aMissingVoiceFallsBackAndSaysWhatToInstall() throws {
        let synthesizer = synthesizer()
        script.then(.refuse)
        _ = try say(synthesizer, "Hello.")
        #expect(espeak.texts == ["Hello."])
        #expect(reports.all == [
            "Festival could not speak en with voice_cmu_us_slt_arctic_hts: install festvox-us-slt-hts (make deps); espeak-ng spoke this sentence"
        ])
        #expect(script.stopped == 0 && script.started == 1, "a refusal is no reason to replace the process")
    }

    @Test func festivalThatCannotStartIsTriedAgainAtTheNextText() throws {
        let synthesizer = synthesizer()
        script.failToStart(true)
        synthesizer.prepare()
        _ = try say(synthesizer, "Hello.")
        #expect(espeak.texts == ["Hello."])
        #expect(reports.all.count == 2)
        #expect(reports.all.allSatisfy { $0.contains("install festival") })
        script.failToStart(false)
        #expect(try say(synthesizer, "Hello again.").first == 7)
        #expect(script.started == 1)
    }

    @Test func afterAFailureTheRestOfTheTextIsEspeaks() throws {
        let synthesizer = synthesizer()
        script.then(.speak, .crash)
        let samples = try say(synthesizer, "Good morning. Where is the station? Thanks.")
        #expect(Array(samples.prefix(10 * "Good morning.".count)) == [Int16](repeating: 7, count: 10 * "Good morning.".count))
        #expect(espeak.texts == ["Where is the station?", "Thanks."], "no turn lost: every sentence is said")
        #expect(script.requests.count == 2)
    }

    @Test func aStopWhileSpeakingIsNoFestivalFailure() throws {
        struct Stop: Error {}
        let synthesizer = synthesizer()
        #expect(throws: SynthesisError.self) { try synthesizer.synthesize("Hello there.", language: "en") { _ in throw Stop() } }
        #expect(espeak.texts.isEmpty && reports.all.isEmpty && script.stopped == 0)
    }

    // MARK: - The wire

    @Test func requestsAreQuotedSchemeInTheVoicesEncoding() throws {
        let english = try #require(FestivalVoice.table["en"])
        #expect(String(decoding: FestivalScheme.say("say \"hi\" \\ now\nplease", voice: english), as: UTF8.self)
            == #"(parley.say (quote voice_cmu_us_slt_arctic_hts) "say \"hi\" \\ now please")"#)
        let italian = try #require(FestivalVoice.table["it"])
        let bytes = FestivalScheme.say("città ✓", voice: italian)
        #expect(bytes.contains(0xE0) && !bytes.contains(0xC3), "à in Latin-1")
        #expect(bytes.contains(UInt8(ascii: "?")), "what Latin-1 lacks is a question mark")
        let catalan = try #require(FestivalVoice.table["ca"])
        #expect(FestivalScheme.say("aparèixer", voice: catalan).contains(0xE8), "è in Latin-1")
    }

    @Test func riffFilesAreRead() {
        func riff(channels: UInt16, bits: UInt16, samples: [Int16]) -> [UInt8] {
            func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
            func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xff), UInt8(v >> 8)] }
            let data = samples.flatMap { le16(UInt16(bitPattern: $0)) }
            let fmt = le16(1) + le16(channels) + le32(22_050) + le32(44_100) + le16(2) + le16(bits)
            return Array("RIFF".utf8) + le32(4 + 8 + fmt.count + 8 + data.count) + Array("WAVE".utf8)
                + Array("fmt ".utf8) + le32(fmt.count) + fmt + Array("data".utf8) + le32(data.count) + data
        }
        #expect(FestivalScheme.samples(ofRIFF: riff(channels: 1, bits: 16, samples: [1, -2, 300])) == [1, -2, 300])
        #expect(FestivalScheme.samples(ofRIFF: riff(channels: 2, bits: 16, samples: [1, 2])) == nil)
        #expect(FestivalScheme.samples(ofRIFF: Array(riff(channels: 1, bits: 16, samples: [1, 2]).dropLast(2))) == nil, "cut short")
        #expect(FestivalScheme.samples(ofRIFF: Array("ERROR\n".utf8)) == nil)
    }

    @Test func textIsCutIntoSentences() {
        #expect(SentenceSpeech.sentences("Hello. How are you? Fine!") == ["Hello.", "How are you?", "Fine!"])
        #expect(SentenceSpeech.sentences("It costs 3.50 euros.") == ["It costs 3.50 euros."])
        #expect(SentenceSpeech.sentences("no end") == ["no end"])
    }

    private func parse(_ text: String) throws -> ParleyConfig {
        try parseConfig(text, environment: ["HOME": "/home/someone", "XDG_RUNTIME_DIR": "/run/user/1000"])
    }
}
