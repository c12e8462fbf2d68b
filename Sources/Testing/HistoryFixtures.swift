import Foundation
import ParleyHistory

/// Shortcuts for tests that fill a history directly, written over the product's own writes
/// (so a test stores exactly what the daemon would), kept out of the product.
extension AppDatabase {
    /// Starts a session without ending another.
    public func startSession(speakerA: String, speakerB: String, at date: Date = Date()) async throws -> SessionRecord {
        try await startSession(speakerA: speakerA, speakerB: speakerB, at: date, ending: nil)
    }

    /// Stores `turn` with no retention limit (an identical turn right after it in its session is
    /// not stored twice, as in the product); returns it with its id.
    public func insert(_ turn: TurnRecord) async throws -> TurnRecord {
        try await record(turn, retention: .unlimited, now: turn.createdAt)
    }
}
