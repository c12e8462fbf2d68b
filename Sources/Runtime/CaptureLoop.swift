import Foundation
import Logging
import ParleyAudio
import ParleyControl
import ParleyConversation
import ParleyCore
import ParleyEndpoint
import ParleyProtocol
import Synchronization

/// The capture loop: reads the device period by period on a thread of its own, measures levels,
/// and hands each period to the runtime. It never waits for an engine; a recording (not real
/// time) waits for the turn in flight after every period, so it gives the same turns as a
/// live microphone.
///
/// A live device that fails is closed and reopened with backoff (state `device_lost`); `pause`
/// closes it and `resume` reopens it.
struct CaptureLoop: Sendable {
    let interpreter: Interpreter
    /// The waits before a lost device is opened again, on the runtime's clock: 0.5 s, 1 s, then
    /// every 2 s until it opens. Short, because nobody is at the keyboard of a hands-free
    /// device: a USB microphone plugged back in is heard again within 2 s, and an open that
    /// fails costs little.
    static let reopenBackoff = Backoff(first: .milliseconds(500), longest: .seconds(2))

    /// Runs the loop on a thread of its own until the recording ends or a stop, and settles the
    /// turn in flight.
    func run(_ source: sending CaptureSource) async -> Result<Void, AudioError> {
        let handOver = Mutex<CaptureSource?>(source)
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                guard let source = handOver.withLock({ $0.take() }) else { return }
                continuation.resume(returning: Result { () throws(AudioError) in try loop(source) })
            }
            thread.name = "parley-capture"
            thread.qualityOfService = .userInteractive
            thread.start()
        }
    }

    private func loop(_ source: CaptureSource) throws(AudioError) {
        var capture: (any AudioCapture)? = try source.open()
        let isRealTime = capture?.isRealTime ?? true
        let hearsPlayback = capture?.hearsPlayback ?? true
        interpreter.captureOpened(hearsPlayback: hearsPlayback, realTime: isRealTime)
        var position: SampleTime = 0
        var backoff = Self.reopenBackoff
        var pendingLevel: Levels?
        // Fed every period, whatever the conversation does, so its memory of the audio is whole.
        var detector = interpreter.voiceActivity
        // The level from which the next period needs the detector's judgement (below it, the
        // level alone says no voice, and the detector skips the period).
        var judgeAbove: Float = -.infinity
        // A microphone in the room hears Parley: its voice is cancelled out of what is heard, and
        // a person heard over it is kept (nil: a recording, or echo cancelling is off).
        let echoReference = hearsPlayback && isRealTime ? interpreter.echoReference : nil
        var echo: EchoHearing?
        // A recording never hears Parley: what it plays is not placed (nor resampled) at all.
        if echoReference == nil { interpreter.echoReference?.captureStopped() }
        defer {
            finishInput(at: position)
            capture?.close()
        }
        while !interpreter.stopping.load(ordering: .relaxed) {
            interpreter.observer?.heartbeat()
            if interpreter.isPaused {
                if let open = capture {
                    open.close()
                    capture = nil
                    interpreter.logger.info("microphone released (paused)")
                    forget(&echo, because: "the conversation was paused")
                }
                waitWhilePaused()
                continue
            }
            guard let current = capture else {
                do {
                    capture = try source.open()
                    detector?.reset()
                    deviceRestored()
                } catch {
                    deviceLost(error)
                    waitBeforeReopening(backoff.next())
                }
                continue
            }
            let frame: [Int16]
            do {
                frame = try current.read()
                backoff.reset()
            } catch {
                guard isRealTime else { throw error }
                current.close()
                capture = nil
                forget(&echo, because: "the microphone was lost")
                deviceLost(error)
                // A device that opens but cannot be read must not be retried in a tight loop.
                waitBeforeReopening(backoff.next())
                continue
            }
            if frame.isEmpty { break }
            let start = position
            position += SampleTime(frame.count)
            echoReference?.captured(through: position)
            let level = Levels(measuring: frame)
            publishLevel(level, pending: &pendingLevel)
            if let echoReference {
                // Made for the device's period (again if a reopened device has another). Taken out
                // of `echo`, not copied: a copy would duplicate up to 30 s of kept periods every period.
                var hearing = echo.take().flatMap { $0.periodSamples == frame.count ? $0 : nil } ?? EchoHearing(reference: echoReference, periodSamples: frame.count)
                judgeAbove = hear(frame, at: start, level: level, now: position, judgeAbove: judgeAbove, echo: &hearing, detector: &detector)
                echo = hearing
                continue
            }
            judgeAbove = interpreter.process(frame, at: start, level: level, speech: judge(frame, level, above: judgeAbove, with: &detector), now: position)
            if !isRealTime {
                waitForJudgement()
                // While the end just decided can be withdrawn, the recording goes on at the pace
                // of a microphone (one period per period's time), as a person goes on speaking
                // while Parley recognizes and translates; else it waits for the turn. It may be
                // withdrawn for a fixed stretch of the recording (`TurnLogic.answerHold`), so
                // the turns do not depend on how fast the engines are.
                let period = Double(frame.count) / Double(captureSampleRate)
                waitWhileBusy(until: .distantFuture, unlessStopping: true, orGoingOnAfter: period)
            }
        }
    }

    /// A live period. While Parley speaks (or its echo may still come), it is heard for the
    /// conversation's clock only, and, without what Parley played over it, judged for a person's
    /// voice and kept if a person speaks over Parley; once Parley has finished, what was kept is
    /// heard first, as it was captured.
    private func hear(
        _ frame: [Int16], at start: SampleTime, level: Levels, now: SampleTime, judgeAbove: Float, echo: inout EchoHearing,
        detector: inout (any VoiceActivityDetector)?
    ) -> Float {
        if interpreter.isSpeakingAloud(at: now) {
            for period in echo.overPlayback(frame, at: start, capturedDB: level.rmsDB) { keep(period, in: &echo, detector: &detector) }
            return interpreter.process(frame, at: start, level: level, speech: nil, now: now)
        }
        for period in echo.finish() { keep(period, in: &echo, detector: &detector) }
        let (kept, summary, notice) = echo.takeKept()
        if let summary { interpreter.logger.debug("\(summary)") }
        if let notice { interpreter.logger.notice("\(notice)") }
        let above = kept.isEmpty ? judgeAbove : hearKept(kept, judgeAbove: judgeAbove)
        return interpreter.process(frame, at: start, level: level, speech: judge(frame, level, above: above, with: &detector), now: now)
    }

    /// A period heard while Parley spoke, without its voice: judged by the voice detector, and
    /// kept if a person speaks over Parley.
    private func keep(_ period: EchoHearing.Cancelled, in echo: inout EchoHearing, detector: inout (any VoiceActivityDetector)?) {
        let level = Levels(measuring: period.heard)
        echo.keep(period, heardDB: level.rmsDB, speech: judge(period.heard, level, above: -.infinity, with: &detector))
    }

    /// The capture stopped: what a person said over Parley before it is not heard after it, and
    /// the log says so.
    private func forget(_ echo: inout EchoHearing?, because reason: String) {
        guard let dropped = echo?.forget(), dropped > 0 else { return }
        interpreter.logger.notice("someone spoke while Parley was speaking (\(dropped) ms): not heard, \(reason)")
    }

    /// What a person said while Parley spoke, heard now that it has finished, period by period as
    /// it was captured (its place on the capture timeline kept); told, when nobody is listened
    /// to now (a pause, manual mode), so it is not lost without a trace.
    private func hearKept(_ kept: [HeardOverPlayback.Period], judgeAbove: Float) -> Float {
        let from = Double(kept.first?.start ?? 0) / Double(captureSampleRate)
        let length = milliseconds(SampleTime(kept.reduce(0) { $0 + $1.frame.count }))
        guard interpreter.acceptsAudio else {
            interpreter.report(
                "someone spoke while Parley was speaking (\(length) ms from \(String(format: "%.2f", from)) s) and nobody is listened to now (paused, or manual mode): say it again when Parley listens"
            )
            return judgeAbove
        }
        interpreter.logger.notice("someone spoke while Parley was speaking (\(length) ms from \(String(format: "%.2f", from)) s): heard now")
        var above = judgeAbove
        for period in kept {
            above = interpreter.process(
                period.frame, at: period.start, level: Levels(rmsDB: period.rmsDB, peakDB: period.rmsDB), speech: period.speech,
                now: period.start + SampleTime(period.frame.count))
        }
        return above
    }

    /// The voice-activity detector's probability for `frame` (0 for a period too quiet to judge,
    /// which it skips). A detector that fails is said once and dropped: the level alone finds
    /// speech from then on.
    private func judge(_ frame: [Int16], _ level: Levels, above threshold: Float, with detector: inout (any VoiceActivityDetector)?) -> Float? {
        guard let current = detector else { return nil }
        guard level.rmsDB > threshold else {
            // An infinite threshold: nothing is listened to (Parley speaks, or it is paused).
            current.skip(frame, room: threshold.isFinite)
            return 0
        }
        do {
            return try current.speechProbability(after: frame)
        } catch {
            detector = nil
            interpreter.report("the voice detector \(current.name) failed: \(error); speech is found by its level alone from now on")
            return nil
        }
    }

    /// At the end of a recording an utterance in progress is still processed; on stop it is
    /// abandoned. Either way the turn already in flight is finished (within `stopTimeout`) and
    /// its history write queued.
    private func finishInput(at position: SampleTime) {
        let stopped = interpreter.stopping.load(ordering: .relaxed)
        let actions = interpreter.locked { $0.turn.endInput(at: position, stopped: stopped) }
        interpreter.perform(actions)
        waitWhileBusy(until: stopped ? Date(timeIntervalSinceNow: Interpreter.stopTimeout) : .distantFuture, unlessStopping: false)
        interpreter.inputClosed()
        _ = interpreter.recorder.waitForRecords(seconds: Interpreter.stopTimeout)
    }

    /// Levels go out at about 25 Hz: two 20 ms periods per event.
    private func publishLevel(_ level: Levels, pending: inout Levels?) {
        guard let first = pending else {
            pending = level
            return
        }
        pending = nil
        guard interpreter.events.hasSubscribers else { return }
        let power = (pow(10, Double(first.rmsDB) / 10) + pow(10, Double(level.rmsDB) / 10)) / 2
        interpreter.events.publish(
            EventType.level, LevelEvent(rmsDB: Decibels.of(power: power), peakDB: max(first.peakDB, level.peakDB)))
    }

    /// Waits while a turn is in flight: a recording does so after every period (unless a stop
    /// was asked for); a stop does so once, up to a deadline.
    private func waitWhileBusy(until deadline: Date, unlessStopping: Bool, orGoingOnAfter period: TimeInterval? = nil) {
        // Only the capture loop ends an utterance, so what may go on now stays so while it waits.
        let until = period.flatMap { interpreter.mayGoOn ? Date(timeIntervalSinceNow: $0) : nil } ?? deadline
        let pacing = until != deadline
        interpreter.wakeup.wait(until: until) {
            guard interpreter.isBusy, !(unlessStopping && interpreter.stopping.load(ordering: .relaxed)) else { return false }
            // An utterance may go on again once its answer is known to wait (its words end
            // mid-sentence, or its language's `answer_after_ms`: `TurnLogic.answerWait`): the
            // recording is read on, at a microphone's pace.
            return pacing || period == nil || !interpreter.mayGoOn
        }
    }

    /// A recording waits, during a pause, for the lanes to judge the audio read so far, as a
    /// live microphone would give them time to (bounded, should a lane be stuck).
    private func waitForJudgement() {
        interpreter.wakeup.wait(until: Date(timeIntervalSinceNow: 5)) {
            interpreter.isAwaitingJudgement && !interpreter.stopping.load(ordering: .relaxed)
        }
    }

    /// While paused: until `resume` or a stop, and at most a second, so the loop's heartbeat
    /// (the service watchdog's) goes on.
    private func waitWhilePaused() {
        interpreter.wakeup.wait(until: Date(timeIntervalSinceNow: 1)) {
            interpreter.isPaused && !interpreter.stopping.load(ordering: .relaxed)
        }
    }

    /// Waits `duration` on the runtime's clock before a lost device is opened again; a stop or a
    /// pause ends the wait early.
    private func waitBeforeReopening(_ duration: Duration) {
        let clock = interpreter.clock
        let wakeup = interpreter.wakeup
        let deadline = clock.now + duration
        let alarm = Task {
            try? await clock.sleep(until: deadline)
            wakeup.wake()
        }
        defer { alarm.cancel() }
        wakeup.wait(until: .distantFuture) {
            clock.now < deadline && !interpreter.stopping.load(ordering: .relaxed) && !interpreter.isPaused
        }
    }

    private func deviceLost(_ error: AudioError) {
        let (actions, first) = interpreter.microphone(.lost)
        if first {
            interpreter.report("microphone lost, retrying: \(error)")
            interpreter.publishState()
        }
        interpreter.perform(actions)
    }

    private func deviceRestored() {
        let (actions, wasLost) = interpreter.microphone(.restored)
        if wasLost {
            interpreter.logger.notice("microphone is back")
            // The sound server may have restarted with it: the speaker's device is stale too.
            interpreter.speech.inbox.yield(.renewPlayback)
            interpreter.publishState()
        }
        interpreter.perform(actions)
    }
}
