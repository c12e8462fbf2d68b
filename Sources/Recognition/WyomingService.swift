import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The server side of the Wyoming protocol: an accurate engine answering speech-to-text
/// requests on a pair of descriptors. `parleyd worker moonshine` serves Moonshine this way on
/// its standard input and output, so that a crash or a hang in the engine's library costs one
/// worker (killed and started again by `WyomingTranscriber`), not the daemon and its turn.
///
/// It answers `describe` with `info`, and `transcribe`, `audio-start`, `audio-chunk`s,
/// `audio-stop` with one `transcript` (or an `error` that says why, and goes on serving).
public enum WyomingService {
    /// Serves `engine` until the other side closes `input`. `languages`: what `info` lists.
    /// `quiet` runs once after an answer when no request has come for `quietMs` (the worker gives
    /// freed memory back there: not after every answer, since the next request, often a moment
    /// later during the same pause, would then fault the engine's buffers back in).
    public static func serve(
        _ engine: any UtteranceTranscriber, languages: [String], input: Int32, output: Int32, quietMs: Int = 2_000,
        quiet: () -> Void = {}
    ) throws(RecognizerError) {
        let link = Link.attached(input: input, output: output)
        var request = TranscriptionRequest(language: nil)
        var samples: [Int16] = []
        while true {
            let event: WyomingEvent
            do {
                event = try link.receive()
            } catch {
                if link.atEnd { return }
                throw error
            }
            switch event.type {
            case "describe":
                try link.send(try WyomingEvent(type: "info", encoding: Info(name: engine.name, languages: languages)))
            case "transcribe":
                let asked = (try? event.decode(Transcribe.self)) ?? Transcribe()
                request = TranscriptionRequest(language: asked.language, candidates: asked.languages ?? [])
            case "audio-start":
                samples.removeAll(keepingCapacity: true)
            case "audio-chunk":
                samples += littleEndianSamples(event.payload)
            case "audio-stop":
                let answer: WyomingEvent
                do {
                    let transcript = try engine.transcribe(samples, request)
                    answer = try WyomingEvent(
                        type: "transcript", encoding: TranscriptAnswer(text: transcript.text, language: transcript.language, confidence: transcript.confidence))
                } catch {
                    answer = try WyomingEvent(type: "error", encoding: ErrorAnswer(text: error.description, code: "transcription-failed"))
                }
                samples = []
                try link.send(answer)
                if !link.hasInput(within: quietMs) { quiet() }
            default:
                continue  // events a speech-to-text service has no answer for
            }
        }
    }

    /// 16-bit little-endian PCM as samples (an odd last byte is dropped).
    static func littleEndianSamples(_ bytes: [UInt8]) -> [Int16] {
        stride(from: 0, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    }

    struct Transcribe: Decodable {
        var language: String?
        var languages: [String]?
    }

    /// Wyoming's `info` for one speech-to-text program with one model.
    struct Info: Encodable {
        struct Program: Encodable {
            var name: String
            var description = "Parley's worker"
            var installed = true
            var attribution = Attribution()
            var models: [Model]
        }
        struct Model: Encodable {
            var name: String
            var languages: [String]
            var installed = true
            var attribution = Attribution()
        }
        struct Attribution: Encodable {
            var name = "Parley"
            var url = ""
        }
        var asr: [Program]

        init(name: String, languages: [String]) {
            asr = [Program(name: name, models: [Model(name: name, languages: languages)])]
        }
    }

    struct TranscriptAnswer: Encodable {
        var text: String
        var language: String
        var confidence: Double?
    }

    struct ErrorAnswer: Encodable {
        var text: String
        var code: String
    }
}
