import Foundation
import ParleyCore

/// Reads a recording as if it were a microphone: 16 kHz mono 16-bit WAV, or headerless raw
/// audio in that format (the pocketsphinx test recordings are raw).
///
/// Recordings are not real time: the pipeline may pace them, so a file gives the same turns
/// as a live microphone, only faster.
public final class FileCapture: AudioCapture {
    private let samples: [Int16]
    private var position = 0
    private let periodFrames: Int
    private let pace: Bool
    private var clockStart: ContinuousClock.Instant?
    public let sampleRate: Int
    /// A paced recording behaves like a microphone; an unpaced one is read as fast as it goes.
    public var isRealTime: Bool { pace }
    /// Parley's replies never reach a recording, paced or not: nothing of it is skipped.
    public var hearsPlayback: Bool { false }

    /// `pace` delivers each period when a microphone would (for measuring latency).
    public init(path: String, periodMs: Int = 20, pace: Bool = false) throws(AudioError) {
        self.pace = pace
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw AudioError(.open, "cannot read input \(path): \(error.localizedDescription)")
        }
        let parsed: (samples: [Int16], rate: Int)
        if path.lowercased().hasSuffix(".raw") || path.lowercased().hasSuffix(".pcm") {
            parsed = (WAV.decodeSamples(data[...]), captureSampleRate)
        } else {
            parsed = try WAV.decode(data, path: path)
        }
        guard parsed.rate == captureSampleRate else {
            throw AudioError(
                .format,
                "\(path) is \(parsed.rate) Hz; Parley reads \(captureSampleRate) Hz mono. "
                    + "Convert it with: sox \(path) -r \(captureSampleRate) -c 1 -b 16 converted.wav")
        }
        self.samples = parsed.samples
        self.sampleRate = parsed.rate
        self.periodFrames = parsed.rate * periodMs / 1000
    }

    public func read() throws(AudioError) -> [Int16] {
        guard position < samples.count else { return [] }
        let end = min(samples.count, position + periodFrames)
        if pace {
            let clock = ContinuousClock()
            let start = clockStart ?? clock.now
            clockStart = start
            let wait = start + .nanoseconds(Int64(end) * 1_000_000_000 / Int64(sampleRate)) - clock.now
            if wait > .zero {
                Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            }
        }
        defer { position = end }
        return Array(samples[position..<end])
    }

    public func close() {}
}

/// Records what would have been played into a 16-bit mono WAV file.
public final class WAVRecorder: AudioPlayback {
    private let handle: FileHandle
    private var dataBytes = 0
    private var closed = false
    public let sampleRate: Int

    public init(path: String, sampleRate: Int) throws(AudioError) {
        guard FileManager.default.createFile(atPath: path, contents: WAV.header(sampleRate: sampleRate, dataBytes: 0)),
            let handle = FileHandle(forUpdatingAtPath: path)
        else {
            throw AudioError(.open, "cannot create output \(path): check that its directory exists and is writable")
        }
        self.handle = handle
        self.sampleRate = sampleRate
        handle.seekToEndOfFile()
    }

    public func write(_ samples: [Int16]) throws(AudioError) {
        let bytes = WAV.encodeSamples(samples)
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw AudioError(.io, "cannot write output: \(error.localizedDescription)")
        }
        dataBytes += bytes.count
    }

    public func drain() throws(AudioError) {
        do {
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: WAV.header(sampleRate: sampleRate, dataBytes: dataBytes))
            try handle.seekToEnd()
        } catch {
            throw AudioError(.io, "cannot update output header: \(error.localizedDescription)")
        }
    }

    /// A recording keeps everything: what was played before a stop was heard.
    public func discard() {}

    public func close() {
        guard !closed else { return }
        closed = true
        try? drain()
        try? handle.close()
    }

    deinit { close() }
}

/// The little of the WAV format Parley needs: 16-bit PCM, mono.
public enum WAV {
    public static func header(sampleRate: Int, dataBytes: Int) -> Data {
        var header = Data()
        func append32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { header.append(contentsOf: $0) } }
        func append16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { header.append(contentsOf: $0) } }
        header.append(contentsOf: Array("RIFF".utf8))
        append32(36 + dataBytes)
        header.append(contentsOf: Array("WAVEfmt ".utf8))
        append32(16)
        append16(1)  // PCM
        append16(1)  // mono
        append32(sampleRate)
        append32(sampleRate * 2)
        append16(2)
        append16(16)
        header.append(contentsOf: Array("data".utf8))
        append32(dataBytes)
        return header
    }

    public static func encodeSamples(_ samples: [Int16]) -> Data {
        samples.withUnsafeBufferPointer { pointer in
            var data = Data(capacity: pointer.count * 2)
            for sample in pointer {
                withUnsafeBytes(of: sample.littleEndian) { data.append(contentsOf: $0) }
            }
            return data
        }
    }

    public static func decodeSamples(_ bytes: Data.SubSequence) -> [Int16] {
        var samples = [Int16]()
        samples.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            samples.append(Int16(bitPattern: UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8))
            index += 2
        }
        return samples
    }

    /// Decodes a 16-bit mono PCM WAV file; anything else gets an error that says how to convert it.
    public static func decode(_ data: Data, path: String) throws(AudioError) -> (samples: [Int16], rate: Int) {
        let bytes = [UInt8](data.prefix(12))
        guard bytes.count == 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw AudioError(.format, "\(path) is not a WAV file; give a .wav, or a .raw of 16 kHz mono 16-bit samples")
        }
        func read32(_ offset: Int) -> Int {
            let start = data.startIndex + offset
            return Int(data[start]) | Int(data[start + 1]) << 8 | Int(data[start + 2]) << 16 | Int(data[start + 3]) << 24
        }
        func read16(_ offset: Int) -> Int {
            let start = data.startIndex + offset
            return Int(data[start]) | Int(data[start + 1]) << 8
        }
        var offset = 12
        var rate: Int?
        var convertHint: String { "convert it with: sox \(path) -r \(captureSampleRate) -c 1 -b 16 -e signed-integer converted.wav" }
        while offset + 8 <= data.count {
            let id = String(decoding: data[(data.startIndex + offset)..<(data.startIndex + offset + 4)], as: UTF8.self)
            let size = read32(offset + 4)
            let body = offset + 8
            if id == "fmt " && size >= 16 && body + 16 <= data.count {
                let format = read16(body), channels = read16(body + 2), bits = read16(body + 14)
                guard format == 1 || format == 0xFFFE, bits == 16, channels == 1 else {
                    throw AudioError(.format, "\(path) is not 16-bit mono PCM; \(convertHint)")
                }
                rate = read32(body + 4)
            } else if id == "data" {
                guard let rate else { throw AudioError(.format, "\(path) has no format chunk before its data; \(convertHint)") }
                let end = min(data.count, body + size)
                return (decodeSamples(data[(data.startIndex + body)..<(data.startIndex + end)]), rate)
            }
            offset = body + size + (size & 1)
        }
        throw AudioError(.format, "\(path) has no audio data; \(convertHint)")
    }
}
