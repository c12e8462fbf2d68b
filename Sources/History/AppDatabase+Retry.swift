import Foundation
import GRDB

// MARK: - Retrying a translation

extension AppDatabase {
    /// Records the outcome of translating a stored turn again: `translation` with status
    /// translated and no error, or (nil) status untranslated with `error`. The pronunciation of
    /// an earlier translation no longer applies and is cleared. Returns the updated turn, or
    /// nil when there is no turn `id`.
    public func recordRetry(id: Int64, translation: String?, error: String?, mtMs: Int?) async throws -> TurnRecord? {
        try await writer.write { db in
            guard var turn = try TurnRecord.fetchOne(db, key: id) else { return nil }
            turn.translatedText = translation
            turn.status = translation == nil ? .untranslated : .translated
            turn.error = translation == nil ? error : nil
            turn.ipa = nil
            turn.mtMs = mtMs
            try turn.update(db)
            return turn
        }
    }
}
