import CPocketSphinx

#if canImport(Glibc)
import Glibc
#endif

/// PocketSphinx, with its models loaded once at start-up and kept warm.
public final class PocketSphinxRecognizer: SpeechRecognizer {
    private let decoder: OpaquePointer
    private let config: OpaquePointer
    private var inUtterance = false
    public let language: String

    /// Loads the models. `options` are extra decoder flags without the dash (e.g. `["bestpath": "no"]`).
    public init(
        language: String, acousticModel: String, languageModel: String, dictionary: String,
        options: [String: String] = [:]
    ) throws(RecognizerError) {
        var arguments = [
            "parleyd", "-hmm", acousticModel, "-lm", languageModel, "-dict", dictionary,
            "-logfn", "/dev/null", "-samprate", "16000",
        ]
        for (key, value) in options.sorted(by: { $0.key < $1.key }) {
            arguments += ["-" + key, value]
        }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        guard let config = argv.withUnsafeMutableBufferPointer({ buffer in
            cmd_ln_parse_r(nil, ps_args(), Int32(arguments.count), buffer.baseAddress, 0)
        }) else {
            throw RecognizerError("PocketSphinx rejected its options for \(language): \(arguments.dropFirst().joined(separator: " "))")
        }
        guard let decoder = ps_init(config) else {
            cmd_ln_free_r(config)
            throw RecognizerError(
                "PocketSphinx could not load the \(language) model (\(acousticModel), \(languageModel), \(dictionary)); "
                    + "check that the files are a PocketSphinx 5prealpha model, e.g. from pocketsphinx-en-us")
        }
        self.decoder = decoder
        self.config = config
        self.language = language
    }

    deinit {
        ps_free(decoder)
        cmd_ln_free_r(config)
    }

    public func startUtterance() throws(RecognizerError) {
        if inUtterance { cancelUtterance() }
        guard ps_start_utt(decoder) >= 0 else { throw RecognizerError("PocketSphinx could not start an utterance") }
        inUtterance = true
    }

    public func feed(_ samples: [Int16]) throws(RecognizerError) {
        guard inUtterance, !samples.isEmpty else { return }
        let result = samples.withUnsafeBufferPointer { buffer in
            ps_process_raw(decoder, buffer.baseAddress, buffer.count, 0, 0)
        }
        guard result >= 0 else { throw RecognizerError("PocketSphinx failed to decode audio") }
    }

    public func partial() -> String? {
        guard inUtterance else { return nil }
        var score: Int32 = 0
        guard let hypothesis = ps_get_hyp(decoder, &score) else { return nil }
        let text = String(cString: hypothesis).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    public func finishUtterance() throws(RecognizerError) -> Recognition {
        guard inUtterance else { return Recognition(text: "", confidence: nil) }
        inUtterance = false
        guard ps_end_utt(decoder) >= 0 else { throw RecognizerError("PocketSphinx could not finish the utterance") }
        var score: Int32 = 0
        guard let hypothesis = ps_get_hyp(decoder, &score) else {
            return Recognition(text: "", confidence: nil)
        }
        let text = String(cString: hypothesis).trimmingCharacters(in: .whitespaces)
        let logProbability = ps_get_prob(decoder)
        let confidence = logmath_exp(ps_get_logmath(decoder), logProbability)
        return Recognition(text: text, confidence: text.isEmpty ? nil : min(1, max(0, confidence)))
    }

    public func cancelUtterance() {
        guard inUtterance else { return }
        inUtterance = false
        ps_end_utt(decoder)
    }
}

#if canImport(Foundation)
import Foundation
#endif
