import Foundation
import Testing
import ParleyCore
import ParleyProtocol
@testable import ParleyCLI

/// The CLI's own time and text helpers (no Foundation formatters, hence no ICU), checked
/// against the Foundation formatters they replace. A wider comparison (44,000 inputs in eight
/// zones, 200,000 instants) is described in docs/benchmarks.md. Serialized: TZ is the process's,
/// and one test restoring it while another runs in Madrid made the other see UTC (it failed
/// once in session 40).
@Suite(.serialized) struct CLITimeTests {
    static let madrid = "Europe/Madrid"

    /// Runs `body` with TZ set to `zone`, then restores TZ.
    static func inZone<T>(_ zone: String, _ body: () throws -> T) rethrows -> T {
        let saved = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        tzset()
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        return try body()
    }

    static func oldFormat(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    @Test func timestampsAreWrittenAsISO8601DateFormatterWroteThem() {
        for seconds in [0, 1_795_442_709.123, 1_795_442_709.9996, 1_794_465_313.527639, -223_928_299.268, 951_782_400, 253_402_300_799.999] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ISOTimestamp.format(date) == Self.oldFormat(date), "\(seconds)")
        }
        #expect(ISOTimestamp.format(Date(timeIntervalSince1970: 1_795_442_709.123)) == "2026-11-23T14:05:09.123Z")
    }

    @Test func theProtocolReadsWhatItReadBefore() {
        func seconds(_ text: String) -> Double? { HistoryTime.parse(text)?.timeIntervalSince1970 }
        #expect(seconds("2026-11-23T14:05:09.123Z") == 1_795_442_709.123)
        #expect(seconds("2026-11-23T14:05:09Z") == 1_795_442_709)
        #expect(seconds("2026-11-23T14:05:09.12345Z") == 1_795_442_709.123)  // cut to milliseconds
        #expect(seconds("2026-11-23T14:05:09+01:00") == 1_795_439_109)
        #expect(seconds("2026-11-23T14:05:09+0100") == 1_795_439_109)
        #expect(seconds("2026-11-23T14:05:09-05:30") == 1_795_462_509)
        #expect(seconds("2026-11-23") == 1_795_392_000)  // midnight UTC
        #expect(seconds("2026-11-31") == 1_796_083_200)  // rolls over into December, as before
        #expect(seconds("2026-11-23T14:05") == 1_795_392_000)  // no zone: read as the day, as before
        for rejected in ["", "yesterday", "2026-13-01", "2026-11-32", "2026-11-00", "20261123T140509Z"] {
            #expect(HistoryTime.parse(rejected) == nil, "\(rejected)")
        }
    }

    @Test func aLocalArgumentIsReadInTheLocalZone() throws {
        try Self.inZone(Self.madrid) { () throws in
            #expect(try LocalTime.argument("2026-11-23", option: "--since", utc: false) == "2026-11-22T23:00:00.000Z")
            #expect(try LocalTime.argument("2026-07-01T08:00", option: "--since", utc: false) == "2026-07-01T06:00:00.000Z")
            #expect(try LocalTime.argument("2026-07-01 08:00:30", option: "--since", utc: false) == "2026-07-01T06:00:30.000Z")
            #expect(try LocalTime.argument("2026-07-01", option: "--since", utc: true) == "2026-07-01T00:00:00.000Z")
            #expect(try LocalTime.argument("2026-07-01T08:00:00+02:00", option: "--since", utc: true) == "2026-07-01T06:00:00.000Z")
            // The hour summer time skips does not exist; the hour it repeats is its later pass.
            #expect(throws: (any Error).self) { try LocalTime.argument("2026-03-29T02:30", option: "--since", utc: false) }
            #expect(try LocalTime.argument("2026-10-25T02:30", option: "--since", utc: false) == "2026-10-25T01:30:00.000Z")
            for rejected in ["2026-02-29", "2026-11-23T24:00", "2026-11-23T08", "2026-11-23 T08:00", "2026-11-23x", "tomorrow"] {
                #expect(throws: (any Error).self, "\(rejected)") { try LocalTime.argument(rejected, option: "--since", utc: false) }
            }
        }
    }

    @Test func localArgumentsMatchDateFormatter() throws {
        let inputs = [
            "2026-11-23", "2026-1-5", "2024-02-29", "2026-11-23T08:00", "2026-11-23T8:00", "2026-11-23T08:00:5", "2026-11-23 08:00",
            "2026-11-23  08:00", "2026/11/23", "2026-11-23T 08:00", " 2026-11-23 ", "2026-03-29T01:59:59", "2026-03-29T03:00",
            "2026-10-25T01:30", "2026-10-25T03:00", "1900-06-01T12:00",
        ]
        try Self.inZone(Self.madrid) { () throws in
            for input in inputs {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: Self.madrid)
                formatter.isLenient = false
                let expected = ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"]
                    .lazy.compactMap { pattern -> Date? in
                        formatter.dateFormat = pattern
                        return formatter.date(from: input)
                    }.first
                let got = try? LocalTime.argument(input, option: "--since", utc: false)
                #expect(got == expected.map(Self.oldFormat), "\(input)")
            }
        }
    }

    @Test func timesAreShownInTheLocalZone() {
        Self.inZone(Self.madrid) {
            #expect(LocalTime.display("2026-07-01T06:00:30.999Z", utc: false) == "2026-07-01 08:00:30")
            #expect(LocalTime.display("2026-11-23T14:05:09.123Z", utc: false) == "2026-11-23 15:05:09")
            #expect(LocalTime.display("2026-11-23T14:05:09.123Z", utc: true) == "2026-11-23 14:05:09 UTC")
            #expect(LocalTime.display("not a time", utc: false) == "not a time")
        }
    }

    @Test func printfFormatsAsStringFormatDid() {
        for value in [0.25, 0.15, -42.05, 1e300, 12.35, 0.0] {
            #expect(ScreenText.printf("%.1f", value) == String(format: "%.1f", value), "\(value)")
        }
        #expect(ScreenText.printf("level %.1f dB (peak %.1f)", Double(Float(-42.04)), -3.0) == "level -42.0 dB (peak -3.0)")
    }

    @Test func paddingIsNSStringsPadding() {
        for (text, width) in [("es", 5), ("LANG", 4), ("café", 6), ("toolong", 3), ("", 2)] {
            #expect(text.paddedUTF16(to: width) == text.padding(toLength: width, withPad: " ", startingAt: 0), "\(text)")
        }
    }

    @Test func aFileIsReadWholeOrSaysWhyNot() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-input-\(getpid()).json")
        try Data("[1,2,3]".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try InputFile.read(url.path) == Data("[1,2,3]".utf8))
        #expect(throws: InputFile.Failure.self) { try InputFile.read("/nonexistent/parley.json") }
        #expect("\(InputFile.Failure(code: ENOENT))" == "No such file or directory")
    }

    @Test func whiteSpaceOnlyIsNoSay() {
        #expect(SayRequest(speaker: .a, text: " \t\n\u{00A0}\u{3000}") == nil)
        #expect(SayRequest(speaker: .a, text: " \u{301}") != nil)
        #expect(SayRequest(speaker: .a, text: " hola ") != nil)
    }
}
