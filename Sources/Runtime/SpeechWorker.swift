import Foundation
import Logging
import ParleyAudio
import ParleyCore
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
        /// Whether the audio was made ahead, during the pause (a speculation).
        var prepared = false
    }

    /// Audio to make ahead of time for a speculation (`Speculation`): a translation that will be
    /// spoken if the turn ends with the words it was made from.
    struct Preparation: Sendable {
        var id: Int
        var text: String
        var language: String
    }

    enum Command: Sendable {
        case speak(Utterance)
        case prepare(Preparation)
        /// The sound system came back: open the playback device afresh before the next utterance.
        case renewPlayback
        /// Close the playback device, then end.
        case close
    }

    private let executor = QueueExecutor(label: "parley.speech")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    nonisolated let inbox: AsyncStream<Command>.Continuation
    private let commands: AsyncStream<Command>
    private let synthesizer: any SpeechSynthesizer
    private let playback: any AudioPlayback
    private let clock: ParleyClock
    private let logger: Logger
    /// `stop`: cut the speech between two chunks. Set from any thread; cleared when the next
    /// utterance is queued (not when it starts, so a stop that comes meanwhile is kept).
    private let aborting = Atomic<Bool>(false)
    /// The speculation whose audio is still wanted (0: none). Set by the runtime when a
    /// speculation starts or is dropped; a preparation of another one is skipped or cut short.
    private let wanted = Atomic<Int>(0)
    /// Audio made for a speculation, not yet played: spoken instead of synthesizing, by the
    /// next utterance that says the same text in the same language while it is still wanted.
    private var prepared: (id: Int, text: String, language: String, chunks: [[Int16]], produced: Int)?
    /// The latest preparation queued or being made, and the utterance that asked for its text
    /// before it was made (`speak`): the preparation then plays it, from the audio made so far
    /// and on as the rest comes, so the listener does not wait for the whole reply to be made
    /// (a long sentence takes Piper about a second here) before its first sound.
    private let making = Mutex<Making?>(nil)

    private struct Making: Sendable {
        var id: Int
        var text: String
        var language: String
        var claimedBy: Utterance?
    }

    init(synthesizer: sending any SpeechSynthesizer, playback: sending any AudioPlayback, clock: ParleyClock, logger: Logger) {
        (commands, inbox) = AsyncStream.makeStream()
        self.synthesizer = synthesizer
        self.playback = playback
        self.clock = clock
        self.logger = logger
    }

    /// Queues an utterance; one that says what the wanted preparation is making is handed to
    /// that preparation instead, which plays it as its audio comes.
    nonisolated func speak(_ utterance: Utterance) {
        aborting.store(false, ordering: .relaxed)
        let claimed = making.withLock { making -> Bool in
            guard var current = making, current.claimedBy == nil, current.text == utterance.text, current.language == utterance.language,
                wanted.load(ordering: .relaxed) == current.id
            else { return false }
            current.claimedBy = utterance
            making = current
            return true
        }
        if !claimed { inbox.yield(.speak(utterance)) }
    }

    /// Makes `preparation`'s audio ahead of time, unless another speculation is wanted by then.
    nonisolated func prepare(_ preparation: Preparation) {
        wanted.store(preparation.id, ordering: .relaxed)
        making.withLock { making in
            // An utterance waiting on the one before keeps it: that one's `make` plays it.
            guard making?.claimedBy == nil else { return }
            making = Making(id: preparation.id, text: preparation.text, language: preparation.language)
        }
        inbox.yield(.prepare(preparation))
    }

    /// No speculation's audio is wanted any more: a preparation running stops, and what was
    /// made is never played.
    nonisolated func dropPreparation() {
        wanted.store(0, ordering: .relaxed)
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
            case .prepare(let preparation):
                make(preparation)
            case .renewPlayback:
                playback.renew()
            case .close:
                playback.close()
                inbox.finish()
            }
        }
    }

    private struct Aborted: Error {}

    private struct NotWanted: Error {}

    /// Synthesizes a speculation's audio into memory, stopping as soon as it is not wanted. When
    /// the turn asks for the same words meanwhile (`speak`), what was made is played at once
    /// and the rest as it comes.
    private func make(_ preparation: Preparation) {
        prepared = nil
        let claim = { self.making.withLock { $0?.id == preparation.id ? $0?.claimedBy : nil } }
        var chunks: [[Int16]] = []
        var produced = 0
        var playing: Playing?
        var failure: (any Error)?
        if claim() != nil || wanted.load(ordering: .relaxed) == preparation.id {
            do {
                produced = try synthesizer.synthesize(preparation.text, language: preparation.language) { chunk in
                    if playing == nil, let utterance = claim() {
                        playing = try self.startPlaying(utterance, made: chunks)
                        chunks = []
                    }
                    if var current = playing {
                        try self.play(chunk, &current)
                        playing = current
                    } else {
                        guard wanted.load(ordering: .relaxed) == preparation.id else { throw NotWanted() }
                        chunks.append(chunk)
                    }
                }
            } catch {
                failure = error
            }
        }
        // Under the lock that `speak` claims under: an utterance that came after this is queued.
        let claimed = making.withLock { making -> Utterance? in
            guard making?.id == preparation.id else { return nil }
            defer { making = nil }
            return making?.claimedBy
        }
        guard let utterance = claimed ?? playing?.utterance else {
            if failure == nil { prepared = (preparation.id, preparation.text, preparation.language, chunks, produced) }
            // Else not wanted any more, or the synthesizer failed: the turn, if it comes,
            // synthesizes afresh and reports a failure then.
            return
        }
        if playing == nil, failure != nil {
            // Claimed after its synthesis failed or was dropped: said afresh.
            utterance.finished(say(utterance))
            return
        }
        utterance.finished(
            finish(utterance, prepared: true) {
                if let failure { throw failure }
                if playing == nil { _ = try startPlaying(utterance, made: chunks) }
                return produced
            })
    }

    /// Plays `utterance` through `body`, which writes its audio and returns how many samples the
    /// voice made, then waits for the device to play them out and, when asked, gives the IPA.
    private func finish(_ utterance: Utterance, prepared: Bool, _ body: () throws -> Int) -> Outcome {
        var outcome = Outcome(played: 0, prepared: prepared)
        var produced = 0
        do {
            produced = try body()
            try playback.drain()
            // After the audio is out, so it costs the listener nothing.
            if utterance.wantsIPA { outcome.ipa = synthesizer.ipa(utterance.text, language: utterance.language) }
        } catch {
            outcome.error = stopped(error)
        }
        outcome.played = SampleTime(produced) * SampleTime(captureSampleRate) / SampleTime(synthesizer.sampleRate)
        return outcome
    }

    /// An utterance being played (from a preparation, or as it is synthesized).
    private struct Playing: Sendable {
        let utterance: Utterance
        let claimedAt: ParleyClock.Instant
        var started = false
    }

    /// Starts playing `utterance` from a preparation: what was `made` goes to the device now.
    private func startPlaying(_ utterance: Utterance, made: [[Int16]]) throws -> Playing {
        var playing = Playing(utterance: utterance, claimedAt: clock.now)
        for chunk in made { try play(chunk, &playing) }
        return playing
    }

    /// Plays a chunk of an utterance's audio; the first tells the utterance it started.
    private func play(_ chunk: [Int16], _ playing: inout Playing) throws {
        if aborting.load(ordering: .relaxed) { throw Aborted() }
        if !playing.started {
            playing.started = true
            playing.utterance.started(clock.milliseconds(since: playing.claimedAt))
        }
        try playback.write(chunk)
    }

    /// What a failure while speaking means: nil for a stop (the device's queue dropped), else its error.
    private func stopped(_ error: any Error) -> String? {
        if aborting.load(ordering: .relaxed) {
            playback.discard()
            logger.info("speech stopped")
            return nil
        }
        return "\(error)"
    }

    /// The audio made ahead for `utterance`, if any is still wanted; used once.
    private func takePrepared(for utterance: Utterance) -> (chunks: [[Int16]], produced: Int)? {
        defer { prepared = nil }
        guard let prepared, prepared.text == utterance.text, prepared.language == utterance.language,
            wanted.load(ordering: .relaxed) == prepared.id
        else { return nil }
        return (prepared.chunks, prepared.produced)
    }

    /// Says `utterance`: from the audio made ahead for it, else synthesized as it plays.
    private func say(_ utterance: Utterance) -> Outcome {
        var playing = Playing(utterance: utterance, claimedAt: clock.now)
        let ready = takePrepared(for: utterance)
        return finish(utterance, prepared: ready != nil) {
            if let ready {
                for chunk in ready.chunks { try play(chunk, &playing) }
                return ready.produced
            }
            return try synthesizer.synthesize(utterance.text, language: utterance.language) { try self.play($0, &playing) }
        }
    }
}
