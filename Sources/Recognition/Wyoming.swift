import Foundation
import ParleyCore

/// The Wyoming protocol's framing (Rhasspy's and Home Assistant's convention for speech
/// services): an event is one JSON header line, then `data_length` bytes of JSON data, then
/// `payload_length` bytes of payload. docs/protocol.md lists the events Parley sends and reads.
public struct WyomingEvent: Sendable, Equatable {
    public var type: String
    /// The data, as JSON (an object).
    public var data: Data
    public var payload: [UInt8]

    public init(type: String, data: Data = Data("{}".utf8), payload: [UInt8] = []) {
        self.type = type
        self.data = data
        self.payload = payload
    }

    public init<T: Encodable>(type: String, encoding value: T, payload: [UInt8] = []) throws(RecognizerError) {
        do {
            self.init(type: type, data: try JSONEncoder().encode(value), payload: payload)
        } catch {
            throw RecognizerError("cannot encode a Wyoming \(type) event: \(error)")
        }
    }

    /// The bytes on the wire.
    public var encoded: [UInt8] {
        var header = #"{"type":"# + Self.quoted(type) + #","version":"1.5.2","data_length":\#(data.count)"#
        if !payload.isEmpty { header += #","payload_length":\#(payload.count)"# }
        return Array((header + "}\n").utf8) + Array(data) + payload
    }

    /// The data decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws(RecognizerError) -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw RecognizerError("a Wyoming \(self.type) event has data Parley cannot read: \(error)")
        }
    }

    private static func quoted(_ text: String) -> String {
        (try? String(decoding: JSONEncoder().encode(text), as: UTF8.self)) ?? "\"\""
    }

    /// The header line of an event: its type, where its data and payload are.
    struct Header: Decodable {
        var type: String
        var dataLength: Int?
        var payloadLength: Int?

        enum CodingKeys: String, CodingKey {
            case type
            case dataLength = "data_length"
            case payloadLength = "payload_length"
        }
    }

    /// The longest header line or data block Parley reads (a transcript is far shorter).
    static let limit = 1 << 20

    /// Reads one event from `read`, which returns the next `count` bytes, or up to a newline
    /// when `count` is nil. Older servers put the data inside the header (`"data": {...}`).
    static func read(_ read: (Int?) throws(RecognizerError) -> [UInt8]) throws(RecognizerError) -> WyomingEvent {
        let line = try read(nil)
        let header: Header
        var inline = Data("{}".utf8)
        do {
            header = try JSONDecoder().decode(Header.self, from: Data(line))
            if let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], let data = object["data"],
                JSONSerialization.isValidJSONObject(data)
            {
                inline = try JSONSerialization.data(withJSONObject: data)
            }
        } catch {
            // Not the line itself: an inline transcript carries what a person said, and this
            // error reaches the log.
            throw RecognizerError("the Wyoming server sent a header line of \(line.count) bytes that Parley cannot read as a JSON event")
        }
        guard (header.dataLength ?? 0) <= limit, (header.payloadLength ?? 0) <= limit * 64 else {
            throw RecognizerError("the Wyoming server sent an event too large to be a transcript")
        }
        let data = try header.dataLength.map { length throws(RecognizerError) in Data(try read(length)) } ?? inline
        let payload = try header.payloadLength.map { length throws(RecognizerError) in try read(length) } ?? []
        return WyomingEvent(type: header.type, data: data, payload: payload)
    }
}

/// The events of one speech-to-text request, as a Wyoming client sends them.
public enum WyomingRequest {
    struct Transcribe: Encodable {
        var language: String?
        /// Parley's own keys, which other servers ignore: the languages a detection chooses
        /// from, and those for which it stops at the language.
        var languages: [String]?
        var skipLanguages: [String]?

        enum CodingKeys: String, CodingKey {
            case language, languages
            case skipLanguages = "skip_languages"
        }
    }

    struct AudioFormat: Encodable {
        var rate = captureSampleRate
        var width = 2
        var channels = 1
    }

    /// transcribe, audio-start, the audio in chunks of a second, audio-stop.
    public static func events(for samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> [WyomingEvent] {
        let transcribe = Transcribe(
            language: request.language, languages: request.language == nil ? request.candidates : nil,
            skipLanguages: request.detectOnly.isEmpty ? nil : request.detectOnly.sorted())
        var events = [
            try WyomingEvent(type: "transcribe", encoding: transcribe),
            try WyomingEvent(type: "audio-start", encoding: AudioFormat()),
        ]
        for start in stride(from: 0, to: samples.count, by: captureSampleRate) {
            let chunk = samples[start..<min(start + captureSampleRate, samples.count)]
            var bytes = [UInt8]()
            bytes.reserveCapacity(chunk.count * 2)
            for sample in chunk {
                let value = UInt16(bitPattern: sample.littleEndian)
                bytes.append(UInt8(value & 0xff))
                bytes.append(UInt8(value >> 8))
            }
            events.append(try WyomingEvent(type: "audio-chunk", encoding: AudioFormat(), payload: bytes))
        }
        events.append(WyomingEvent(type: "audio-stop"))
        return events
    }

    /// What a `transcript` event says: the standard `text` (and `language`), and the keys
    /// Parley's own worker adds.
    struct TranscriptData: Decodable {
        var text: String?
        var language: String?
        var languageProbabilities: [String: Double]?
        var confidence: Double?
        var decoded: Bool?
        var distrusted: Bool?

        enum CodingKeys: String, CodingKey {
            case text, language, confidence, decoded, distrusted
            case languageProbabilities = "language_probabilities"
        }
    }

    struct ErrorData: Decodable {
        var text: String?
        var code: String?
    }

    /// The `error` code of an utterance the worker stopped because it was asked to
    /// (docs/protocol.md, "Stopping an utterance").
    public static let stoppedCode = "stopped"

    /// The transcript an answer carries, or the server's error.
    public static func transcript(from event: WyomingEvent, _ request: TranscriptionRequest, engine: String) throws(RecognizerError) -> Transcript {
        switch event.type {
        case "transcript":
            let data = try event.decode(TranscriptData.self)
            let language = data.language ?? request.language ?? request.candidates.first ?? ""
            let text = (data.text ?? "").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            return Transcript(
                text: text, language: language, confidence: data.confidence, languageProbabilities: data.languageProbabilities ?? [:],
                decoded: data.decoded ?? true, engine: engine, distrusted: text.isEmpty && data.distrusted == true)
        case "error":
            let error = try? event.decode(ErrorData.self)
            if error?.code == stoppedCode { throw RecognizerError("\(engine) stopped the utterance, as asked", stopped: true) }
            throw RecognizerError("the speech server failed: \(error?.text ?? "no reason given")")
        default:
            throw RecognizerError("the speech server answered \(event.type), not a transcript")
        }
    }
}
