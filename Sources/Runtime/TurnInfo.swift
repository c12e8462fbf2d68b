import Foundation
import ParleyCore
import ParleyHistory
import ParleyProtocol

extension TurnRecord {
    /// The turn as clients see it.
    public var info: TurnInfo {
        TurnInfo(
            id: id ?? 0, sessionID: sessionID, speaker: speaker, sourceLang: sourceLang, targetLang: targetLang,
            sourceText: sourceText, translatedText: translatedText, ipa: ipa, confidence: confidence,
            words: words, favorite: favorite,
            lowConfidence: lowConfidence, status: status.rawValue, error: error,
            createdAt: Self.iso8601.string(from: createdAt),
            timings: .init(asrMs: asrMs, mtMs: mtMs, ttsMs: ttsMs, responseMs: responseMs, pauseMs: pauseMs, endedBy: endedBy, speculated: speculated),
            detection: detection)
    }

    // ISO8601DateFormatter is thread-safe for formatting once configured.
    nonisolated(unsafe) public static let iso8601: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }()
}
