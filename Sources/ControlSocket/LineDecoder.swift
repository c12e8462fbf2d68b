import NIOCore

/// Splits a byte stream into lines (without the "\n" or a trailing "\r").
///
/// A line longer than `maxLength` is an error: the connection is answered and closed rather
/// than buffering without bound.
public struct LineDecoder: ByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public struct LineTooLong: Error, Equatable {}

    public let maxLength: Int
    private var scanned = 0

    public init(maxLength: Int) {
        self.maxLength = maxLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let line = try nextLine(&buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while let line = try nextLine(&buffer) {
            context.fireChannelRead(wrapInboundOut(line))
        }
        // A final line without a newline is still a request.
        if buffer.readableBytes > 0, let rest = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(rest))
        }
        return .needMoreData
    }

    /// Takes the next complete line out of `buffer`, if there is one. Exposed for byte-by-byte tests.
    public mutating func nextLine(_ buffer: inout ByteBuffer) throws -> ByteBuffer? {
        let view = buffer.readableBytesView
        let searchStart = view.startIndex + scanned
        guard let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            if view.count > maxLength { throw LineTooLong() }
            return nil
        }
        let length = newline - view.startIndex
        scanned = 0
        if length > maxLength { throw LineTooLong() }
        guard var line = buffer.readSlice(length: length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line = line.getSlice(at: line.readerIndex, length: line.readableBytes - 1) ?? line
        }
        return line
    }
}
