/// Which language explains an utterance best, when it can be told.
public enum LanguageDecision {
    /// The language whose recognition scored best, if the utterance was long enough
    /// (`minimumFrames`) and the best beat the runner-up by `margin`; nil when it cannot be told
    /// (the caller falls back to turn order).
    public static func decide(_ candidates: [(language: String, recognition: Recognition)], minimumFrames: Int, margin: Double) -> String? {
        let scored = candidates.compactMap { candidate in
            candidate.recognition.score.map { (candidate.language, $0, candidate.recognition.frames) }
        }.sorted { $0.1 > $1.1 }
        guard scored.count >= 2, let best = scored.first, best.2 >= minimumFrames, best.1 - scored[1].1 >= margin else { return nil }
        return best.0
    }
}
