/// "Sorry, I could not translate that", in the speaker's own language: spoken when every
/// translation backend failed, so the speaker knows the listener heard nothing.
enum UntranslatedNotice {
    static let texts: [String: String] = [
        "en": "Sorry, I could not translate that.",
        "es": "Lo siento, no he podido traducir eso.",
        "fr": "Désolé, je n'ai pas pu traduire cela.",
        "de": "Entschuldigung, das konnte ich nicht übersetzen.",
        "it": "Mi dispiace, non sono riuscito a tradurlo.",
        "pt": "Desculpe, não consegui traduzir isso.",
        "ca": "Ho sento, no ho he pogut traduir.",
        "gl": "Síntoo, non puiden traducir iso.",
        "eo": "Pardonu, mi ne povis traduki tion.",
    ]

    static func text(for language: String) -> String {
        texts[language] ?? texts["en", default: "Sorry, I could not translate that."]
    }
}
