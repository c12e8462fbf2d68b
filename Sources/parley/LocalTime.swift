import ArgumentParser
import Foundation
import ParleyProtocol

/// The CLI's times: parleyd speaks UTC (ISO 8601 with a Z); people read and type local time.
/// `--utc` shows and reads UTC instead. `--json` output keeps parleyd's UTC timestamps.
enum LocalTime {
    /// The zone the CLI shows and reads times in: the local one (TZ, /etc/localtime), or UTC.
    static func zone(utc: Bool) -> TimeZone {
        utc ? TimeZone(identifier: "UTC") ?? .current : .current
    }

    /// parleyd's timestamp (`2026-11-23T14:05:09.123Z`) as `2026-11-23 15:05:09` in the local
    /// zone (`2026-11-23 14:05:09 UTC` with --utc); a timestamp it cannot read is shown as it is.
    static func display(_ timestamp: String, utc: Bool) -> String {
        guard let date = parseInstant(timestamp) else { return timestamp }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone(utc: utc)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date) + (utc ? " UTC" : "")
    }

    /// A moment typed on the command line, as the UTC timestamp parleyd reads. A day
    /// (`2026-11-23`) is its midnight and a time without a zone (`2026-11-23T08:00`, seconds
    /// optional) is that time, both in the local zone (in UTC with --utc); a time with a zone
    /// (`2026-11-23T08:00:00Z`, `...+01:00`) is taken as it is.
    static func argument(_ text: String, option: String, utc: Bool) throws -> String {
        if let instant = parseInstant(text) { return format(instant) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone(utc: utc)
        formatter.isLenient = false
        for pattern in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = pattern
            if let date = formatter.date(from: text) { return format(date) }
        }
        throw ValidationError(
            "\(option) \(text) is not a date: give a day (2026-11-23, local midnight), a local time (2026-11-23T08:00) or a time with its zone (2026-11-23T08:00:00Z)")
    }

    /// `argument`, as a request's time.
    static func time(_ text: String, option: String, utc: Bool) throws -> HistoryTime {
        let argument = try argument(text, option: option, utc: utc)
        guard let time = HistoryTime(argument) else {
            throw ValidationError("\(option) \(text) is not a date parleyd reads (\(argument))")
        }
        return time
    }

    /// An ISO 8601 moment with its zone, with or without fractions of a second.
    static func parseInstant(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// UTC, with milliseconds, as parleyd writes timestamps.
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
