import Foundation

/// Words that say a sentence is not over. The language model ends a turn at a short pause when
/// the words it heard look like a whole sentence; the accurate words can show it was wrong: a
/// sentence does not end on "the", "de" or "que", and a speaker who paused on them (a thinking
/// pause) goes on. The turn's answer then waits until the pause reaches the silence limit
/// (`TurnLogic.answer`), and the person who goes on within it goes on with the same utterance.
///
/// fleurs-es-009 ("…una cultura específica de | la que forma parte…"): the language model ended
/// it at the thinking pause, and the reply talked over the rest (docs/benchmarks.md, "Words that
/// say the sentence goes on").
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

    /// Whether `text`, the words of a turn in `language`, ends on a word no sentence ends on
    /// (whatever stop follows it), or on a comma, a semicolon or a colon: the person was most
    /// likely not done. A question or an exclamation mark closes it whatever the word.
    public static func endsMidSentence(_ text: String, language: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let last = trimmed.last, last != "?", last != "!" else { return false }
        if last == "," || last == ";" || last == ":" { return true }
        guard let words = danglingWords[language] else { return false }
        let word = trimmed.split(whereSeparator: { $0.isWhitespace }).last.map {
            String($0).trimmingCharacters(in: .punctuationCharacters).lowercased()
        }
        return word.map(words.contains) ?? false
    }
}
