import Foundation
import Logging
import ParleyAudio
import ParleySynthesis
import Synchronization

/// Owns the synthesizer and the playback device, on a queue of its own: speaks translations and
/// prompts, one at a time, chunk by chunk, so the first sample plays before the sentence is made.
actor SpeechWorker {
    /// One thing to say.
    struct Utterance: Sendable {
        var text: String
        var language: String
        /// Whether the IPA of the text is wanted (translations, not prompts).
        var wantsIPA: Bool
        /// Told when the first sample goes to the device, with the time synthesis took to get there.
        var started: @Sendable (_ synthesisMs: Int) -> Void
        /// Told when the speech has been played (or stopped, or failed).
        var finished: @Sendable (Outcome) -> Void
    }

    /// How an utterance ended.
    struct Outcome: Sendable {
        /// Audio that went to the device, in samples at the capture rate.
        var played: SampleTime
        /// Why it failed, if it did (a stop is not a failure).
        var error: String?
        var ipa: String?
    }

    enum Command: Sendable {
        case speak(Utterance)
        /// Close the playback device, then end.
        case close
    }

    private let executor = QueueExecutor(label: "parley.speech")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    nonisolated let inbox: AsyncStream<Command>.Continuation
    private let commands: AsyncStream<Command>
    private let synthesizer: any SpeechSynthesizer
    private let playback: any AudioPlayback
    private let clock: RuntimeClock
    private let logger: Logger
    /// `stop`: cut the speech between two chunks. Set from any thread; cleared when the next
    /// utterance is queued (not when it starts, so a stop that comes meanwhile is kept).
    private let aborting = Atomic<Bool>(false)

    init(synthesizer: sending any SpeechSynthesizer, playback: sending any AudioPlayback, clock: RuntimeClock, logger: Logger) {
        (commands, inbox) = AsyncStream.makeStream()
        self.synthesizer = synthesizer
        self.playback = playback
        self.clock = clock
        self.logger = logger
    }

    /// Queues an utterance.
    nonisolated func speak(_ utterance: Utterance) {
        aborting.store(false, ordering: .relaxed)
        inbox.yield(.speak(utterance))
    }

    /// Cuts the speech being played; what the device has queued is dropped.
    nonisolated func stop() {
        aborting.store(true, ordering: .relaxed)
    }

    /// Performs commands until `close`.
    func run() async {
        for await command in commands {
            switch command {
            case .speak(let utterance):
                utterance.finished(say(utterance))
            case .close:
                playback.close()
                inbox.finish()
            }
        }
    }

    private struct Aborted: Error {}

    private func say(_ utterance: Utterance) -> Outcome {
        let started = clock.now
        var first = true
        var produced = 0
        var outcome = Outcome(played: 0)
        do {
            produced = try synthesizer.synthesize(utterance.text, language: utterance.language) { chunk in
                if aborting.load(ordering: .relaxed) { throw Aborted() }
                if first {
                    first = false
                    utterance.started(clock.milliseconds(since: started))
                }
                try playback.write(chunk)
            }
            try playback.drain()
            // After the audio is out, so it costs the listener nothing.
            if utterance.wantsIPA { outcome.ipa = synthesizer.ipa(utterance.text, language: utterance.language) }
        } catch {
            if aborting.load(ordering: .relaxed) {
                playback.discard()
                logger.info("speech stopped")
            } else {
                outcome.error = "\(error)"
            }
        }
        outcome.played = SampleTime(produced) * SampleTime(captureSampleRate) / SampleTime(synthesizer.sampleRate)
        return outcome
    }
}
