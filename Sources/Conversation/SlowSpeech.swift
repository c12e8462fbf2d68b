import Foundation

/// A person who speaks slowly pauses inside sentences. Learners reading a sentence word by word
/// (speechocean762's Mandarin-speaking readers of English) pause 0.5-0.9 s between words: the
/// language model took such a pause for the end, their words were whole-looking ("A quarter
/// drop of water."), and the sentence became two turns, the reply cutting it. Their first
/// turns ran at 1.5-2.2 syllables a second of voice, where every other speaker's turn here ran
/// at 2.56 or more (docs/benchmarks.md, "Slow speech waits for the silence limit"). The
/// answer to such a turn waits until the pause reaches the silence limit (`TurnLogic.answer`),
/// as for words that end mid-sentence (`UnfinishedSentence`).
public enum SlowSpeech {
    /// Below this much voice, a turn is not judged by its pace: a word or two ("Yes.", "Okay,
    /// sure.") give too few syllables for a pace, and a short answer waits for nothing.
    public static let minimumVoiceMs = 1_500

    /// The last letter of the Latin script's blocks (Latin Extended-B): words in another script
    /// (Cyrillic, Greek, CJK) have no vowels to count and are not judged.
    static let lastLatinLetter: Unicode.Scalar = "\u{024F}"

    /// About how many syllables `text` has: its runs of vowels (accents folded), and a digit
    /// for each digit ("1813": 4; engines write numbers as digits). Close enough in English,
    /// Spanish, French, Portuguese and Italian to tell a reader's 1.5 from a speaker's 4.
    public static func syllables(in text: String) -> Int {
        var count = 0
        var inVowels = false
        for character in text.folding(options: .diacriticInsensitive, locale: nil).lowercased() {
            if character.isNumber {
                count += 1
                inVowels = false
            } else if "aeiouy".contains(character) {
                if !inVowels { count += 1 }
                inVowels = true
            } else {
                inVowels = false
            }
        }
        return count
    }

    /// Whether `text`, heard over `voiceMs` of voice (from its first voice to its last), is
    /// spoken at fewer than `syllablesPerSecond` (0: no turn is). Words in a script other than
    /// Latin are not judged.
    public static func isSlow(_ text: String, voiceMs: Int, below syllablesPerSecond: Double) -> Bool {
        guard syllablesPerSecond > 0, voiceMs >= minimumVoiceMs,
            !text.unicodeScalars.contains(where: { $0.properties.isAlphabetic && $0 > lastLatinLetter })
        else { return false }
        return Double(syllables(in: text)) * 1000 / Double(voiceMs) < syllablesPerSecond
    }
}
