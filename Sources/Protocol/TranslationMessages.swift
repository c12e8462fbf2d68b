import FoundationEssentials

/// `languages`: what Parley can hear, translate and say, language by language.
public struct LanguagesInfo: Sendable, Codable, Equatable {
    /// One language (ISO 639-1).
    public struct Language: Sendable, Codable, Equatable {
        public var code: String
        /// A recognizer model is present: the language can be spoken to Parley.
        public var hearable: Bool
        /// An espeak-ng voice exists: Parley can say translations in it.
        public var speakable: Bool
        /// The languages it translates into, with the backends that can.
        public var to: [Route]
        /// The languages that translate into it, with the backends that can.
        public var from: [Route]
        /// The speech model it is heard with; nil when it cannot be heard.
        public var model: Model?
        /// The engine whose words a turn keeps ("moonshine-tiny", "whisper-base", a server, or
        /// "pocketsphinx"); nil when it cannot be heard.
        public var engine: String?

        public init(code: String, hearable: Bool, speakable: Bool, to: [Route], from: [Route], model: Model? = nil, engine: String? = nil) {
            self.code = code
            self.hearable = hearable
            self.speakable = speakable
            self.to = to
            self.from = from
            self.model = model
            self.engine = engine
        }
    }

    /// A language's speech model: its files, where it came from, and their sizes.
    public struct Model: Sendable, Codable, Equatable {
        /// The acoustic model's folder.
        public var acousticModel: String
        public var languageModel: String
        public var dictionary: String
        /// The first line of the model's NOTICE file, "Debian pocketsphinx-en-us" for Debian's
        /// English model, else "config".
        public var origin: String
        /// All the files of the acoustic model's folder.
        public var acousticModelBytes: Int64?
        public var languageModelBytes: Int64?
        public var dictionaryBytes: Int64?

        public init(
            acousticModel: String, languageModel: String, dictionary: String, origin: String, acousticModelBytes: Int64?,
            languageModelBytes: Int64?, dictionaryBytes: Int64?
        ) {
            self.acousticModel = acousticModel
            self.languageModel = languageModel
            self.dictionary = dictionary
            self.origin = origin
            self.acousticModelBytes = acousticModelBytes
            self.languageModelBytes = languageModelBytes
            self.dictionaryBytes = dictionaryBytes
        }

        enum CodingKeys: String, CodingKey {
            case acousticModel = "acoustic_model", languageModel = "language_model", dictionary, origin
            case acousticModelBytes = "acoustic_model_bytes", languageModelBytes = "language_model_bytes"
            case dictionaryBytes = "dictionary_bytes"
        }
    }

    /// The other language of a pair and who translates it, in the order they are tried.
    public struct Route: Sendable, Codable, Equatable {
        public var language: String
        public var backends: [String]

        public init(language: String, backends: [String]) {
            self.language = language
            self.backends = backends
        }
    }

    /// A configured backend; a server that cannot be reached says why.
    public struct Backend: Sendable, Codable, Equatable {
        public var name: String
        public var available: Bool
        public var error: String?

        public init(name: String, available: Bool, error: String? = nil) {
            self.name = name
            self.available = available
            self.error = error
        }
    }

    public var languages: [Language]
    /// In the order they are tried.
    public var backends: [Backend]

    public init(languages: [Language], backends: [Backend]) {
        self.languages = languages
        self.backends = backends
    }
}

extension EventType {
    /// A stored turn changed (`retry` translated it): `data` is the turn as it now stands.
    public static let turnUpdated = "turn_updated"
}
