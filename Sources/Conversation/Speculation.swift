/// A speculation's life once started, as pure as the turn's logic: its id, the words it
/// translates, the samples its accurate pass hears, whether it serves a turn's words, and when
/// it is dropped. The runtime keeps only what it performs with (the translation task, the
/// speech worker's audio), keyed by the id (`Sources/Runtime/SpeculationWork.swift`).
///
/// A speculation is dropped when speech resumes (`hear`), the utterance is cancelled or a new
/// one starts (`absorb`), the turn ends with other words or is not translated (`recognized`),
/// or a typed turn comes (`typed`); a new speculation replaces the one before.

import Foundation

/// Words a speculation may translate: the hypothesis so far, its language and the target.
public struct SpeculationCandidate: Sendable, Equatable {
    public var text: String
    public var language: String
    public var target: String
}

/// The speculation to start now (see `TurnLogic.speculationStart`).
public enum SpeculationStart: Sendable, Equatable {
    /// The accurate pass hears the utterance's first `samples`, at a pause of `pause` samples;
    /// `candidate` is what the streaming lanes heard.
    case accuratePass(SpeculationCandidate, samples: Int, pause: Int)
    /// The candidate's words are translated and their audio made.
    case translate(SpeculationCandidate)
}

/// Work done while a pause runs: the words heard so far, translated and synthesized before
/// anyone knows whether the person has finished.
public struct Speculation: Sendable, Equatable {
    /// Its number (1 for the first): what the runtime keeps its work under.
    public let id: Int
    /// The words it translates: the candidate's, or the accurate pass's once heard (nil while
    /// the pass hears them).
    public internal(set) var words: SpeculationCandidate?
    /// For a speculation on the accurate pass: whether the pass gave its answer (words or none).
    public internal(set) var answered = false
    /// For a speculation on the accurate pass: how many samples of the utterance it hears. The
    /// same pause judged again (the same samples) starts nothing new.
    public let heardSamples: Int?

    /// Whether this speculation translates `candidate`'s text, from its language into its target.
    public func serves(_ candidate: SpeculationCandidate) -> Bool {
        words == candidate
    }
}

extension TurnLogic {
    /// A speculation just started (`speculate`).
    public struct Speculating: Sendable, Equatable {
        public var start: SpeculationStart
        /// The new speculation's id.
        public var id: Int
    }

    /// Starts the speculation `speculationStart` gives on the running one (nothing when it
    /// hears the same samples or serves the same words); the running one is dropped for it.
    public mutating func speculate(accurately: (TurnLanguages) -> Bool, canSpeak: (String) -> Bool) -> Speculating? {
        let running = speculation
        guard
            let start = speculationStart(
                accurately: accurately, canSpeak: canSpeak, heardSamples: running?.heardSamples,
                serves: { running?.serves($0) == true })
        else { return nil }
        speculationCount += 1
        switch start {
        case .accuratePass(_, let samples, _):
            speculation = Speculation(id: speculationCount, words: nil, heardSamples: samples)
        case .translate(let candidate):
            speculation = Speculation(id: speculationCount, words: candidate, heardSamples: nil)
        }
        return Speculating(start: start, id: speculationCount)
    }

    /// The accurate pass of speculation `id` heard `text` in `language`, to be translated into
    /// `target`: the words to translate, now the speculation's; nil when the speculation was
    /// dropped meanwhile, the pass heard no words, or the target has no voice (`canSpeak`).
    public mutating func speculationHeard(id: Int, _ text: String, language: String, target: String, canSpeak: Bool) -> SpeculationCandidate? {
        let words = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard speculation?.id == id else { return nil }
        speculation?.answered = true
        guard !words.isEmpty, canSpeak else { return nil }
        let candidate = SpeculationCandidate(text: words, language: language, target: target)
        speculation?.words = candidate
        return candidate
    }

    /// Whether speculation `id` still runs (its audio is wanted).
    public func isSpeculating(_ id: Int) -> Bool {
        speculation?.id == id
    }

    /// The id of the speculation that translated `text` from `language` into `target`, if any.
    public func speculation(serving text: String, from language: String, to target: String) -> Int? {
        guard let speculation, speculation.serves(SpeculationCandidate(text: text, language: language, target: target)) else { return nil }
        return speculation.id
    }

    /// Forgets the running speculation. Returns whether one ran.
    @discardableResult
    public mutating func dropSpeculation() -> Bool {
        defer { speculation = nil }
        return speculation != nil
    }
}
