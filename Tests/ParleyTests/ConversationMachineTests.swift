import ParleyCore
import Testing
@testable import ParleyConversation

private typealias Machine = ConversationMachine

/// The default settings' languages: A speaks English, B Spanish.
private let enEs = TurnLanguages(source: "en", target: "es")
private let esEn = enEs.swapped

/// Drives a machine through one whole turn by `speaker`, starting from listening, and returns
/// the actions of the final `speakingFinished`.
@discardableResult
private func turn(
    _ machine: inout Machine, by speaker: Speaker, at start: SampleTime = 16_000, played: SampleTime = 32_000,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [Machine.Action] {
    _ = machine.handle(.clock(now: start))
    #expect(machine.state == .listening(speaker), "the turn should be \(speaker)'s", sourceLocation: sourceLocation)
    _ = machine.handle(.speechStarted(at: start))
    _ = machine.handle(.speechEnded(at: start + 16_000))
    _ = machine.handle(.clock(now: start + 16_000))
    _ = machine.handle(.recognized(text: "hello"))
    _ = machine.handle(.translated(text: "hola"))
    _ = machine.handle(.speakingStarted)
    return machine.handle(.speakingFinished(playedSamples: played))
}

@Suite("Conversation state machine")
struct ConversationMachineTests {
    let tail: SampleTime = 4_800  // 300 ms

    @Test func startsListeningToSpeakerA() {
        let machine = Machine(settings: .init(echoTail: tail))
        #expect(machine.state == .listening(.a))
        #expect(machine.acceptsAudio)
        #expect(!machine.isBusy)
    }

    @Test func aWholeTurnPassesThroughEveryStage() {
        var machine = Machine(settings: .init(echoTail: tail))
        #expect(machine.handle(.speechStarted(at: 100)) == [.stateChanged(.hearing(.a, since: 100)), .startRecognition(.a, enEs)])
        #expect(machine.acceptsAudio)
        #expect(machine.handle(.speechEnded(at: 20_000)) == [.stateChanged(.recognizing(.a)), .finishRecognition(.a, enEs)])
        #expect(!machine.acceptsAudio && machine.isBusy)
        #expect(machine.handle(.recognized(text: " go forward ")) == [.stateChanged(.translating(.a)), .translate(.a, text: "go forward", enEs)])
        #expect(machine.handle(.translated(text: "adelante")) == [.stateChanged(.speaking(.a)), .speak(.a, text: "adelante", language: "es")])
        #expect(machine.handle(.speakingStarted) == [])
        let finished = machine.handle(.speakingFinished(playedSamples: 8_000))
        #expect(finished == [.stateChanged(.echoGuard(next: .b, until: 8_000 + tail))])
        #expect(!machine.acceptsAudio && !machine.isBusy)
    }

    @Test func aCaptureThatCannotHearParleySkipsNothingAfterItSpeaks() {
        // A recording: Parley's reply goes to a file, never into it. What the person said while
        // the reply played (a paced recording) or right after it is all heard.
        var settings = Machine.Settings(echoTail: tail)
        settings.hearsPlayback = false
        var machine = Machine(settings: settings)
        let finished = turn(&machine, by: .a, at: 16_000, played: 32_000)
        #expect(finished == [.stateChanged(.echoGuard(next: .b, until: 32_000))], "no guard: it ends where capture is")
        #expect(machine.handle(.clock(now: 32_320)) == [.stateChanged(.listening(.b)), .resetEndpointer])
        #expect(machine.acceptsAudio, "the very next period is heard")
    }

    @Test func anEndIsWithdrawnWhenThePersonGoesOnBeforeParleySpeaks() {
        var machine = Machine(settings: .init(mode: .auto, echoTail: tail))
        _ = machine.handle(.speechStarted(at: 1_600))
        _ = machine.handle(.speechEnded(at: 20_000))
        #expect(machine.isResumable, "recognizing: nothing said yet")
        // Heard as B's meanwhile (auto mode): going on, it is again the utterance as it began.
        _ = machine.handle(.identified(.b))
        #expect(machine.handle(.speechResumed) == [.stateChanged(.hearing(.a, since: 1_600)), .resumeRecognition(.a, enEs)])
        #expect(machine.acceptsAudio)
        _ = machine.handle(.speechEnded(at: 40_000))
        _ = machine.handle(.recognized(text: "and his dog"))
        #expect(machine.state == .translating(.a) && machine.isResumable, "translating: still nothing said")
        #expect(machine.handle(.speechResumed) == [.stateChanged(.hearing(.a, since: 1_600)), .resumeRecognition(.a, enEs)])
    }

    @Test func onceAnythingIsSaidOrTypedTheEndStands() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 100))
        _ = machine.handle(.speechEnded(at: 20_000))
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        #expect(!machine.isResumable, "speaking")
        #expect(machine.handle(.speechResumed) == [])
        _ = machine.handle(.speakingStarted)
        _ = machine.handle(.speakingFinished(playedSamples: 100))
        _ = machine.handle(.clock(now: 1_000_000))
        _ = machine.handle(.typed(.b, text: "hola"))
        #expect(machine.state == .translating(.b) && !machine.isResumable, "a typed turn is never withdrawn")
        #expect(machine.handle(.speechResumed) == [])
        // Nothing recognized: the turn is over, and the next speech is a new utterance.
        var empty = Machine(settings: .init(echoTail: tail))
        _ = empty.handle(.speechStarted(at: 100))
        _ = empty.handle(.speechEnded(at: 20_000))
        _ = empty.handle(.recognized(text: " "))
        #expect(!empty.isResumable && empty.handle(.speechResumed) == [])
    }

    @Test func speakersAlternate() {
        var machine = Machine(settings: .init(echoTail: tail))
        turn(&machine, by: .a, at: 0, played: 1_000)
        _ = machine.handle(.clock(now: 1_000_000))
        #expect(machine.state == .listening(.b))
        turn(&machine, by: .b, at: 1_000_000, played: 1_000)
        _ = machine.handle(.clock(now: 2_000_000))
        #expect(machine.state == .listening(.a))
    }

    @Test func autoGivesTheTurnToWhoeverWasHeardAndTheFloorToTheOtherSide() {
        var machine = Machine(settings: .init(mode: .auto, echoTail: tail))
        #expect(machine.state == .listening(.a), "turn order: A first")
        // B speaks out of turn: the audio says so.
        _ = machine.handle(.speechStarted(at: 100))
        _ = machine.handle(.speechEnded(at: 20_000))
        #expect(machine.handle(.identified(.b)) == [.stateChanged(.recognizing(.b))])
        #expect(machine.handle(.recognized(text: "hola")) == [.stateChanged(.translating(.b)), .translate(.b, text: "hola", esEn)])
        _ = machine.handle(.translated(text: "hello"))
        _ = machine.handle(.speakingStarted)
        #expect(machine.handle(.speakingFinished(playedSamples: 8_000)) == [.stateChanged(.echoGuard(next: .a, until: 8_000 + tail))])
        // B again, twice in a row: still B's turn by what was heard.
        _ = machine.handle(.clock(now: 100_000))
        #expect(machine.state == .listening(.a))
        _ = machine.handle(.speechStarted(at: 100_000))
        _ = machine.handle(.speechEnded(at: 120_000))
        _ = machine.handle(.identified(.b))
        #expect(machine.handle(.recognized(text: "otra vez")) == [.stateChanged(.translating(.b)), .translate(.b, text: "otra vez", esEn)])
    }

    @Test func autoKeepsTurnOrderWhenTheSpeakerIsConfirmedOrCannotBeHeard() {
        var machine = Machine(settings: .init(mode: .auto, echoTail: tail, hearable: [.a]))
        _ = machine.handle(.speechStarted(at: 100))
        _ = machine.handle(.speechEnded(at: 20_000))
        #expect(machine.handle(.identified(.a)) == [], "the expected speaker: nothing changes")
        #expect(machine.handle(.identified(.b)) == [], "B has no model: the audio cannot be theirs")
        #expect(machine.state == .recognizing(.a))
        // Out of place, it changes nothing.
        var listening = Machine(settings: .init(mode: .auto, echoTail: tail))
        #expect(listening.handle(.identified(.b)) == [])
        #expect(listening.state == .listening(.a))
    }

    @Test func oneWayAlwaysListensToA() {
        var machine = Machine(settings: .init(mode: .oneWay, echoTail: tail))
        turn(&machine, by: .a, at: 0, played: 1_000)
        _ = machine.handle(.clock(now: 1_000_000))
        #expect(machine.state == .listening(.a))
    }

    @Test func manualWaitsToBeToldWhoSpeaks() {
        var machine = Machine(settings: .init(mode: .manual, echoTail: tail))
        #expect(machine.state == .idle)
        #expect(!machine.acceptsAudio)
        #expect(machine.handle(.speechStarted(at: 0)) == [])
        #expect(machine.handle(.listen(.b)) == [.stateChanged(.listening(.b)), .resetEndpointer])
        turn(&machine, by: .b, at: 0, played: 1_000)
        _ = machine.handle(.clock(now: 1_000_000))
        #expect(machine.state == .idle)
    }

    @Test func aSideThatCannotBeHeardIsSkipped() {
        var machine = Machine(settings: .init(echoTail: tail, hearable: [.a]))
        turn(&machine, by: .a, at: 0, played: 1_000)
        _ = machine.handle(.clock(now: 1_000_000))
        #expect(machine.state == .listening(.a))
    }

    @Test func nobodyHearableMeansIdle() {
        let machine = Machine(settings: .init(echoTail: tail, hearable: []))
        #expect(machine.state == .idle)
    }

    @Test func whenOnlyBCanBeHeardBStarts() {
        let machine = Machine(settings: .init(echoTail: tail, hearable: [.b]))
        #expect(machine.state == .listening(.b))
    }

    @Test func echoGuardCoversPlaybackOnAPacedTimeline() {
        // A recording waits while Parley speaks: the clock stands at the end of speech, so the
        // guard reaches past the played audio plus the tail.
        var machine = Machine(settings: .init(echoTail: tail))
        let actions = turn(&machine, by: .a, at: 16_000, played: 32_000)
        let until: SampleTime = 32_000 + 32_000 + tail
        #expect(actions == [.stateChanged(.echoGuard(next: .b, until: until))])
        #expect(machine.handle(.clock(now: until - 1)) == [])
        #expect(!machine.acceptsAudio)
        #expect(machine.handle(.clock(now: until)) == [.stateChanged(.listening(.b)), .resetEndpointer])
        #expect(machine.acceptsAudio)
    }

    @Test func echoGuardOnALiveTimelineStartsWhenPlaybackEnds() {
        // Live: capture went on while Parley spoke, so the guard is the tail after now.
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        _ = machine.handle(.clock(now: 20_000))
        _ = machine.handle(.speakingStarted)
        _ = machine.handle(.clock(now: 60_000))
        let actions = machine.handle(.speakingFinished(playedSamples: 32_000))
        #expect(actions == [.stateChanged(.echoGuard(next: .b, until: 60_000 + tail))])
    }

    @Test func speechDuringPlaybackIsIgnored() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        #expect(!machine.acceptsAudio)
        #expect(machine.handle(.speechStarted(at: 17_000)) == [])
        #expect(machine.state == .speaking(.a))
    }

    @Test func nothingRecognizedStaysWithTheSameSpeaker() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        #expect(machine.handle(.recognized(text: "  ")) == [.stateChanged(.listening(.a)), .resetEndpointer, .reportNoSpeech(.a)])
    }

    @Test func discardedSpeechCancelsRecognition() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        #expect(machine.handle(.speechDiscarded) == [.stateChanged(.listening(.a)), .cancelRecognition])
    }

    @Test func failedTranslationLetsTheSameSpeakerTryAgain() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.recognized(text: "hello"))
        #expect(machine.handle(.translationFailed) == [.stateChanged(.listening(.a)), .resetEndpointer])
    }

    @Test func lateResultsAreIgnored() {
        var machine = Machine(settings: .init(echoTail: tail))
        #expect(machine.handle(.recognized(text: "stale")) == [])
        #expect(machine.handle(.translated(text: "viejo")) == [])
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [])
        #expect(machine.state == .listening(.a))
    }

    @Test func listenDuringTheGuardChoosesTheNextSpeaker() {
        var machine = Machine(settings: .init(echoTail: tail))
        turn(&machine, by: .a, at: 0, played: 1_000)
        _ = machine.handle(.listen(.a))
        _ = machine.handle(.clock(now: 1_000_000))
        #expect(machine.state == .listening(.a))
    }

    @Test func clockNeverRunsBackwards() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.clock(now: 5_000))
        _ = machine.handle(.clock(now: 1_000))
        #expect(machine.now == 5_000)
    }

    // MARK: - Stop

    @Test func stopWhileHearingEndsTheUtteranceNow() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        #expect(machine.handle(.stop) == [.stateChanged(.recognizing(.a)), .finishRecognition(.a, enEs), .resetEndpointer])
    }

    @Test func stopWhileSpeakingCutsThePlayback() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        #expect(machine.handle(.stop) == [.stopSpeaking])
        #expect(machine.state == .speaking(.a))
        #expect(machine.handle(.speakingFinished(playedSamples: 100)) == [.stateChanged(.echoGuard(next: .b, until: 100 + tail))])
    }

    @Test func stopWhileListeningDoesNothing() {
        var machine = Machine(settings: .init(echoTail: tail))
        #expect(machine.handle(.stop) == [])
        #expect(machine.state == .listening(.a))
    }

    // MARK: - Pause and resume

    @Test func pauseWhileListeningReleasesTheMicrophone() {
        var machine = Machine(settings: .init(echoTail: tail))
        #expect(machine.handle(.pause) == [.stateChanged(.paused(next: .a)), .releaseCapture, .resetEndpointer])
        #expect(!machine.acceptsAudio)
        #expect(machine.handle(.speechStarted(at: 0)) == [])
        #expect(machine.handle(.resume) == [.stateChanged(.listening(.a)), .reopenCapture, .resetEndpointer])
        #expect(machine.acceptsAudio)
    }

    @Test func pauseMidUtteranceAbandonsIt() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        #expect(machine.handle(.pause) == [.stateChanged(.paused(next: .a)), .cancelRecognition, .releaseCapture, .resetEndpointer])
    }

    @Test func pauseDuringATurnWaitsForItToEnd() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        #expect(machine.handle(.pause) == [])
        #expect(machine.pauseRequested)
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        #expect(machine.handle(.speakingFinished(playedSamples: 100)) == [.stateChanged(.paused(next: .b)), .releaseCapture])
        #expect(machine.handle(.resume) == [.stateChanged(.listening(.b)), .reopenCapture, .resetEndpointer])
    }

    @Test func resumeBeforeTheTurnEndsCancelsThePause() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.pause)
        _ = machine.handle(.resume)
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        #expect(machine.handle(.speakingFinished(playedSamples: 100)) == [.stateChanged(.echoGuard(next: .b, until: 100 + tail))])
    }

    @Test func pauseWhenNothingWasRecognizedTakesEffectThen() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.pause)
        #expect(machine.handle(.recognized(text: "")) == [.stateChanged(.paused(next: .a)), .releaseCapture, .reportNoSpeech(.a)])
    }

    @Test func pauseDuringTheEchoGuardKeepsTheNextSpeaker() {
        var machine = Machine(settings: .init(echoTail: tail))
        turn(&machine, by: .a, at: 0, played: 1_000)
        #expect(machine.handle(.pause) == [.stateChanged(.paused(next: .b)), .releaseCapture, .resetEndpointer])
    }

    @Test func pausedInManualModeResumesIdle() {
        var machine = Machine(settings: .init(mode: .manual, echoTail: tail))
        #expect(machine.handle(.pause) == [.stateChanged(.paused(next: nil)), .releaseCapture])
        #expect(machine.handle(.resume) == [.stateChanged(.idle), .reopenCapture, .resetEndpointer])
    }

    @Test func listenWhilePausedChoosesWhoListensAfterResume() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.pause)
        #expect(machine.handle(.listen(.b)) == [.stateChanged(.paused(next: .b))])
    }

    // MARK: - Typed turns

    @Test func aTypedTurnIsTranslatedAndSpokenThenTheOtherSideListens() {
        var machine = Machine(settings: .init(echoTail: tail, hearable: [.a]))
        #expect(machine.handle(.typed(.b, text: " hola ")) == [.stateChanged(.translating(.b)), .translate(.b, text: "hola", esEn)])
        _ = machine.handle(.translated(text: "hello"))
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.echoGuard(next: .a, until: 10 + tail))])
    }

    @Test func aTurnKeepsTheLanguagesItStartedWith() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 100))
        // The languages change mid-utterance: this turn is still English to Spanish.
        var settings = machine.settings
        settings.languageB = "fr"
        _ = machine.reconfigure(settings)
        #expect(machine.handle(.speechEnded(at: 20_000)) == [.stateChanged(.recognizing(.a)), .finishRecognition(.a, enEs)])
        #expect(machine.handle(.recognized(text: "hello")) == [.stateChanged(.translating(.a)), .translate(.a, text: "hello", enEs)])
        #expect(machine.handle(.translated(text: "hola")) == [.stateChanged(.speaking(.a)), .speak(.a, text: "hola", language: "es")])
        // The next turn is in the new languages.
        _ = machine.handle(.speakingStarted)
        _ = machine.handle(.speakingFinished(playedSamples: 10))
        _ = machine.handle(.clock(now: 1_000_000))
        #expect(machine.handle(.speechStarted(at: 1_000_000)) == [.stateChanged(.hearing(.b, since: 1_000_000)), .startRecognition(.b, .init(source: "fr", target: "en"))])
    }

    @Test func aReplayedTurnIsInItsOwnLanguages() {
        var machine = Machine(settings: .init(echoTail: tail, failureNotice: true))
        let past = TurnLanguages(source: "ca", target: "pt")
        #expect(machine.handle(.typed(.b, text: "bon dia", languages: past)) == [.stateChanged(.translating(.b)), .translate(.b, text: "bon dia", past)])
        #expect(machine.handle(.translationFailed) == [.stateChanged(.speaking(.b)), .tellUntranslated(.b, language: "ca")])
    }

    @Test func aFailedTypedTurnDoesNotGiveTheMicrophoneToWhoCannotBeHeard() {
        var machine = Machine(settings: .init(echoTail: tail, hearable: [.a]))
        _ = machine.handle(.typed(.b, text: "hola"))
        #expect(machine.handle(.translationFailed) == [.stateChanged(.listening(.a)), .resetEndpointer])
    }

    @Test func anEmptyTypedTurnIsIgnored() {
        var machine = Machine(settings: .init(echoTail: tail))
        #expect(machine.handle(.typed(.a, text: "   ")) == [])
    }

    @Test func typingIsRefusedWhileSomeoneSpeaks() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        #expect(machine.handle(.typed(.b, text: "hola")) == [])
        #expect(machine.state == .hearing(.a, since: 0))
    }

    @Test func aTypedTurnWhilePausedReturnsToPause() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.pause)
        _ = machine.handle(.typed(.b, text: "hola"))
        _ = machine.handle(.translated(text: "hello"))
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.paused(next: .a)), .releaseCapture])
    }

    // MARK: - Doubtful speech

    @Test func lowConfidenceAsksTheSameSpeakerToRepeatWhenConfigured() {
        var machine = Machine(settings: .init(echoTail: tail, repeatPrompt: true))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        #expect(machine.handle(.recognized(text: "mumble", confident: false)) == [.stateChanged(.speaking(.a)), .askToRepeat(.a, language: "en")])
        // No clock event was sent: the timeline stands at 0, so the guard is the prompt plus the tail.
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.echoGuard(next: .a, until: 10 + tail))])
    }

    @Test func lowConfidenceIsTranslatedAnywayWithoutAPrompt() {
        var machine = Machine(settings: .init(echoTail: tail, repeatPrompt: false))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        #expect(machine.handle(.recognized(text: "mumble", confident: false)) == [.stateChanged(.translating(.a)), .translate(.a, text: "mumble", enEs)])
    }

    // MARK: - Runtime changes

    @Test func aModeChangeAppliesFromTheNextTurn() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        machine.settings.mode = .oneWay
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.recognized(text: "hello"))
        _ = machine.handle(.translated(text: "hola"))
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.echoGuard(next: .a, until: 10 + tail))])
    }

    @Test func everyStateHasAName() {
        let states: [Machine.State] = [
            .idle, .listening(.a), .hearing(.a, since: 0), .recognizing(.a), .translating(.a), .speaking(.a),
            .echoGuard(next: .b, until: 0), .paused(next: nil),
        ]
        #expect(Set(states.map(\.name)).count == states.count)
    }

    // MARK: - Reconfiguring

    @Test func swappingToAnUnhearableSideListensToTheOtherOne() {
        var machine = Machine(settings: .init(echoTail: tail, hearable: [.a]))
        var settings = machine.settings
        settings.hearable = [.b]  // the languages were swapped: English is now B's
        #expect(machine.reconfigure(settings) == [.stateChanged(.listening(.b)), .resetEndpointer])
    }

    @Test func reconfiguringKeepsAHearableListener() {
        var machine = Machine(settings: .init(echoTail: tail))
        var settings = machine.settings
        settings.silenceless()
        #expect(machine.reconfigure(settings) == [])
        #expect(machine.state == .listening(.a))
    }

    @Test func nobodyHearableAfterAChangeMeansIdle() {
        var machine = Machine(settings: .init(echoTail: tail))
        var settings = machine.settings
        settings.hearable = []
        #expect(machine.reconfigure(settings) == [.stateChanged(.idle)])
    }

    @Test func leavingManualModeStartsListening() {
        var machine = Machine(settings: .init(mode: .manual, echoTail: tail))
        var settings = machine.settings
        settings.mode = .alternate
        #expect(machine.reconfigure(settings) == [.stateChanged(.listening(.a)), .resetEndpointer])
    }

    @Test func theGuardAndThePauseAreRetargeted() {
        var machine = Machine(settings: .init(echoTail: tail))
        turn(&machine, by: .a, at: 0, played: 1_000)
        var settings = machine.settings
        settings.hearable = [.a]
        #expect(machine.reconfigure(settings) == [.stateChanged(.echoGuard(next: .a, until: 16_000 + 1_000 + tail))])
        _ = machine.handle(.pause)
        settings.hearable = [.b]
        #expect(machine.reconfigure(settings) == [.stateChanged(.paused(next: .b))])
    }

    @Test func aTurnInFlightIsNotDisturbed() {
        var machine = Machine(settings: .init(echoTail: tail))
        _ = machine.handle(.speechStarted(at: 0))
        var settings = machine.settings
        settings.hearable = [.b]
        #expect(machine.reconfigure(settings) == [])
        #expect(machine.state == .hearing(.a, since: 0))
    }
}

