import Foundation
import ParleySynthesis
import ParleyTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Piper as `make engines` installs it: the worker, piper-tts, ONNX Runtime, the English voice.
enum PiperEngine {
    static let folder = EndToEnd.repository + "/.build/engines/piper"
    static let english = PiperVoice(language: "en", model: folder + "/voices/en_US-joe-medium.onnx")
    static let python = "/usr/bin/python3"
    static var installed: Bool {
        english.isInstalled
            && [folder + "/parley-piper", folder + "/python/piper", folder + "/python/onnxruntime", python].allSatisfy {
                FileManager.default.fileExists(atPath: $0)
            }
    }
}

/// Real Piper, behind the same synthesizer parleyd uses: a warm `parley-piper` worker.
@Suite(
    "Piper, for real", .serialized, .startsProcesses,
    .enabled(if: PiperEngine.installed, "run `make engines` first (Piper's English voice)"))
struct PiperEndToEndTests {
    static let sentence = "Go forward ten meters, then turn left at the station."

    private func englishSynthesizer(_ lines: Lines) throws -> PiperSynthesizer {
        PiperSynthesizer(
            fallback: try EspeakSynthesizer(), piperVoices: ["en": PiperEngine.english], folder: PiperEngine.folder, python: PiperEngine.python,
            report: { lines.add($0) })
    }

    @Test func anEnglishSentenceIsSpokenByPiper() throws {
        let lines = Lines()
        let synthesizer = try englishSynthesizer(lines)
        synthesizer.prepare()
        let pid = try #require(synthesizer.piperProcess)
        let (samples, chunks) = try synthesized(synthesizer, Self.sentence)
        expectSpeech(samples, rate: synthesizer.sampleRate, "Piper's English")
        #expect(chunks > 10, "handed on in 50 ms chunks, so a stop cuts it")
        #expect(lines.all.isEmpty, "nothing went wrong: \(lines.all)")
        // Two sentences: the second is asked for while the first is handed on.
        let two = try synthesized(synthesizer, "Good morning. " + Self.sentence)
        #expect(two.samples.count > samples.count + synthesizer.sampleRate / 4)
        #expect(lines.all.isEmpty, "nothing went wrong: \(lines.all)")
        #expect(synthesizer.piperProcess == pid, "the same warm worker speaks every sentence")
        // Piper's voice, not espeak-ng's: espeak-ng says the sentence in another length.
        var espeak: [Int16] = []
        try EspeakSynthesizer().synthesize(Self.sentence, language: "en") { espeak += $0 }
        #expect(abs(espeak.count - samples.count) > synthesizer.sampleRate / 20)
    }

    @Test func aKilledWorkerFallsBackToEspeakThenRecovers() throws {
        let lines = Lines()
        let synthesizer = try englishSynthesizer(lines)
        synthesizer.prepare()
        _ = try synthesized(synthesizer, "Hello.")
        let first = try #require(synthesizer.piperProcess)
        #expect(kill(first, SIGKILL) == 0)
        let fallback = try synthesized(synthesizer, Self.sentence)
        expectSpeech(fallback.samples, rate: synthesizer.sampleRate, "espeak-ng's fallback")
        #expect(lines.all.count == 1, "one line: \(lines.all)")
        #expect(lines.all.first?.contains("Piper failed") == true)
        let second = try #require(synthesizer.piperProcess, "a fresh worker started")
        #expect(second != first)
        let recovered = try synthesized(synthesizer, Self.sentence)
        expectSpeech(recovered.samples, rate: synthesizer.sampleRate, "Piper again")
        #expect(lines.all.count == 1, "Piper spoke again: \(lines.all)")
        #expect(abs(recovered.samples.count - fallback.samples.count) > synthesizer.sampleRate / 20, "not espeak-ng's length")
    }

