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

/// A speech worker over a held voice and a recording loudspeaker.
private struct Rig {
    let voice = HeldSynthesizer()
    let speaker = RecordingSpeaker()
    let worker: SpeechWorker

    init() {
        worker = SpeechWorker(synthesizer: voice, playback: speaker.playback(), clock: .continuous, logger: Logger(label: "test"))
        Task { [worker] in await worker.run() }
    }

    /// Starts making `text` ahead (speculation 1).
    func prepare(_ text: String) { worker.prepare(.init(id: 1, text: text, language: "en")) }

    /// Asks for `text` to be spoken: what the worker tells it.
    func speak(_ text: String) -> Told {
        let told = Told()
        worker.speak(told.utterance(text) { voice.chunksMade })
        return told
    }

    /// Starts making `text` ahead and waits until `made` of its chunks are.
    func prepare(_ text: String, made: Int) async {
        prepare(text)
        voice.allow(made)
        #expect(await voice.waitForChunks(made))
    }

    /// Makes `text` ahead, asks for it before any of it is made, and lets its first chunk be
    /// made: it must play while the voice is still held on the second.
    func askedBeforeMade(_ text: String) async -> Told {
        prepare(text)
        #expect(await voice.waitForTexts(1))
        let told = speak(text)
        voice.allow(1)
        #expect(await told.waitForStart() == 0)
        return told
    }

    func close() { worker.inbox.yield(.close) }
}

@Suite struct SpeechWorkerTests {
    @Test func aReplyBeingMadeAheadStartsPlayingBeforeItIsAllMade() async {
        let rig = Rig()
        let text = "Today people write messages on their screens, without needing a pencil."
        let told = await rig.askedBeforeMade(text)
        #expect(await rig.voice.waitForChunks(1))
        rig.voice.allow(HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.error == nil)
        #expect(outcome?.prepared == true)
        #expect(rig.speaker.played.count == HeldSynthesizer.whole)
        // Made once: the reply was not synthesized again.
        #expect(rig.voice.texts == [text])
        rig.close()
    }

    @Test func aReplyAskedForPartWayPlaysWhatWasMadeThenTheRest() async {
        let rig = Rig()
        let text = "Words made ahead, half of them before the turn ended."
        await rig.prepare(text, made: 2)
        let told = rig.speak(text)
        rig.voice.allow(1)
        #expect(await told.waitForStart() == 2)
        rig.voice.allow(HeldSynthesizer.chunks)
        #expect(await told.waitForOutcome()?.prepared == true)
        #expect(rig.speaker.played.count == HeldSynthesizer.whole)
        #expect(rig.voice.texts == [text])
        rig.close()
    }

    @Test func otherWordsWaitForThePreparationAndAreMadeAfresh() async {
        let rig = Rig()
        rig.prepare("The words heard at the pause.")
        #expect(await rig.voice.waitForTexts(1))
        let told = rig.speak("The words heard at the end.")
        rig.voice.allow(2 * HeldSynthesizer.chunks)
        let outcome = await told.waitForOutcome()
        #expect(outcome?.error == nil)
        #expect(outcome?.prepared == false)
        #expect(rig.voice.texts == ["The words heard at the pause.", "The words heard at the end."])
        #expect(rig.speaker.played.count == HeldSynthesizer.whole)
        rig.close()
    }

    @Test func aDroppedPreparationIsNotPlayed() async {
        let rig = Rig()
        let text = "Words the person went on from."
        await rig.prepare(text, made: 1)
        rig.worker.dropPreparation()
        let told = rig.speak(text)
        rig.voice.allow(2 * HeldSynthesizer.chunks)
        #expect(await told.waitForOutcome()?.prepared == false)
        // The dropped audio was never played: only the fresh synthesis was.
        #expect(rig.speaker.played.count == HeldSynthesizer.whole)
        #expect(rig.voice.texts == [text, text])
        rig.close()
    }

    @Test func aStopCutsAReplyPlayingFromItsPreparation() async {
        let rig = Rig()
        let text = "A long answer the person stops."
        let told = await rig.askedBeforeMade(text)
        rig.worker.stop()
        rig.voice.allow(HeldSynthesizer.chunks)
        #expect(await told.waitForOutcome()?.error == nil)
        #expect(rig.speaker.discards == 1)
        #expect(rig.speaker.played.count < HeldSynthesizer.whole)
        rig.close()
    }
}
