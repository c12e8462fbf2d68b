import ParleyConfig
import ParleyProtocol
import ParleyRecognition

// The wire's view of a speech model: the mapping lives with the daemon that answers
// `languages`, so the configuration does not depend on the protocol (issue 39).
extension RecognizerModel {
    /// The model as `parley languages` shows it: its files, where it came from, and sizes.
    public func info() -> LanguagesInfo.Model {
        LanguagesInfo.Model(
            acousticModel: acousticModel, languageModel: languageModel, dictionary: dictionary, origin: origin(),
            acousticModelBytes: Self.size(of: acousticModel), languageModelBytes: Self.size(of: languageModel),
            dictionaryBytes: Self.size(of: dictionary))
    }
}
