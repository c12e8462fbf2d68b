import Foundation
import Logging
import ParleyTesting
import Testing

@testable import ParleyRecognition

// Workers that are real child processes (`/bin/sh`, `/bin/false`) standing in for a Wyoming
// worker that hangs or will not start: here, and not in the in-memory target, which starts no
// process.

/// A worker that answers `describe`, then nothing: the utterance fails within its timeout, the
/// worker is not asked twice, and the next utterance starts a fresh one.
@Suite("A worker that hangs", .startsProcesses)
struct HungWorkerTests {
    @Test func aHungWorkerFailsTheUtteranceInTimeAndIsReplacedForTheNext() throws {
        let info = #"{"type":"info","data_length":2}"# + "\n{}"
        let worker = WyomingTranscriber(
            name: "moonshine-tiny", endpoint: .child(["/bin/sh", "-c", "printf '%s' '\(info)'; exec sleep 30"]), languages: ["en"],
            detectsLanguage: false, holdsUpInNoise: false, timeoutMs: 300, timeoutPerSecondMs: 100, startTimeoutMs: 5_000,
            logger: Logger(label: "test"))
        let samples = [Int16](repeating: 0, count: 16_000)
        for attempt in 1...2 {
            let started = ContinuousClock.now
            var failure: RecognizerError?
            do { _ = try worker.transcribe(samples, TranscriptionRequest(language: "en")) } catch { failure = error }
            let waited = ContinuousClock.now - started
            // 300 ms plus 100 ms for the second of audio, then the kill.
            #expect(failure?.description.contains("did not answer within 400 ms") == true, "\(String(describing: failure))")
            // The upper bound only catches a missing limit (not how fast a loaded machine kills).
            #expect(waited >= .milliseconds(400) && waited < .seconds(30), "waited \(waited)")
            #expect(worker.starts == attempt, "one start per utterance: a hung worker is not asked twice")
            #expect(worker.workerProcess == nil, "killed")
            #expect(worker.isAvailable, "a worker that hung is started again for the next utterance")
        }
    }

    /// A worker that answers "stopped" though parleyd never asked it to stop (a server, a stray
    /// signal): the utterance fails as any failure does, so the next engine hears it, and is not
    /// taken for a pass nobody wants (whose words nobody would get).
    @Test func aStoppedAnswerNobodyAskedForIsAFailure() throws {
        let info = #"{"type":"info","data_length":2}"# + "\n{}"
        let body = #"{"text":"stopped, as asked","code":"stopped"}"#
        let stopped = #"{"type":"error","data_length":"# + "\(body.utf8.count)}\n" + body
        let worker = WyomingTranscriber(
            name: "whisper-base", endpoint: .child(["/bin/sh", "-c", "printf '%s' '\(info)'; printf '%s' '\(stopped)'; exec sleep 30"]),
            languages: ["es"], timeoutMs: 5_000, startTimeoutMs: 5_000, stopsOnSignal: true, logger: Logger(label: "test"))
        var failure: RecognizerError?
        do { _ = try worker.transcribe([Int16](repeating: 0, count: 8_000), TranscriptionRequest(language: "es")) } catch { failure = error }
        #expect(failure.map { !$0.stopped } == true, "\(String(describing: failure))")
        #expect(failure?.description.contains("though nobody asked it to") == true, "\(String(describing: failure))")
    }

    @Test func aWorkerThatCannotStartIsLeftOutOfWhoHearsForAWhile() throws {
        let broken = WyomingTranscriber(
            name: "moonshine-tiny", endpoint: .child(["/bin/sh", "-c", "exit 2"]), languages: ["en"], detectsLanguage: false,
            holdsUpInNoise: false, timeoutMs: 1_000, startTimeoutMs: 1_000, logger: Logger(label: "test"))
        let whisper = WyomingTranscriber(
            name: "whisper-base", endpoint: .child(["/bin/false"]), languages: ["en", "es"], timeoutMs: 1_000, logger: Logger(label: "test"))
        let hearing = AccurateHearing(engines: [broken, whisper])
        #expect(hearing.name(for: "en") == "moonshine-tiny")
        #expect(throws: RecognizerError.self) { try broken.warm() }
        #expect(!broken.isAvailable)
        #expect(hearing.name(for: "en") == "whisper-base", "status names the engine that hears in its place")
        #expect(hearing.engines(for: "en").map(\.name) == ["whisper-base"])
    }
}

/// A Whisper worker that cannot start: the utterance fails at once, and the next ones do not
/// wait for another broken start.
@Suite("A worker that cannot start", .startsProcesses)
struct BrokenWorkerTests {
    @Test func aWorkerThatDiesAtStartIsLeftAloneForAWhile() throws {
        // A "worker" that exits at once, as parley-whisper does when its model is missing.
        let worker = WyomingTranscriber(
            name: "whisper-base", endpoint: .child(["/bin/sh", "-c", "exit 2"]), languages: ["es"], timeoutMs: 5_000, startTimeoutMs: 5_000,
            logger: Logger(label: "test"))
        let samples = [Int16](repeating: 0, count: 16_000)
        var first: RecognizerError?
        do { _ = try worker.transcribe(samples, TranscriptionRequest(language: "es")) } catch { first = error }
        #expect(first?.description.contains("did not start") == true, "\(String(describing: first))")
        #expect(worker.starts == 1, "one start, and no second try on a worker that never started")
        var second: RecognizerError?
        do { _ = try worker.transcribe(samples, TranscriptionRequest(language: "es")) } catch { second = error }
        #expect(second?.description.contains("tried again in") == true, "\(String(describing: second))")
        #expect(worker.starts == 1)
    }
}
