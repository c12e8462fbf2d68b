import Logging
import ParleyConfig
import ParleyRecognition

extension RecognizerPool {
    /// The pool of the config's two speakers: their models (`[recognizer.xx]`, else installed),
    /// the `[recognizer]` search settings and the cache folder. Fails with the config exit code
    /// when neither speaker can be heard.
    convenience init(config: ParleyConfig, logger: Logger, meanDevice: String? = nil, othersHear: Bool = false) throws(DaemonFailure) {
        do {
            try self.init(
                languages: [config.speakerA, config.speakerB], model: { config.recognizerModel(for: $0) },
                configured: Set(config.recognizers.keys),
                settings: DecoderSettings(
                    fwdflat: config.fwdflat, maxHMMsPerFrame: config.maxHMMsPerFrame, maxWordsPerFrame: config.maxWordsPerFrame),
                cacheDirectory: config.recognizerCacheDirectory, meanDevice: meanDevice, othersHear: othersHear, logger: logger)
        } catch {
            throw DaemonFailure(.config, error.description)
        }
    }

    /// Whether `language` has a model whose files exist, by the config alone (nothing loaded).
    static func canHear(_ config: ParleyConfig, _ language: String) -> Bool {
        guard let model = config.recognizerModel(for: language) else { return false }
        return model.firstMissingFile() == nil
    }
}
