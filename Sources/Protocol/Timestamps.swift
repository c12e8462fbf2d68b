import FoundationEssentials

/// ISO 8601 timestamps as the protocol reads and writes them, without Foundation's ICU-backed
/// `ISO8601DateFormatter` (which brings 40 MB of ICU into the `parley` CLI). They read what
/// `ISO8601DateFormatter` read with the options the protocol used, measured against it
/// (docs/benchmarks.md, "The parley CLI's size"): fields of one or more digits, a day of 29 to 31
/// that the month does not have rolled over into the next month, hour 24 the next day's
/// midnight, and whatever follows a complete timestamp ignored, as it was.
public enum ISOTimestamp {
    /// `2026-11-22T08:00:00Z`, `...+01:00`: a date, a time and a zone (`Z`, `UTC`, `GMT`, `+HH`,
    /// `+HHMM` or `+HH:MM`, space before it allowed; spaces after the `T` too). With `fractional` the seconds must have a
    /// fraction (`.975`, cut to milliseconds); without, they must not.
    public static func parseInternet(_ text: String, fractional: Bool) -> Date? {
        var scanner = Scanner(text)
        scanner.skipSpaces()
        guard let day = scanner.date(), scanner.take("T") else { return nil }
        scanner.skipSpaces()
        guard let hour = scanner.number(in: 0...24), scanner.take(":"),
            let minute = scanner.number(in: 0...59), scanner.take(":"),
            let second = scanner.number(in: 0...59)
        else { return nil }
        var milliseconds: Int64 = 0
        if scanner.take(".") {
            guard fractional, let digits = scanner.digits() else { return nil }
            for (index, digit) in digits.prefix(3).enumerated() {
                milliseconds += Int64(digit) * [100, 10, 1][index]
            }
        } else if fractional {
            return nil
        }
        scanner.skipSpaces()
        guard let offset = scanner.zoneOffset() else { return nil }
        let seconds = day * 86_400 + Int64(hour * 3_600 + minute * 60 + second) - offset
        return date(milliseconds: seconds * 1_000 + milliseconds)
    }

    /// `2026-11-22` (midnight UTC); whatever follows the day is ignored.
    public static func parseDay(_ text: String) -> Date? {
        var scanner = Scanner(text)
        scanner.skipSpaces()
        guard let day = scanner.date() else { return nil }
        return date(milliseconds: day * 86_400_000)
    }

    /// UTC with milliseconds (`2026-11-22T05:19:17.975Z`), rounded to the nearest millisecond
    /// as ISO8601DateFormatter rounded it.
    public static func format(_ date: Date) -> String {
        let total = Int64((date.timeIntervalSince1970 * 1_000 + 0.5).rounded(.down))
        let (days, inDay) = floorDivide(total, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hour = inDay / 3_600_000
        let minute = inDay / 60_000 % 60
        let second = inDay / 1_000 % 60
        let millisecond = inDay % 1_000
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T\(padded(hour, 2)):\(padded(minute, 2)):\(padded(second, 2)).\(padded(millisecond, 3))Z"
    }

    /// Days since 1970-01-01 of a day in the proleptic Gregorian calendar; `day` may be past the
    /// month's end (it rolls over).
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year, month and day of a count of days since 1970-01-01.
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (era * 400 + yearOfEra + (month <= 2 ? 1 : 0), month, day)
    }

    /// `value` in decimal with zeros in front up to `width` digits (`%0Nd`; a minus sign first).
    public static func padded(_ value: some BinaryInteger, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count))
        return (value < 0 ? "-" : "") + zeros + digits
    }

    /// A moment as Foundation made it from a parse: whole milliseconds since 1970.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(milliseconds) / 1_000 - Date.timeIntervalBetween1970AndReferenceDate)
    }

    /// `date(milliseconds:)` of whole seconds since 1970.
    public static func date(seconds: Int64) -> Date { date(milliseconds: seconds * 1_000) }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let remainder = value % divisor
        return remainder < 0 ? (value / divisor - 1, remainder + divisor) : (value / divisor, remainder)
    }

    /// Reads a timestamp's parts from the front of a text.
    struct Scanner {
        private var rest: Substring.UnicodeScalarView

        init(_ text: String) { rest = Substring(text).unicodeScalars }

        mutating func skipSpaces() {
            while let first = rest.first, first == " " || first == "\t" { rest.removeFirst() }
        }

        /// Consumes `literal` if the text goes on with it.
        mutating func take(_ literal: Unicode.Scalar) -> Bool {
            guard rest.first == literal else { return false }
            rest.removeFirst()
            return true
        }

        /// One or more ASCII digits (nil when none, or more than 18).
        mutating func digits() -> [Int]? {
            var digits: [Int] = []
            while let first = rest.first, ("0"..."9").contains(first) {
                digits.append(Int(first.value - 48))
                rest.removeFirst()
            }
            guard !digits.isEmpty, digits.count <= 18 else { return nil }
            return digits
        }

        /// A number of one or more digits, nil when it is outside `range`.
        mutating func number(in range: ClosedRange<Int>) -> Int? {
            guard let digits = digits() else { return nil }
            let value = digits.reduce(0) { $0 * 10 + $1 }
            return range.contains(value) ? value : nil
        }

        /// `YYYY-MM-DD` as days since 1970-01-01 (day 1 to 31, rolling over past the month's end).
        mutating func date() -> Int64? {
            guard let year = number(in: 0...999_999_999), take("-"), let month = number(in: 1...12), take("-"),
                let day = number(in: 1...31)
            else { return nil }
            return ISOTimestamp.days(year: Int64(year), month: Int64(month), day: Int64(day))
        }

        /// `Z`, `UTC`, `GMT`, `+HH`, `+HHMM`, `+HH:MM` (or `-`), as seconds east of UTC.
        mutating func zoneOffset() -> Int64? {
            if take("Z") || take("z") { return 0 }
            for name in ["UTC", "GMT"] where rest.starts(with: name.unicodeScalars) {
                rest.removeFirst(name.unicodeScalars.count)
                return 0
            }
            let sign: Int64
            if take("+") {
                sign = 1
            } else if take("-") {
                sign = -1
            } else {
                return nil
            }
            guard let hours = twoDigits() else { return nil }
            var minutes = 0
            // Minutes past 59 were ignored, as was a lone digit after the colon.
            if take(":") {
                minutes = twoDigits() ?? 0
            } else if let direct = twoDigits() {
                minutes = direct
            }
            if minutes > 59 { minutes = 0 }
            return sign * Int64(hours * 3_600 + minutes * 60)
        }

        /// Exactly two digits, or nothing consumed.
        private mutating func twoDigits() -> Int? {
            let saved = rest
            guard let tens = rest.first, ("0"..."9").contains(tens) else { return nil }
            rest.removeFirst()
            guard let ones = rest.first, ("0"..."9").contains(ones) else {
                rest = saved
                return nil
            }
            rest.removeFirst()
            return Int(tens.value - 48) * 10 + Int(ones.value - 48)
        }
    }
}
