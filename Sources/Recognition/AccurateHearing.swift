/// The accurate engines a daemon has, and which one hears each language.
///
/// Engines are tried in the order given: a language goes to the first engine that hears it
/// (Moonshine for English, because it is the fastest), and to the next when that one fails.
/// Language detection is asked of the first engine that detects (Whisper).
public final class AccurateHearing: Sendable {
    public let engines: [any UtteranceTranscriber]

    public init(engines: [any UtteranceTranscriber]) {
        self.engines = engines
    }

    /// The engines that hear `language`, best first, leaving out those set aside for now (a
    /// worker that would not start); in a `noisy` room, those that hold up in noise come first
    /// (Whisper: in babble and kitchen noise it gets about half the words Moonshine tiny gets
    /// wrong, docs/benchmarks.md).
    public func engines(for language: String, noisy: Bool = false) -> [any UtteranceTranscriber] {
        let hearing = engines.filter { $0.hears(language) && $0.isAvailable }
        return noisy ? hearing.filter(\.holdsUpInNoise) + hearing.filter { !$0.holdsUpInNoise } : hearing
    }

    /// Asks every engine to stop the utterance it hears now (`UtteranceTranscriber.stop`).
    public func stop() {
        for engine in engines { engine.stop() }
    }

    /// The engine that detects the language of an utterance, if any.
    public var detector: (any UtteranceTranscriber)? {
        engines.first { $0.detectsLanguage && $0.isAvailable }
    }

    /// The name of the engine that hears `language` first (nil: only the streaming recognizer).
    public func name(for language: String) -> String? {  // in a quiet room
        engines(for: language).first?.name
    }

    /// How much of the room before the voice Moonshine hears (`roomBeforeVoiceMs`). The
    /// endpointer's pre-roll (`preroll_ms`, 500) is for the streaming lanes; Moonshine given all
    /// of it made words of the room's noise before the first word ("You know, For the first
    /// time…") on 28-30 of 49 English recordings with pink noise at -55 to -35 dBFS, and on 5-10
    /// of 49 given 200 ms (WER 35.1-46.3 % against 28.9-35.6 %: `bench/accurate-lead.py`,
    /// docs/benchmarks.md, "Openings nobody said"). Those were made with libmoonshine's own voice
    /// detection on; heard whole (`MoonshineTranscriber.options`), it made up openings on 2-3 of
    /// 49 given 500 ms and 1-2 given 200 ms, at 0.5-1.3 points less WER with 200 ms (docs/benchmarks.md,
    /// "Moonshine hears an utterance whole"), so 200 ms stays. Whisper keeps the whole pre-roll:
    /// given 200 ms, it heard as many words right on Spanish, and one fewer on Portuguese.
    public static let moonshineRoomBeforeVoiceMs = 200

    /// The detection to ask for between `candidates`: it stops at the language when another
    /// engine hears that language first (Moonshine for English), so no time goes on words that
    /// are not used.
    public func detection(between candidates: [String], noisy: Bool = false) -> TranscriptionRequest? {
        guard let detector else { return nil }
        let elsewhere = candidates.filter { language in engines(for: language, noisy: noisy).first.map { $0 !== detector } ?? true }
        return TranscriptionRequest(language: nil, candidates: candidates, detectOnly: Set(elsewhere))
    }
}

/// The languages Whisper hears (its tokenizer's language tokens, two-letter codes only, as
/// Parley names languages).
public let whisperLanguages: Set<String> = Set(
    """
    en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk te \
    fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps \
    tk nn mt sa lb my bo tl mg as tt ln ha ba jw su
    """.split(separator: " ").map(String.init))
