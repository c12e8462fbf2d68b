import NIOCore
import Testing
@testable import ParleyControl

@Suite("Line codec")
struct LineDecoderTests {
    /// Feeds `input` one byte at a time and returns the lines decoded.
    private func lines(_ input: String, max: Int = 64) throws -> [String] {
        var decoder = LineDecoder(maxLength: max)
        var buffer = ByteBuffer()
        var out: [String] = []
        for byte in input.utf8 {
            buffer.writeInteger(byte)
            while let line = try decoder.nextLine(&buffer) {
                out.append(String(buffer: line))
            }
        }
        return out
    }

    @Test func splitsOnNewlinesByteByByte() throws {
        #expect(try lines("{\"type\":\"status\"}\n{\"type\":\"version\"}\n") == [#"{"type":"status"}"#, #"{"type":"version"}"#])
    }

    @Test func keepsAnIncompleteLineForLater() throws {
        #expect(try lines("abc\ndef") == ["abc"])
    }

    @Test func stripsCarriageReturns() throws {
        #expect(try lines("abc\r\n") == ["abc"])
    }

    @Test func emptyLinesAreLines() throws {
        #expect(try lines("\n\n") == ["", ""])
    }

    @Test func multibyteCharactersSurviveSplitting() throws {
        #expect(try lines("café 漢字\n") == ["café 漢字"])
    }

    @Test func aLineAtTheLimitPasses() throws {
        #expect(try lines(String(repeating: "x", count: 64) + "\n") == [String(repeating: "x", count: 64)])
    }

    @Test func aLongerLineIsAnError() {
        #expect(throws: LineDecoder.LineTooLong.self) { try lines(String(repeating: "x", count: 65) + "\n") }
    }

    @Test func aLongLineWithoutNewlineFailsBeforeItArrives() {
        // The decoder must not wait for a newline that may never come.
        #expect(throws: LineDecoder.LineTooLong.self) { try lines(String(repeating: "x", count: 200)) }
    }
}
