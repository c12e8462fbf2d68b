import Foundation
import ParleyAudio
import ParleyRecognition
import ParleySynthesis
import ParleyTranslation
import Synchronization

/// A loudspeaker that keeps what it is given. `hold()` makes writes wait until `release()`, so
/// a test can act while Parley is speaking (a stop, an echo, a pause).
public final class RecordingSpeaker: Sendable {
    private struct State {
        var played: [Int16] = []
        var held = false
        var writes = 0
        var discards = 0
        var renewals = 0
        var closed = false
    }

    private let state = Gate(State())
    public let sampleRate: Int

    public init(sampleRate: Int = 22_050) {
        self.sampleRate = sampleRate
    }

    /// The playback device to give the conversation.
    public func playback() -> any AudioPlayback { RecordingPlayback(self) }

    public var played: [Int16] { state.withLock { $0.played } }
    public var writes: Int { state.withLock { $0.writes } }
    public var discards: Int { state.withLock { $0.discards } }
    /// How often the runtime asked for a fresh device (the sound system came back).
    public var renewals: Int { state.withLock { $0.renewals } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    public func hold() { state.withLock { $0.held = true } }

    public func release() { state.withLock { $0.held = false } }

    fileprivate func write(_ samples: [Int16]) {
        state.wait { state -> Void? in
            guard !state.held else { return nil }
            state.played += samples
            state.writes += 1
            return ()
        }
    }

    fileprivate func discard() { state.withLock { $0.discards += 1 } }
    fileprivate func renew() { state.withLock { $0.renewals += 1 } }
    fileprivate func close() { state.withLock { $0.closed = true } }
}

final class RecordingPlayback: AudioPlayback {
    private let speaker: RecordingSpeaker
    var sampleRate: Int { speaker.sampleRate }

    init(_ speaker: RecordingSpeaker) { self.speaker = speaker }

    func write(_ samples: [Int16]) throws(AudioError) { speaker.write(samples) }
    func drain() throws(AudioError) {}
    func discard() { speaker.discard() }
    func close() { speaker.close() }
    func renew() { speaker.renew() }
}

/// A synthesizer that "speaks" silence: `samplesPerCharacter` samples for each character of the
/// text, in chunks of `chunk` samples. It has a voice for every language in `languages`, and
/// keeps the texts it was asked to synthesize.
public final class SilentSynthesizer: SpeechSynthesizer, Sendable {
    public let sampleRate: Int
    public let languages: Set<String>
    private let samplesPerCharacter: Int
    private let chunk: Int
    private let made = Mutex<[String]>([])

    /// The texts synthesized so far, in order (whether played or made ahead).
    public var texts: [String] { made.withLock { $0 } }

    public init(sampleRate: Int = 22_050, languages: Set<String> = ["en", "es"], samplesPerCharacter: Int = 1_000, chunk: Int = 1_100) {
        self.sampleRate = sampleRate
        self.languages = languages
        self.samplesPerCharacter = samplesPerCharacter
        self.chunk = chunk
    }

    public func hasVoice(for language: String) -> Bool { languages.contains(language) }

    @discardableResult
    public func synthesize(_ text: String, language: String, chunk deliver: ([Int16]) throws -> Void) throws(SynthesisError) -> Int {
        guard hasVoice(for: language) else { throw SynthesisError("no voice for \(language)") }
        made.withLock { $0.append(text) }
        let total = text.count * samplesPerCharacter
        var produced = 0
        do {
            while produced < total {
                let count = min(chunk, total - produced)
                try deliver([Int16](repeating: 0, count: count))
                produced += count
            }
        } catch {
            throw SynthesisError("stopped: \(error)")
        }
        return produced
    }

    public func ipa(_ text: String, language: String) -> String? { "[\(language)] \(text)" }
}

/// What a `ScriptedRecognizer` will answer, and what it was asked: shared by the test and the
/// recognizers it makes (one per language).
public final class RecognizerScript: RecognizerLanes {
    public enum Call: Sendable, Equatable {
        case start(String), finish(String), cancel(String)
    }

    private struct State {
        var answers: [String: [Recognition]] = [:]
        var calls: [Call] = []
        var fed: [String: Int] = [:]
        var sentenceEnds: [String: SentenceEnd] = [:]
        var judged: [String: Int] = [:]
        var heldJudgements: Set<String> = []
        var partials: [String: String] = [:]
    }

    private let state = Gate(State())
    /// The languages that have a "model".
    public let languages: Set<String>

    public init(languages: Set<String> = ["en", "es"]) {
        self.languages = languages
    }

    /// The next utterance in `language` is recognized as `text`, with `score` saying how well
    /// the language explains it (auto mode compares the languages' scores) and `words` each
    /// word's confidence.
    public func willHear(
        _ text: String, in language: String, confidence: Double? = 0.9, words: [RecognizedWord] = [], score: Double? = nil, frames: Int = 100
    ) {
        state.withLock {
            $0.answers[language, default: []].append(Recognition(text: text, confidence: confidence, words: words, score: score, frames: frames))
        }
    }

