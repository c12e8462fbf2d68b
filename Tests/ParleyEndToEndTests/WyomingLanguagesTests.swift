import Foundation
import Logging
import ParleyRecognition
import ParleyTesting
import Testing

/// A Wyoming server is asked only for the languages its `info` answer names: one running an
/// English-only model is not handed Spanish (the next engine hears it).
@Suite("A Wyoming server's own languages", .blocksThreads)
struct WyomingLanguagesTests {
    @Test func aServerThatHearsOnlyEnglishIsNotAskedForSpanish() throws {
        let info = #"{"asr":[{"name":"english-only","models":[{"name":"tiny.en","languages":["en"]}]}]}"#
        let header = #"{"type":"info","data_length":\#(info.utf8.count)}"#
        let server = WyomingTranscriber(
            name: "english-only", endpoint: .child(["/bin/sh", "-c", "printf '%s\\n%s' '\(header)' '\(info)'; exec sleep 30"]),
            languages: ["en", "es", "fr"], timeoutMs: 5_000, startTimeoutMs: 10_000, logger: Logger(label: "test"))
        #expect(server.hears("es"), "before it has described itself, the configured languages stand")
        try server.warm()
        #expect(server.hears("en"))
        #expect(!server.hears("es"))
        #expect(!server.hears("fr"))
        let hearing = AccurateHearing(engines: [server])
        #expect(hearing.engines(for: "es").isEmpty, "Spanish goes to the next engine")
        #expect(hearing.engines(for: "en").count == 1)
    }
}
