import Dispatch
import Foundation
import Logging
import ParleyControl
import ParleyConversation
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRecognition

/// Who waits for a turn being recorded (`TurnDraft`, the turn's logic's): a typed turn, a
/// replayed one.
struct TurnWaiter: Sendable {
    /// Told the committed turn.
    var completion: @Sendable (Result<TurnRecord, any Error>) -> Void
    /// A past turn spoken again (`replay`): not translated again, not stored again.
    var replaying: TurnRecord?
}

/// Stores finished turns through the history write queue and tells whoever waits for them.
///
/// The runtime takes a turn out of its state and `reserve`s its write under the same lock, so
/// whoever sees the turn end (shutdown) can wait for the write to be queued (`waitForRecords`).
final class TurnRecorder: Sendable {
    private let history: HistoryWriter
    private let events: EventBus
    private let logger: Logger
    /// Wall-clock time, for the turn's `created_at`.
    private let date: @Sendable () -> Date
    /// `[log] transcripts`: whether a turn's log line may carry what was said (asked at each turn,
    /// so a reload applies at once).
    private let logsTranscripts: @Sendable () -> Bool
    private let inFlight = DispatchGroup()

    init(
        history: HistoryWriter, events: EventBus, logger: Logger, date: @escaping @Sendable () -> Date,
        logsTranscripts: @escaping @Sendable () -> Bool
    ) {
        self.history = history
        self.events = events
        self.logger = logger
        self.date = date
        self.logsTranscripts = logsTranscripts
    }

    /// Registers a turn about to be recorded; call under the lock that takes it.
    func reserve() { inFlight.enter() }

    /// Waits until every reserved turn has been handed to the history queue.
    func waitForRecords(seconds: TimeInterval) -> Bool {
        inFlight.wait(timeout: .now() + seconds) == .success
    }

    /// Stores a turn taken with `reserve`. Queued, never waited for here: a failing disk cannot
    /// stop the conversation. The turn is acknowledged (its event, the `say` reply) once
    /// committed; `stored` is told then.
    func record(
        _ draft: TurnDraft, waiter: TurnWaiter?, stored: @escaping @Sendable () -> Void, failed: @escaping @Sendable (String) -> Void
    ) {
        defer { inFlight.leave() }
        let completion = waiter?.completion
        guard let recognition = draft.recognition else {
            completion?(.failure(ConversationRefusal("the turn was abandoned")))
            return
        }
        if let replayed = waiter?.replaying {
            completion?(.success(replayed))
            return
        }
        let turn = TurnRecord(
            sessionID: 0, speaker: draft.speaker, sourceLang: draft.sourceLang, targetLang: draft.targetLang,
            sourceText: recognition.text, translatedText: draft.translation, ipa: draft.ipa, confidence: recognition.confidence,
            words: recognition.words.isEmpty ? nil : recognition.wordConfidences,
            status: draft.translation == nil ? .untranslated : .translated, error: draft.error,
            lowConfidence: draft.lowConfidence, createdAt: date(), asrMs: draft.asrMs, mtMs: draft.mtMs,
            ttsMs: draft.ttsMs, responseMs: draft.responseMs, pauseMs: draft.pauseMs, endedBy: draft.endedBy, speculated: draft.speculated,
            detection: draft.detection, engine: recognition.engine, streamingText: recognition.streamingText,
            route: draft.translation == nil ? nil : draft.route)
        history.enqueue(turn) { [events, logger, logsTranscripts] result in
            switch result {
            case .success(let committed):
                stored()
                var metadata: Logger.Metadata = [
                    "id": "\(committed.id ?? 0)", "speaker": "\(committed.speaker)", "status": "\(committed.status.rawValue)",
                    "response_ms": "\(committed.responseMs ?? -1)",
                ]
                // What was said is logged only when `[log] transcripts = true`; the id is enough
                // to find the turn in history (`parley history`).
                if logsTranscripts() {
                    metadata["text"] = "\(committed.sourceText)"
                    metadata["translation"] = "\(committed.translatedText ?? "")"
                }
                logger.info("turn", metadata: metadata)
                events.publish(EventType.turn, committed.info)
                completion?(.success(committed))
            case .failure(let error):
                failed("could not store the turn in history: \(error)")
                completion?(.failure(error))
            }
        }
    }
}

extension Recognition {
    /// The words and their confidences as clients and the history see them (three decimals).
    var wordConfidences: [WordConfidence] {
        words.map { WordConfidence(text: $0.text, confidence: ($0.confidence * 1000).rounded() / 1000) }
    }
}
