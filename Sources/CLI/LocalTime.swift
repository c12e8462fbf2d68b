import ArgumentParser
import FoundationEssentials
import Glibc
import ParleyProtocol

/// The CLI's times: parleyd speaks UTC (ISO 8601 with a Z); people read and type local time.
/// `--utc` shows and reads UTC instead. `--json` output keeps parleyd's UTC timestamps.
///
/// The local zone is the C library's (TZ, else /etc/localtime), read with `localtime_r` and
/// `mktime` rather than Foundation's DateFormatter, which would bring ICU into the CLI.
enum LocalTime {
    /// parleyd's timestamp (`2026-11-23T14:05:09.123Z`) as `2026-11-23 15:05:09` in the local
    /// zone (`2026-11-23 14:05:09 UTC` with --utc); a timestamp it cannot read is shown as it is.
    static func display(_ timestamp: String, utc: Bool) -> String {
        guard let date = parseInstant(timestamp), let wall = WallTime(date, utc: utc) else { return timestamp }
        return wall.dateAndTime + (utc ? " UTC" : "")
    }

    /// The wall clock now, `HH:mm:ss` (with ` UTC` after it with `utc`).
    static func clock(utc: Bool) -> String {
        guard let wall = WallTime(Date(), utc: utc) else { return "" }
        return wall.time + (utc ? " UTC" : "")
    }

    /// A moment typed on the command line, as the UTC timestamp parleyd reads. A day
    /// (`2026-11-23`) is its midnight and a time without a zone (`2026-11-23T08:00`, seconds
    /// optional) is that time, both in the local zone (in UTC with --utc); a time with a zone
    /// (`2026-11-23T08:00:00Z`, `...+01:00`) is taken as it is.
    static func argument(_ text: String, option: String, utc: Bool) throws -> String {
        if let instant = parseInstant(text) { return format(instant) }
        if let wall = WallTime(parsing: text), let date = wall.moment(utc: utc) { return format(date) }
        throw ValidationError(
            "\(option) \(text) is not a date; give a day (2026-11-23, local midnight), a local time (2026-11-23T08:00) or a time with its zone (2026-11-23T08:00:00Z)")
    }

    /// `argument`, as a request's time.
    static func time(_ text: String, option: String, utc: Bool) throws -> HistoryTime {
        let argument = try argument(text, option: option, utc: utc)
        guard let time = HistoryTime(argument) else {
            throw ValidationError("\(option) \(text) is not a date parleyd reads (\(argument)); give a day such as 2026-11-23")
        }
        return time
    }

    /// An ISO 8601 moment with its zone, with or without fractions of a second.
    static func parseInstant(_ text: String) -> Date? {
        ISOTimestamp.parseInternet(text, fractional: true) ?? ISOTimestamp.parseInternet(text, fractional: false)
    }

    /// UTC, with milliseconds, as parleyd writes timestamps.
    static func format(_ date: Date) -> String { ISOTimestamp.format(date) }
}

