import Foundation
import Logging
import ParleyConfig
import ParleyControl
import ParleyCore
import ParleyHistory
import ParleyProtocol
import ParleyRuntime

/// History at start and exit: the write queue, and what happens to turns it cannot store.
extension Daemon {
    /// The history write queue, which logs and reports when storage fails and recovers.
    static func makeHistoryWriter(
        _ config: ParleyConfig, _ history: AppDatabase, events: EventBus, clock: ParleyClock, logger: Logger
    ) -> HistoryWriter {
        HistoryWriter(
            store: history, retention: Retention(maxTurns: config.historyMaxTurns, maxAgeDays: config.historyMaxAgeDays),
            sessionGap: TimeInterval(config.sessionGapMinutes * 60), speakerA: config.speakerA, speakerB: config.speakerB,
            clock: clock,
            onHealthChange: { problem in
                if let problem {
                    let message = "history writes are failing; turns are kept in memory and retried: \(problem)"
                    logger.error("\(message)")
                    events.publish(EventType.error, ErrorEvent(message: message))
                } else {
                    logger.notice("history writes work again; the turns kept in memory are stored")
                }
            },
            onFileRecreated: {
                logger.error(
                    "the history file \(config.historyPath) was deleted while parleyd ran; a new one was made there and the turns since are stored in it")
            })
    }

    /// At exit: waits (up to `timeout`, or `failingStoreExitWait` when writes already fail) for
    /// the turns still queued. Turns that still cannot be stored
    /// (a full disk) are saved to a journal (`journal`: the history's path and the folders to
    /// try; nil when history is off, since then nothing may go to disk) and stored at the next
    /// start; what cannot be saved either is logged as lost. Whoever waits for such a turn
    /// (`say`) is answered, so that no client connection holds up the exit.
    static func flushHistory(
        _ writer: HistoryWriter, journal: (path: String, folders: [String])?, timeout: Duration = .seconds(Int64(Interpreter.stopTimeout)),
        logger: Logger
    ) async {
        // A store that already fails (a full disk) is not waited on for the whole stop
        // timeout: it had its retries, the turns go to the journal, and the stop stays quick.
        let wait = writer.health.lastError == nil ? timeout : min(timeout, failingStoreExitWait)
        if !(await writer.flush(timeout: wait)) {
            let error = writer.health.lastError ?? "unknown error"
            var saved: (count: Int, to: String)?
            var unsaved: String?
            let given = writer.failPending { turns in
                guard let journal else { return nil }
                do {
                    let path = try HistoryJournal.spill(turns, historyPath: journal.path, folders: journal.folders)
                    saved = (turns.count, path)
                    return path
                } catch {
                    unsaved = "\(error)"
                    return nil
                }
            }
            if let saved {
                logger.notice("\(saved.count) turns could not be stored before exit (\(error)); they were saved to \(saved.to) and are stored at the next start")
            } else {
                let why = unsaved.map { "; nor saved to a journal: \($0)" } ?? ""
                logger.error("\(given) history writes could not be stored before exit: \(error)\(why)")
            }
        }
    }

    /// How long the exit waits for a history store that was already failing.
    static let failingStoreExitWait: Duration = .seconds(2)

    /// Where turns that cannot be stored at exit may wait for the next start: the history's
    /// own folder (enough when only the database is full), the cache folder, the control
    /// socket's runtime folder.
    static func historyJournalFolders(_ config: ParleyConfig) -> [String] {
        [
            (config.historyPath as NSString).deletingLastPathComponent, config.recognizerCacheDirectory,
            (config.controlSocket as NSString).deletingLastPathComponent,
        ].compactMap { $0 }.filter { !$0.isEmpty }
    }
}
