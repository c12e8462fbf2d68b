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
        /// Its name in English ("French").
        public var name: String?
        /// The voice that speaks it: espeak-ng's ("fr"; "pt" standing in for Galician),
        /// Festival's ("cmu_us_slt_arctic_hts") or Piper's ("en_US-joe-medium"); nil when it
        /// cannot be spoken.
        public var voice: String?
        /// The engine of `voice`: "piper", "festival", or "espeak-ng" (also when nil: an older parleyd).
        public var voiceEngine: String?
        /// Whether a speaker uses it now.
        public var inUse: Bool?
        /// What it lacks, one line each with how to get it (hearing, voice).
        public var missing: [String]?

        public init(
            code: String, hearable: Bool, speakable: Bool, to: [Route], from: [Route], model: Model? = nil, engine: String? = nil,
            name: String? = nil, voice: String? = nil, voiceEngine: String? = nil, inUse: Bool? = nil, missing: [String]? = nil
        ) {
            self.code = code
            self.hearable = hearable
            self.speakable = speakable
            self.to = to
            self.from = from
            self.model = model
            self.engine = engine
            self.name = name
            self.voice = voice
            self.voiceEngine = voiceEngine
            self.inUse = inUse
            self.missing = missing
        }

        enum CodingKeys: String, CodingKey {
            case code, hearable, speakable, to, from, model, engine, name, voice, missing
            case inUse = "in_use"
            case voiceEngine = "voice_engine"
        }
    }

    /// One direction between two languages Parley knows offline (or a speaker uses): the
    /// route its turns take now, or what to install.
    public struct Direction: Sendable, Codable, Equatable {
        public var source: String
        public var target: String
        /// "apertium" (its own pair), "apertium via es" (through a pivot), "bergamot" (its
        /// model), "bergamot en-pt + apertium pt-es" (each leg with its engine), "libretranslate"...;
        /// nil when nothing translates it.
        public var route: String?
        /// When `route` is nil: one line saying what to install or configure.
        public var missing: String?

        public init(source: String, target: String, route: String?, missing: String? = nil) {
            self.source = source
            self.target = target
            self.route = route
            self.missing = missing
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
    /// Every direction between the offline languages and those in use.
    public var directions: [Direction]?
    /// Debian's Apertium packages between the offline languages that are not installed.
    public var missingPackages: [String]?

    public init(languages: [Language], backends: [Backend], directions: [Direction]? = nil, missingPackages: [String]? = nil) {
        self.languages = languages
        self.backends = backends
        self.directions = directions
        self.missingPackages = missingPackages
    }

    enum CodingKeys: String, CodingKey {
        case languages, backends, directions
        case missingPackages = "missing_packages"
    }
}

extension EventType {
    /// A stored turn changed (`retry` translated it): `data` is the turn as it now stands.
    public static let turnUpdated = "turn_updated"
}
