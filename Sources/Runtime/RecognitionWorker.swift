import Foundation
import Logging
import ParleyAudio
import ParleyControl
import ParleyConversation
import ParleyCore
import ParleyProtocol
import ParleyRecognition

/// Where a pause is: `through` is the capture sample the audio fed so far reaches, the last
/// `pause` samples of which are silence.
struct JudgeRequest: Sendable {
    var through: SampleTime
    var pause: Int
}

/// Feeds the recognizers of one decoder (a lane), on a queue of its own.
///
/// Commands arrive through `inbox` in the order the conversation decided them (opens, audio,
/// finishes and cancels are queued under the runtime's lock), so the decoder always sees an
/// utterance's audio between its start and its finish, whichever thread decided what.
actor RecognitionWorker {
    enum Command: Sendable {
        /// Load a language's model now, so its first turn is fast.
        case warm(language: String)
        case start(language: String)
        /// The person went on after the end of the utterance was decided: open the utterance
        /// again, to be fed the audio since that end, its words so far carried on from the
        /// last finish (partials, judgements and the next finish hold them first).
        case resume(language: String)
        /// More audio; `partials`: this lane's words so far are published (the expected speaker's),
        /// nil: they are not. `judge`: a pause is on; after this audio, judge whether the words
        /// before the pause end the sentence and hand it to `judged`.
        case feed([Int16], speaker: Speaker, language: String, partials: Partials?, judge: JudgeRequest?)
        /// Finish the utterance and hand the hypothesis to `reply` (an empty one if the language
        /// cannot be heard or the decoder failed).
        case finish(language: String?, reply: @Sendable (Recognition) -> Void)
        case cancel(language: String)
        /// Log what recognition cost, then end.
        case close
    }

    /// Whose words the published partials are: the speaker's (`decided`), or the expected
    /// speaker's guess while auto mode has not decided who speaks (`guessed`).
    enum Partials: Sendable {
        case decided, guessed
    }

    private let executor = QueueExecutor(label: "parley.recognition")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    nonisolated let inbox: AsyncStream<Command>.Continuation
    private let commands: AsyncStream<Command>
    /// Makes a recognizer for a language, which this lane then owns (`owned`).
    private let makeRecognizer: @Sendable (String) -> sending (any SpeechRecognizer)?
    /// This lane's recognizers, one per language, made on first use.
    private var owned: [String: any SpeechRecognizer] = [:]
    private let events: EventBus
    private let logger: Logger
    private let report: @Sendable (String) -> Void
    /// Told the recognizer's view of a pause: the language, the sample the audio reached, and
    /// how likely the words so far end the sentence (nil: no words, or it cannot tell).
    private let judged: @Sendable (String, SampleTime, SentenceEnd?) -> Void

    /// What a language's utterance heard: its words at its finish, and its last judgement of a
    /// pause (which stands, once resumed, while the words since have none: a sound that is not
    /// words yet).
    private struct Heard {
        var words: Recognition?
        var judgement: SentenceEnd?
    }

    /// Per language, what the utterance being heard (or finished last) heard so far, and what an
    /// utterance resumed after its finish carries on (`resume`).
    private var heard: [String: Heard] = [:]
    private var carried: [String: Heard] = [:]

    // Partial hypotheses.
    private var samplesSincePartial = 0
    private var lastPartial: String?
    /// CPU the recognizer used, and the speech it was given.
    private var cpu: Duration = .zero
    private var recognizedSamples = 0

    /// How much audio passes between two `partial` events (about 200 ms).
    static let partialInterval = captureSampleRate / 5

    init(
        recognizer: @escaping @Sendable (String) -> sending (any SpeechRecognizer)?, events: EventBus, logger: Logger,
        report: @escaping @Sendable (String) -> Void,
        judged: @escaping @Sendable (String, SampleTime, SentenceEnd?) -> Void = { _, _, _ in }
    ) {
        (commands, inbox) = AsyncStream.makeStream()
        self.makeRecognizer = recognizer
        self.events = events
        self.logger = logger
        self.report = report
        self.judged = judged
    }

    /// Performs commands until `close`.
    func run() async {
        for await command in commands {
            switch command {
            case .warm(let language):
                _ = recognizer(language)
            case .start(let language), .resume(let language):
                samplesSincePartial = 0
                lastPartial = nil
                let resumed = if case .resume = command { true } else { false }
                carried[language] = resumed ? heard[language] : nil
                heard[language] = nil
                do {
                    try recognizer(language)?.startUtterance()
                } catch {
                    report("recognition failed: \(error)")
                }
            case .feed(let audio, let speaker, let language, let partials, let judge):
                guard let recognizer = recognizer(language) else {
                    if let judge { judged(language, judge.through, nil) }
                    continue
                }
                do {
                    try measuringCPU { () throws(RecognizerError) in try recognizer.feed(audio) }
                    recognizedSamples += audio.count
                    if let partials {
                        publishPartial(from: recognizer, speaker: speaker, language: language, decided: partials == .decided, fed: audio.count)
                    }
                } catch {
                    report("recognition failed: \(error)")
                }
                if let judge {
                    let end = carriedOn(measuringCPU { recognizer.sentenceEnd(pause: judge.pause) }, language)
                    heard[language, default: Heard()].judgement = end
                    judged(language, judge.through, end)
                }
            case .finish(let language, let reply):
                var recognition = Recognition(text: "", confidence: nil)
                if let language, let recognizer = recognizer(language) {
                    do {
                        recognition = try measuringCPU { () throws(RecognizerError) in try recognizer.finishUtterance() }
                    } catch {
                        report("recognition failed: \(error)")
                    }
                }
                if let language {
                    if let before = carried.removeValue(forKey: language)?.words { recognition = before.followed(by: recognition) }
                    heard[language, default: Heard()].words = recognition
                }
                reply(recognition)
            case .cancel(let language):
                carried[language] = nil
                heard[language] = nil
                recognizer(language)?.cancelUtterance()
            case .close:
                logCost()
                inbox.finish()
            }
        }
    }

    /// This lane's recognizer for `language`, made (and its model loaded) on first use; nil when
    /// the language cannot be heard.
    private func recognizer(_ language: String) -> (any SpeechRecognizer)? {
        if let mine = owned[language] { return mine }
        guard let made = makeRecognizer(language) else { return nil }
        owned[language] = made
        return made
    }

    /// The words so far, when they changed, every `partialInterval`.
    private func publishPartial(from recognizer: any SpeechRecognizer, speaker: Speaker, language: String, decided: Bool, fed: Int) {
        samplesSincePartial += fed
        guard samplesSincePartial >= Self.partialInterval, events.hasSubscribers else { return }
        samplesSincePartial = 0
        let words = carriedOn(recognizer.partial() ?? "", language)
        guard !words.isEmpty, words != lastPartial else { return }
        lastPartial = words
        events.publish(EventType.partial, TextEvent(speaker: speaker.rawValue, language: language, text: words, decided: decided))
    }

    /// The words heard since the utterance was resumed, after those it carries on.
    private func carriedOn(_ words: String, _ language: String) -> String {
        guard let before = carried[language]?.words?.text else { return words }
        return [before, words].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// A judgement of the words since the utterance was resumed, as of the whole: their text and
    /// count after those it carries on (the probability is the last words', as before); while
    /// they have none, the judgement carried on.
    private func carriedOn(_ end: SentenceEnd?, _ language: String) -> SentenceEnd? {
        guard let before = carried[language]?.words, !before.text.isEmpty else { return end ?? carried[language]?.judgement }
        guard var end else { return carried[language]?.judgement }
        end.text = carriedOn(end.text.trimmingCharacters(in: .whitespaces), language)
        end.words += before.words.isEmpty ? before.text.split(separator: " ").count : before.words.count
        return end
    }

    private func logCost() {
        guard recognizedSamples > 0 else { return }
        let seconds = Double(cpu.components.seconds) + Double(cpu.components.attoseconds) / 1e18
        let speech = Double(recognizedSamples) / Double(captureSampleRate)
        logger.notice(
            "recognition used \(String(format: "%.3f", seconds)) s of CPU for \(String(format: "%.2f", speech)) s of speech (\(String(format: "%.3f", seconds / speech)) of a core)")
    }

    /// Runs `work`, adding the CPU time this thread spent to `cpu`.
    private func measuringCPU<T, E: Error>(_ work: () throws(E) -> T) throws(E) -> T {
        func now() -> Duration {
            var time = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }
        let start = now()
        defer { cpu += now() - start }
        return try work()
    }
}
