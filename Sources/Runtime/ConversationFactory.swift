import Foundation
import Logging
import ParleyAudio
import ParleyConfig
import ParleyControl
import ParleyCore
import ParleyEndpoint
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleySynthesis

extension Interpreter {
    /// Builds a conversation from a config, its engines and a clock: the one factory parleyd
    /// and the tests use, so a test runs the same runtime as the daemon with in-memory engines
    /// (see the ParleyTesting module) and a clock it moves itself.
    ///
    /// `logsTranscripts` says whether a turn's log line may carry what was said (`[log]
    /// transcripts`, which a reload changes): asked at each turn; by default never.
    public static func make(
        config: ParleyConfig, engines: EngineAccess,
        synthesizer: sending any SpeechSynthesizer, playback: sending any AudioPlayback, capture: sending CaptureSource,
        history: HistoryWriter,
        events: EventBus, logger: Logger, logsTranscripts: @escaping @Sendable () -> Bool = { false }, observer: Observer? = nil,
        clock: ParleyClock = .continuous
    ) -> Interpreter {
        Interpreter(
            settings: RuntimeSettings(
                speakerA: config.speakerA, speakerB: config.speakerB, mode: config.mode, silenceMs: config.endpoint.silenceMs,
                echoTailMs: config.echoTailMs, minConfidence: config.minConfidence),
            endpoint: config.endpoint, repeatPrompt: config.repeatPrompt, failureNotice: config.failureNotice, engines: engines,
            synthesizer: synthesizer, playback: playback, capture: capture, history: history, events: events,
            logger: logger, logsTranscripts: logsTranscripts, observer: observer, clock: clock, echoCancel: config.echoCancel)
    }
}