    @Test func aMissingVoiceFileIsSaidAndEspeakSpeaks() throws {
        let lines = Lines()
        let missing = PiperVoice(language: "en", model: "/nonexistent/en_US-nobody-medium.onnx")
        let synthesizer = PiperSynthesizer(
            fallback: try EspeakSynthesizer(), piperVoices: ["en": missing], folder: PiperEngine.folder, python: PiperEngine.python,
            report: { lines.add($0) })
        let (samples, _) = try synthesized(synthesizer, Self.sentence)
        expectSpeech(samples, rate: synthesizer.sampleRate, "espeak-ng, the voice being missing")
        #expect(lines.all.count == 1, "one line: \(lines.all)")
        #expect(lines.all.first?.contains("Piper failed (it exited (exit status 1))") == true, "\(lines.all)")
    }

    @Test func piperStaysWithinItsMemory() throws {
        // Not a speed: its memory, which cutting long sentences after their commas bounds
        // (ONNX Runtime keeps what its longest audio needed: 320 MB after a 135-character one).
        let lines = Lines()
        let synthesizer = try englishSynthesizer(lines)
        let long = "A number of airlines, including Air France, Lufthansa and Singapore Airlines, "
            + "have said they would not fly through Belarusian airspace, nor over its neighbours, until further notice."
        _ = try synthesized(synthesizer, long)
        let pid = try #require(synthesizer.piperProcess)
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kilobytes(_ field: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(field + ":") }?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        let peak = try #require(kilobytes("VmHWM"))
        #expect(peak < 300_000, "Piper's worker peaked at \(peak) kB")
        // What it keeps: the voice as `make engines` installs it, its encoder and flow in 8
        // bits (about 142 MB after this sentence; 215 MB with the published float32 weights).
        let resident = try #require(kilobytes("VmRSS"))
        #expect(resident < 170_000, "Piper's worker holds \(resident) kB after the sentence")
        #expect(lines.all.isEmpty, "nothing went wrong: \(lines.all)")
    }

    /// `parleyd model install-voice`: the shipped voice, given as a user's (through links, as
    /// an unpacked download might be), is copied under XDG_DATA_HOME and measured; a model that
    /// does not load is refused and removed again.
    @Test func aVoiceAUserInstallsIsCopiedAndMeasured() throws {
        let dir = try EndToEnd.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let download = dir.appendingPathComponent("download")
        try FileManager.default.createDirectory(at: download, withIntermediateDirectories: true)
        for suffix in ["", ".json"] {
            try FileManager.default.createSymbolicLink(
                atPath: download.appendingPathComponent("en_US-joe-medium.onnx" + suffix).path, withDestinationPath: PiperEngine.english.model + suffix)
        }
        let engines = (PiperEngine.folder as NSString).deletingLastPathComponent
        let data = ["XDG_DATA_HOME": dir.appendingPathComponent("data").path]
        let install = try EndToEnd.run(
            try EndToEnd.binary("parleyd"), ["model", "install-voice", download.appendingPathComponent("en_US-joe-medium.onnx").path, "--engines", engines],
            in: dir, environment: data, timeout: 120)
        #expect(install.status == 0, "\(install.stderr)")
        let folder = dir.path + "/data/parley/voices/en"
        #expect(install.stdout.contains("installed en_US-joe-medium for en in \(folder)"), "\(install.stdout)")
        #expect(install.stdout.contains("s of CPU per second of speech here, the worker holds"), "\(install.stdout)")
        #expect(install.stdout.contains("parleyd speaks en with it from its next start"), "\(install.stdout)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/en_US-joe-medium.onnx")) == nil, "the bytes were copied")

        let broken = dir.appendingPathComponent("broken/es_ES-broken-medium.onnx").path
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("broken"), withIntermediateDirectories: true)
        try Data("not a model".utf8).write(to: URL(fileURLWithPath: broken))
        try FileManager.default.copyItem(atPath: PiperEngine.english.configFile, toPath: broken + ".json")
        let refused = try EndToEnd.run(
            try EndToEnd.binary("parleyd"), ["model", "install-voice", broken, "--language", "es", "--engines", engines], in: dir, environment: data, timeout: 120)
        #expect(refused.status == 1 && refused.stderr.contains("does not work"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data/parley/voices/es"))
    }
}