/// A date and time of day on a wall clock, in no zone until one is given.
struct WallTime: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour = 0
    var minute = 0
    var second = 0

    init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// `date`'s wall time in the local zone (UTC with `utc`), to the second: rounded to the
    /// nearest millisecond, then cut (as DateFormatter showed it).
    init?(_ date: Date, utc: Bool) {
        let milliseconds = (date.timeIntervalSince1970 * 1_000 + 0.5).rounded(.down)
        guard milliseconds.magnitude < 1e15 else { return nil }
        let seconds = (milliseconds / 1_000).rounded(.down)
        var clock = time_t(seconds)
        var parts = tm()
        if utc {
            guard gmtime_r(&clock, &parts) != nil else { return nil }
        } else {
            tzset()
            guard localtime_r(&clock, &parts) != nil else { return nil }
        }
        self.init(parts)
    }

    init(_ parts: tm) {
        self.init(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday), hour: Int(parts.tm_hour),
            minute: Int(parts.tm_min), second: Int(parts.tm_sec))
    }

    /// `2026-11-23 15:05:09`.
    var dateAndTime: String {
        "\(ISOTimestamp.padded(year, 4))-\(ISOTimestamp.padded(month, 2))-\(ISOTimestamp.padded(day, 2)) \(time)"
    }

    /// `15:05:09`.
    var time: String {
        "\(ISOTimestamp.padded(hour, 2)):\(ISOTimestamp.padded(minute, 2)):\(ISOTimestamp.padded(second, 2))"
    }

    /// What `--since`/`--until` read as a wall time: `2026-11-23`, `2026-11-23T08:00`,
    /// `2026-11-23T08:00:00`, `2026-11-23 08:00` or `2026-11-23 08:00:00`, as the DateFormatter
    /// patterns the CLI used read them (not leniently): fields of one or more digits, a day the
    /// month has, hour 0 to 23; `/`, `.`, `,` or a space also separate the date's fields and `.`,
    /// `-` or a space the time's; spaces before and after, and after the `T`, are skipped.
    init?(parsing text: String) {
        var rest = Substring(text).unicodeScalars
        func skipSpaces() {
            while let first = rest.first, first.properties.isWhitespace { rest.removeFirst() }
        }
        func number(_ range: ClosedRange<Int>) -> Int? {
            var value = 0
            var count = 0
            while let first = rest.first, ("0"..."9").contains(first), count < 18 {
                value = value * 10 + Int(first.value - 48)
                count += 1
                rest.removeFirst()
            }
            return count > 0 && range.contains(value) ? value : nil
        }
        func separator(_ allowed: Set<Unicode.Scalar>) -> Bool {
            guard let first = rest.first, allowed.contains(first) || first.properties.isWhitespace else { return false }
            rest.removeFirst()
            return true
        }
        let dateSeparators: Set<Unicode.Scalar> = ["-", "/", ".", ","]
        let timeSeparators: Set<Unicode.Scalar> = [":", ".", "-"]
        skipSpaces()
        guard let year = number(1...999_999_999), separator(dateSeparators), let month = number(1...12),
            separator(dateSeparators), let day = number(1...31), day <= Self.days(inMonth: month, of: year)
        else { return nil }
        self.init(year: year, month: month, day: day)
        let beforeSpaces = rest.count
        skipSpaces()
        if rest.isEmpty { return }
        // A time: right after a T (spaces may follow it), or after spaces.
        if rest.first == "T" && rest.count == beforeSpaces {
            rest.removeFirst()
            skipSpaces()
        } else if rest.count == beforeSpaces {
            return nil
        }
        guard let hour = number(0...23), separator(timeSeparators), let minute = number(0...59) else { return nil }
        (self.hour, self.minute) = (hour, minute)
        if let first = rest.first, !first.properties.isWhitespace {
            guard separator(timeSeparators), let second = number(0...59) else { return nil }
            self.second = second
        }
        skipSpaces()
        guard rest.isEmpty else { return nil }
    }

    static func days(inMonth month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The moment this wall time is in UTC (`utc`) or in the local zone. Nil for a local time
    /// the clocks skip (the hour a change to summer time jumps over); a time the clocks show
    /// twice (when summer time ends) is the later of the two moments.
    func moment(utc: Bool) -> Date? {
        if utc {
            let days = ISOTimestamp.days(year: Int64(year), month: Int64(month), day: Int64(day))
            return ISOTimestamp.date(seconds: days * 86_400 + Int64(hour * 3_600 + minute * 60 + second))
        }
        guard let tmYear = Int32(exactly: year - 1900) else { return nil }
        var found: time_t?
        for daylight: Int32 in [-1, 0, 1] {
            var parts = tm()
            parts.tm_year = tmYear
            parts.tm_mon = Int32(month - 1)
            parts.tm_mday = Int32(day)
            parts.tm_hour = Int32(hour)
            parts.tm_min = Int32(minute)
            parts.tm_sec = Int32(second)
            parts.tm_isdst = daylight
            var clock = mktime(&parts)
            var back = tm()
            // mktime normalizes a time that does not exist; only one that reads back the same is this wall time.
            guard localtime_r(&clock, &back) != nil, WallTime(back) == self else { continue }
            found = max(found ?? clock, clock)
        }
        return found.map { ISOTimestamp.date(seconds: Int64($0)) }
    }
}