    /// From now on, `language`'s words so far (its partial hypothesis) are `text` (nil, the
    /// default: it has none, and no `partial` event is published).
    public func liveWords(_ text: String?, in language: String) {
        state.withLock { $0.partials[language] = text }
    }

    /// From now on, a pause in `language` is judged as `end` (nil: the recognizer cannot tell).
    public func judgeEnds(_ end: SentenceEnd?, in language: String) {
        state.withLock { $0.sentenceEnds[language] = end }
    }

    /// Judging a pause in `language` waits until `releaseJudgements()`: that language's lane
    /// falls behind the other's, as a slower decoder does live.
    public func holdJudgements(in language: String) { state.withLock { _ = $0.heldJudgements.insert(language) } }

    public func releaseJudgements() { state.withLock { $0.heldJudgements = [] } }

    /// How many pauses were judged in `language` so far.
    public func judgements(in language: String) -> Int { state.withLock { $0.judged[language, default: 0] } }

    public var calls: [Call] { state.withLock { $0.calls } }
    /// Samples fed, per language.
    public func fed(_ language: String) -> Int { state.withLock { $0.fed[language, default: 0] } }

    /// A recognizer for a language with a "model" (the recognizers keep no state of their own:
    /// it is all here).
    public func recognizer(for language: String) -> sending (any SpeechRecognizer)? {
        languages.contains(language) ? ScriptedRecognizer(language: language, script: self) : nil
    }

    /// Every scripted language has a decoder of its own: its own lane.
    public func lane(for language: String) -> String { language }

    public func canHear(_ language: String) -> Bool { languages.contains(language) }

    fileprivate func partial(_ language: String) -> String? { state.withLock { $0.partials[language] } }
    fileprivate func record(_ call: Call) { state.withLock { $0.calls.append(call) } }
    fileprivate func feed(_ count: Int, _ language: String) { state.withLock { $0.fed[language, default: 0] += count } }
    fileprivate func sentenceEnd(_ language: String) -> SentenceEnd? {
        state.wait { state -> SentenceEnd?? in
            guard !state.heldJudgements.contains(language) else { return nil }
            state.judged[language, default: 0] += 1
            return .some(state.sentenceEnds[language])
        }
    }
    fileprivate func answer(_ language: String) -> Recognition {
        state.withLock { state in
            guard var queue = state.answers[language], !queue.isEmpty else { return Recognition(text: "", confidence: nil) }
            let next = queue.removeFirst()
            state.answers[language] = queue
            return next
        }
    }
}

/// A recognizer that answers what its script says, whatever audio it is fed.
final class ScriptedRecognizer: SpeechRecognizer {
    let language: String
    private let script: RecognizerScript

    init(language: String, script: RecognizerScript) {
        self.language = language
        self.script = script
    }

    func startUtterance() throws(RecognizerError) { script.record(.start(language)) }
    func feed(_ samples: [Int16]) throws(RecognizerError) { script.feed(samples.count, language) }
    func partial() -> String? { script.partial(language) }
    func sentenceEnd(pause: Int) -> SentenceEnd? { script.sentenceEnd(language) }
    func finishUtterance() throws(RecognizerError) -> Recognition {
        script.record(.finish(language))
        return script.answer(language)
    }
    func cancelUtterance() { script.record(.cancel(language)) }
}

/// A backend that fails transiently (a server that is down: connection refused) until told to
/// work, counting what it was asked; working, it answers `answer(text, target)` ("[target]
/// text" unless given).
public final class DownTranslator: Translator {
    private let state = Mutex((working: false, asked: [String]()))
    private let answer: @Sendable (String, String) -> String

    public init(answer: @escaping @Sendable (_ text: String, _ target: String) -> String = { "[\($1)] \($0)" }) {
        self.answer = answer
    }

    /// What it was asked, in order, working or not.
    public var asked: [String] { state.withLock { $0.asked } }
    public func work(_ working: Bool) { state.withLock { $0.working = working } }
    public func supports(_ pair: LanguagePair) -> Bool { true }
    public func prepare(_ pair: LanguagePair) async throws {}
    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        let working = state.withLock { state in
            state.asked.append(text)
            return state.working
        }
        guard working else { throw BackendError(.transient, "down: connection refused") }
        return answer(text, target)
    }
}

/// A translator that answers "[target] text", or fails for texts in `failing`. `hold()` makes
/// translations wait until `release()`.
public final class EchoTranslator: Translator {
    private struct State {
        var held = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var requests: [String] = []
    }

    private let state = Mutex(State())
    private let failing: Set<String>

    public init(failing: Set<String> = []) {
        self.failing = failing
    }

    public var requests: [String] { state.withLock { $0.requests } }

