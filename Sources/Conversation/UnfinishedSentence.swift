import Foundation

/// Words that say a sentence is not over. The language model ends a turn at a short pause when
/// the words it heard look like a whole sentence; the accurate words can show it was wrong: a
/// sentence does not end on "the", "de" or "que", nor on a comma, nor (from an accurate engine)
/// without a stop, and a speaker who paused there (a thinking pause) goes on. The turn's answer
/// then waits until the pause reaches the silence limit (`TurnLogic.answer`), and the person who
/// goes on within it goes on with the same utterance.
///
/// fleurs-es-009 ("…una cultura específica de | la que forma parte…"): the language model ended
/// it at the thinking pause, and the reply talked over the rest (docs/benchmarks.md, "Every word
/// kept: words that end mid-sentence, and voices taken for the background").
public enum UnfinishedSentence {
    /// Per language, words no sentence ends on: articles, most prepositions and conjunctions,
    /// possessives before their noun. Kept to words that cannot end one, written as Whisper and
    /// Moonshine write them (an interrogative "qué", "quoi", "quê" is accented and not here).
    public static let danglingWords: [String: Set<String>] = [
        "en": ["the", "a", "an", "and", "or", "but", "because", "of", "if", "than", "my", "your", "our", "their"],
        "es": [
            "de", "del", "la", "el", "los", "las", "un", "una", "y", "o", "que", "porque", "en", "con", "por", "para", "al", "si", "pero",
            "como", "su", "sus", "mi", "mis", "tu", "tus", "e", "u",
        ],
        "fr": ["le", "la", "les", "un", "une", "de", "du", "des", "et", "ou", "mais", "que", "au", "aux", "pour", "dans", "sur", "mon", "ma", "mes", "ton", "ta", "tes", "son", "sa", "ses"],
        "pt": ["o", "os", "as", "um", "uma", "de", "do", "da", "dos", "das", "e", "ou", "mas", "que", "em", "no", "na", "nos", "nas", "com", "para", "por", "porque", "meu", "minha"],
        "it": ["il", "lo", "gli", "un", "una", "di", "del", "della", "dei", "delle", "e", "o", "ma", "che", "in", "con", "per", "perché", "mio", "mia"],
        "ca": ["el", "la", "els", "les", "un", "una", "de", "del", "dels", "i", "o", "però", "que", "amb", "per", "perquè", "en"],
    ]

    /// Per language, words a sentence can end on but seldom does, where a speaker often stops to
    /// think: the infinitive's "to", a negation, an auxiliary, a preposition. The language model's
    /// end stands on them; the accurate words' full stop alone does not (`endsWithoutDoubt`):
    /// Moonshine wrote "He was not.", "…had then leisure to." and "He might even have." at
    /// thinking pauses (docs/benchmarks.md, "A sentence the accurate words end").
    public static let doubtfulLastWords: [String: Set<String>] = [
        "en": [
            "to", "not", "no", "have", "has", "had", "be", "been", "is", "are", "was", "were", "am", "do", "does", "did", "will", "would",
            "can", "could", "should", "must", "might", "may", "shall", "in", "on", "at", "for", "with", "from", "by", "about", "into",
            "as", "so", "that", "this", "these", "those", "very", "more", "most", "some", "any", "his", "her", "its", "which", "who",
            "whose", "when", "where", "then", "just", "also", "like", "even", "still",
        ],
        "es": [
            "a", "ante", "bajo", "desde", "entre", "hacia", "hasta", "sin", "sobre", "tras", "muy", "más", "es", "son", "era", "fue",
            "ha", "han", "había", "se", "lo", "le", "les", "me", "te", "nos", "cuando", "donde", "cual", "quien", "no",
        ],
    ]

    /// Whether `text`, an accurate engine's words in `language`, end a sentence beyond doubt: a
    /// full stop, a question or an exclamation mark (`ending` nil, punctuated), after a word
    /// neither dangling nor doubtful (`doubtfulLastWords`).
    public static func endsWithoutDoubt(_ text: String, language: String) -> Bool {
        guard ending(of: text, language: language, punctuated: true) == nil, let last = lastWord(of: text), !last.isEmpty else { return false }
        return doubtfulLastWords[language]?.contains(last) != true
    }

    /// What the end of a turn's words says about the sentence.
    public enum Ending: Sendable, Equatable {
        /// A word no sentence ends on (`danglingWords`), whatever stop follows it: the person
        /// is all but sure to go on.
        case danglingWord
        /// A comma, a semicolon or a colon: the person may go on. The recognizers also wrote one
        /// at the end of a whole sentence cut 80 ms into its pause (Moonshine ended 6 of 49
        /// whole English recordings with a comma, and 13 of 29 live) until they heard silence
        /// after it (`MoonshineTranscriber.silenceAfterSeconds`; Whisper's worker adds 2 s):
        /// live, one whole sentence of 40 now ends on one. A reader's pause at a comma is as long
        /// as a thinking pause ("He was not an ill-disposed young man, | unless…"; es-0029's
        /// "…ligeramente turbios, | por la humedad", answered at 800 ms of a second's pause while
        /// a comma waited half the silence limit; docs/benchmarks.md, "Spanish thinking
        /// pauses: words without a stop, and a comma, wait for the silence limit").
        case clauseMark
        /// Words an engine that writes stops (Whisper, Moonshine) left without one, or trailing
        /// off ("...", a dash): it writes a full stop after a whole sentence heard with its
        /// pause, and none where the speaker stopped mid-sentence. Spanish recordings with a
        /// thinking pause inserted after a word where the sentence cannot end: all 11 of 30
        /// that became two turns had first turns without a stop ("Duval que está casado y
        /// tiene", "…ligeramente turbios", "…extremos en contra..."); 1 of 25 whole Spanish
        /// sentences had none (docs/benchmarks.md, "Spanish thinking pauses: words without a
        /// stop, and a comma, wait for the silence limit").
        case noStop
    }

    /// How `text`, the words of a turn in `language`, ends, when it ends mid-sentence (nil: it
    /// may end a sentence). A question or an exclamation mark closes it whatever the word.
    /// `punctuated`: the words come from an engine that writes stops (an accurate engine), so
    /// words without one (`noStop`) are a sentence not over; the streaming recognizer writes
    /// none.
    public static func ending(of text: String, language: String, punctuated: Bool = false) -> Ending? {
        // A closing quote or bracket after the mark does not hide it.
        let trimmed = text.trimmingCharacters(in: quotesAndSpace)
        guard let last = trimmed.last, last != "?", last != "!" else { return nil }
        let word = lastWord(of: trimmed)
        if let word, danglingWords[language]?.contains(word) == true { return .danglingWord }
        if last == "," || last == ";" || last == ":" { return .clauseMark }
        if punctuated && (last.isLetter || last.isNumber || "…—–-".contains(last) || trimmed.hasSuffix("..")) { return .noStop }
        return nil
    }

    /// The last word of `text`, lowercased, without the marks around it (nil: no word).
    static func lastWord(of text: String) -> String? {
        text.split(whereSeparator: { $0.isWhitespace }).last.map {
            String($0).trimmingCharacters(in: .punctuationCharacters.union(quotesAndSpace)).lowercased()
        }
    }

    /// Space, quotes and closing brackets: what may follow a sentence's mark.
    static let quotesAndSpace = CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "\"'»”’)]"))
}
