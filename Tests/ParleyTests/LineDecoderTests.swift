import NIOCore
import NIOTestUtils
import Testing
@testable import ParleyControlSocket

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

/// NIO's own checks of a decoder: every input fed whole, byte by byte (each byte in a buffer
/// with other bytes around it), many messages in one buffer, shuffled, and nothing left over.
@Suite("Line codec, verified by NIOTestUtils")
struct LineDecoderVerifierTests {
    @Test func decodesLinesHoweverTheBytesArrive() throws {
        let pairs: [(String, [ByteBuffer])] = [
            (#"{"type":"status"}"# + "\n", [ByteBuffer(string: #"{"type":"status"}"#)]),
            ("abc\r\n", [ByteBuffer(string: "abc")]),
            ("\n", [ByteBuffer(string: "")]),
            ("one\ntwo\n", [ByteBuffer(string: "one"), ByteBuffer(string: "two")]),
            ("café 漢字\n", [ByteBuffer(string: "café 漢字")]),
            (String(repeating: "x", count: 64) + "\n", [ByteBuffer(string: String(repeating: "x", count: 64))]),
        ]
        try ByteToMessageDecoderVerifier.verifyDecoder(stringInputOutputPairs: pairs) { LineDecoder(maxLength: 64) }
    }
}