private extension ConversationMachine.Settings {
    /// A change that touches nothing about who can be heard.
    mutating func silenceless() { echoTail += 1 }
}

@Suite("Conversation machine: untranslated turns")
struct UntranslatedNoticeMachineTests {
    typealias Machine = ConversationMachine
    let tail: SampleTime = 4_800

    @Test func aFailedTranslationIsAnsweredWithANoticeAndTheSameSpeakerGoesOn() {
        var machine = Machine(settings: .init(echoTail: tail, failureNotice: true))
        _ = machine.handle(.speechStarted(at: 0))
        _ = machine.handle(.speechEnded(at: 16_000))
        _ = machine.handle(.recognized(text: "hello"))
        #expect(machine.handle(.translationFailed) == [.stateChanged(.speaking(.a)), .tellUntranslated(.a, language: "en")])
        #expect(!machine.acceptsAudio, "the notice is not heard as speech")
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.echoGuard(next: .a, until: 10 + tail))])
    }

    @Test func aNoticeToWhoTypedGivesTheMicrophoneOnlyToWhoCanBeHeard() {
        var machine = Machine(settings: .init(echoTail: tail, hearable: [.a], failureNotice: true))
        _ = machine.handle(.typed(.b, text: "hola"))
        #expect(machine.handle(.translationFailed) == [.stateChanged(.speaking(.b)), .tellUntranslated(.b, language: "es")])
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.echoGuard(next: .a, until: 10 + tail))])
    }

    @Test func aPauseAskedForDuringTheNoticeBeginsAfterIt() {
        var machine = Machine(settings: .init(echoTail: tail, failureNotice: true))
        _ = machine.handle(.typed(.a, text: "hello"))
        _ = machine.handle(.translationFailed)
        #expect(machine.handle(.pause) == [])
        #expect(machine.handle(.speakingFinished(playedSamples: 10)) == [.stateChanged(.paused(next: .a)), .releaseCapture])
    }
}