    public func hold() { state.withLock { $0.held = true } }

    public func release() {
        let waiting = state.withLock { state in
            state.held = false
            defer { state.waiting = [] }
            return state.waiting
        }
        waiting.forEach { $0.resume() }
    }

    public func supports(_ pair: LanguagePair) -> Bool { true }
    public func prepare(_ pair: LanguagePair) async throws {}

    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        await withCheckedContinuation { continuation in
            let go = state.withLock { state -> Bool in
                state.requests.append(text)
                guard state.held else { return true }
                state.waiting.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
        if failing.contains(text) { throw TranslationError("the scripted translator cannot translate \"\(text)\"") }
        return "[\(target)] \(text)"
    }
}

/// An accurate engine in memory (`ParleyRecognition.UtteranceTranscriber`): it hears the words
/// its script gives for the length of the utterance, in the language it is asked for (or the
/// first candidate), and records what it was asked. With nothing scripted, or after `fail()`,
/// it fails (the accurate pass then falls back to the next engine, or to the streaming
/// recognizer). It detects no language.
public final class ScriptedTranscriber: UtteranceTranscriber {
    public let name: String
    public let detectsLanguage = false
    public let holdsUpInNoise: Bool
    public let roomBeforeVoiceMs: Int?
    private let languages: Set<String>
    private struct State {
        var scripts: [(from: Int, words: String, confidence: Double?)] = []
        var heard: [Int] = []
        var requests: [TranscriptionRequest] = []
        var failing = false
        /// Utterances shorter than this are held (`holds(under:)`).
        var holdUnder = 0
        var holdSeconds = 60.0
        var holding = false
        var stopAsked = false
        var stops = 0
    }

    private let state = Mutex(State())
    private let stopped = DispatchSemaphore(value: 0)

    public init(name: String = "scripted", languages: Set<String> = ["en", "es"], holdsUpInNoise: Bool = false, roomBeforeVoiceMs: Int? = nil) {
        self.name = name
        self.languages = languages
        self.holdsUpInNoise = holdsUpInNoise
        self.roomBeforeVoiceMs = roomBeforeVoiceMs
    }

    /// What it hears from now on in an utterance of at least `samples` samples (the script
    /// with the largest such `samples` wins), with `confidence`.
    public func willHear(_ words: String, from samples: Int = 0, confidence: Double? = 0.9) {
        state.withLock { state in
            state.scripts.removeAll { $0.from == samples }
            state.scripts.append((samples, words, confidence))
            state.scripts.sort { $0.from < $1.from }
        }
    }

    /// Every utterance from now on fails, as an engine that crashed.
    public func fail() { state.withLock { $0.failing = true } }

    /// From now on an utterance shorter than `samples` is held, as a slow engine on a long pass:
    /// `transcribe` waits until `stop` (then throws an error that is `stopped`) or for `seconds`
    /// (then answers).
    public func holds(under samples: Int, for seconds: Double = 60) {
        state.withLock { ($0.holdUnder, $0.holdSeconds) = (samples, seconds) }
    }

    /// Whether it is holding an utterance now.
    public var isHolding: Bool { state.withLock { $0.holding } }

    /// How many utterances were stopped.
    public var stops: Int { state.withLock { $0.stops } }

    public func stop() {
        state.withLock { state in
            guard state.holding, !state.stopAsked else { return }
            state.stopAsked = true
            stopped.signal()
        }
    }

    /// How many samples each utterance it heard had, in order.
    public var heard: [Int] { state.withLock { $0.heard } }

    /// What it was asked to hear, in order.
    public var requests: [TranscriptionRequest] { state.withLock { $0.requests } }

    public func hears(_ language: String) -> Bool { languages.contains(language) }

    public func transcribe(_ samples: [Int16], _ request: TranscriptionRequest) throws(RecognizerError) -> Transcript {
        let (script, hold) = state.withLock { state in
            state.heard.append(samples.count)
            state.requests.append(request)
            state.holding = samples.count < state.holdUnder
            return (state.failing ? nil : state.scripts.last { $0.from <= samples.count }, state.holding ? state.holdSeconds : nil)
        }
        if let hold {
            let waited = stopped.wait(timeout: .now() + hold)
            let asked = state.withLock { state in
                defer { (state.holding, state.stopAsked) = (false, false) }
                if state.stopAsked { state.stops += 1 }
                return state.stopAsked
            }
            // A stop asked as the wait ran out: its signal is taken, so the next hold waits.
            if asked, waited == .timedOut { stopped.wait() }
            if asked { throw RecognizerError("\(name) stopped, as asked", stopped: true) }
        }
        guard let script else { throw RecognizerError("\(name) has nothing scripted") }
        let language = request.language ?? request.candidates.first ?? "en"
        return Transcript(text: script.words, language: language, confidence: script.confidence, engine: name)
    }
}
