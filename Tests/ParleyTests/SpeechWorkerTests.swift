import Foundation
import Logging
import ParleyCore
import ParleySynthesis
import ParleyTesting
import Testing
@testable import ParleyRuntime

/// A voice that makes each chunk only once let (`allow`), as a long sentence keeps Piper busy
/// for a second after its first clause.
private final class HeldSynthesizer: SpeechSynthesizer, Sendable {
    struct State {
        var allowed = 0
        var texts: [String] = []
        var chunksMade = 0
    }

    let sampleRate = 22_050
    let state = Gate(State())
    static let chunk = [Int16](repeating: 7, count: 1_000)
    static let chunks = 4
    static let whole = chunks * chunk.count

    func hasVoice(for language: String) -> Bool { true }
    func ipa(_ text: String, language: String) -> String? { nil }

    @discardableResult
    func synthesize(_ text: String, language: String, chunk deliver: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        state.withLock { $0.texts.append(text) }
        do {
            for _ in 0..<Self.chunks {
                state.wait { state -> Void? in
                    guard state.allowed > 0 else { return nil }
                    state.allowed -= 1
                    return ()
                }
                try deliver(Self.chunk)
                state.withLock { $0.chunksMade += 1 }
            }
        } catch {
            throw SynthesisError("stopped: \(error)")
        }
        return Self.whole
    }

    /// Lets `count` more chunks be made.
    func allow(_ count: Int) { state.withLock { $0.allowed += count } }
    var texts: [String] { state.withLock { $0.texts } }
    var chunksMade: Int { state.withLock { $0.chunksMade } }
    func waitForTexts(_ count: Int) async -> Bool { await eventually { self.texts.count >= count } }
    func waitForChunks(_ count: Int) async -> Bool { await eventually { self.chunksMade >= count } }
}

/// Waits, without holding a thread of the pool (the worker needs one to start), until `done`
/// holds or 10 s pass; whether it held.
private func eventually(_ done: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    while !done() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// What the worker told one utterance.
private final class Told: Sendable {
    struct State {
        var startedAfterChunks: Int?
        var outcome: SpeechWorker.Outcome?
    }

    let state = Gate(State())

    func utterance(_ text: String, made: @escaping @Sendable () -> Int) -> SpeechWorker.Utterance {
        SpeechWorker.Utterance(
            text: text, language: "en", wantsIPA: false,
            started: { _ in self.state.withLock { $0.startedAfterChunks = made() } },
            finished: { outcome in self.state.withLock { $0.outcome = outcome } })
    }

    func waitForStart() async -> Int? {
        _ = await eventually { self.state.withLock { $0.startedAfterChunks } != nil }
        return state.withLock { $0.startedAfterChunks }
    }

    func waitForOutcome() async -> SpeechWorker.Outcome? {
        _ = await eventually { self.state.withLock { $0.outcome } != nil }
        return state.withLock { $0.outcome }
    }
}

@Suite struct SpeechWorkerTests {
    private func worker(_ synthesizer: HeldSynthesizer, _ speaker: RecordingSpeaker) -> SpeechWorker {
        let worker = SpeechWorker(synthesizer: synthesizer, playback: speaker.playback(), clock: .continuous, logger: Logger(label: "test"))
        Task { await worker.run() }
        return worker
    }

    @Test func aReplyBeingMadeAheadStartsPlayingBeforeItIsAllMade() async {
        let voice = HeldSynthesizer()
        let speaker = RecordingSpeaker()
        let worker = worker(voice, speaker)
        let text = "Today people write messages on their screens, without needing a pencil."
        worker.prepare(.init(id: 1, text: text, language: "en"))
        #expect(await voice.waitForTexts(1))
        let told = Told()
        worker.speak(told.utterance(text) { voice.chunksMade })
        voice.allow(1)
        // The first chunk plays while the voice is still held on the second.
        #expect(await told.waitForStart() == 0)
        #expect(await voice.waitForChunks(1))
        voice.allow(HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.error == nil)
        #expect(outcome?.prepared == true)
        #expect(speaker.played.count == HeldSynthesizer.whole)
        // Made once: the reply was not synthesized again.
        #expect(voice.texts == [text])
        worker.inbox.yield(.close)
    }

    @Test func aReplyAskedForPartWayPlaysWhatWasMadeThenTheRest() async {
        let voice = HeldSynthesizer()
        let speaker = RecordingSpeaker()
        let worker = worker(voice, speaker)
        let text = "Words made ahead, half of them before the turn ended."
        worker.prepare(.init(id: 1, text: text, language: "en"))
        voice.allow(2)
        #expect(await voice.waitForChunks(2))
        let told = Told()
        worker.speak(told.utterance(text) { voice.chunksMade })
        voice.allow(1)
        #expect(await told.waitForStart() == 2)
        voice.allow(HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.prepared == true)
        #expect(speaker.played.count == HeldSynthesizer.whole)
        #expect(voice.texts == [text])
        worker.inbox.yield(.close)
    }

    @Test func otherWordsWaitForThePreparationAndAreMadeAfresh() async {
        let voice = HeldSynthesizer()
        let speaker = RecordingSpeaker()
        let worker = worker(voice, speaker)
        worker.prepare(.init(id: 1, text: "The words heard at the pause.", language: "en"))
        #expect(await voice.waitForTexts(1))
        let told = Told()
        worker.speak(told.utterance("The words heard at the end.") { voice.chunksMade })
        voice.allow(2 * HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.error == nil)
        #expect(outcome?.prepared == false)
        #expect(voice.texts == ["The words heard at the pause.", "The words heard at the end."])
        #expect(speaker.played.count == HeldSynthesizer.whole)
        worker.inbox.yield(.close)
    }

    @Test func aDroppedPreparationIsNotPlayed() async {
        let voice = HeldSynthesizer()
        let speaker = RecordingSpeaker()
        let worker = worker(voice, speaker)
        let text = "Words the person went on from."
        worker.prepare(.init(id: 1, text: text, language: "en"))
        voice.allow(1)
        #expect(await voice.waitForChunks(1))
        worker.dropPreparation()
        let told = Told()
        worker.speak(told.utterance(text) { voice.chunksMade })
        voice.allow(2 * HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.prepared == false)
        // The dropped audio was never played: only the fresh synthesis was.
        #expect(speaker.played.count == HeldSynthesizer.whole)
        #expect(voice.texts == [text, text])
        worker.inbox.yield(.close)
    }

    @Test func aStopCutsAReplyPlayingFromItsPreparation() async {
        let voice = HeldSynthesizer()
        let speaker = RecordingSpeaker()
        let worker = worker(voice, speaker)
        let text = "A long answer the person stops."
        worker.prepare(.init(id: 1, text: text, language: "en"))
        #expect(await voice.waitForTexts(1))
        let told = Told()
        worker.speak(told.utterance(text) { voice.chunksMade })
        voice.allow(1)
        #expect(await told.waitForStart() == 0)
        worker.stop()
        voice.allow(HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.error == nil)
        #expect(speaker.discards == 1)
        #expect(speaker.played.count < HeldSynthesizer.whole)
        worker.inbox.yield(.close)
    }
}
