/// Spanish opens a question with ¿ and an exclamation with ¡. A translation that leaves them
/// out (Bergamot through Portuguese, Apertium from English, a server) gets them at the start
/// of the sentence: "Dónde está la estación?" becomes "¿Dónde está la estación?". A sentence
/// that has its opening mark already is left as it is; one where the question is only its tail
/// ("Juan, vienes?") gets the mark at the sentence's start, which a reader still follows.
public enum OpeningMarks {
    /// The languages whose translations get the marks.
    public static let languages: Set<String> = ["es"]

    /// `text` with each question and exclamation opened, when `language` writes them.
    public static func added(to text: String, language: String) -> String {
        guard languages.contains(language), text.contains(where: { $0 == "?" || $0 == "!" }) else { return text }
        var result = ""
        var sentence = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            sentence.append(character)
            index = text.index(after: index)
            guard Self.ends.contains(character) else { continue }
            // The sentence's closing marks run together ("?!", "...").
            while index < text.endIndex, Self.ends.contains(text[index]) {
                sentence.append(text[index])
                index = text.index(after: index)
            }
            result += opened(sentence)
            sentence = ""
        }
        return result + sentence
    }

    private static let ends: Set<Character> = [".", "?", "!", "…"]
    private static let openers: [Character: Character] = ["?": "¿", "!": "¡"]

    /// One sentence, its closing marks last: opened at its first word when it closes with ? or !.
    private static func opened(_ sentence: String) -> String {
        guard let close = sentence.last(where: { openers[$0] != nil }), let opener = openers[close],
            !sentence.contains(opener), let first = sentence.firstIndex(where: { $0.isLetter || $0.isNumber })
        else { return sentence }
        // Both marks in "?!": both open, mirrored ("¡¿…?!").
        var marks = String(opener)
        if let other = sentence.reversed().prefix(while: { ends.contains($0) }).first(where: { $0 != close && openers[$0] != nil }).flatMap({ openers[$0] }),
            !sentence.contains(other)
        {
            marks += String(other)
        }
        var text = sentence
        text.insert(contentsOf: marks, at: first)
        return text
    }
}
