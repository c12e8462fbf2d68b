/// "Please say that again", in the speaker's own language.
enum RepeatPrompt {
    static let texts: [String: String] = [
        "en": "Sorry, please say that again.",
        "es": "Perdón, ¿puede repetirlo, por favor?",
        "fr": "Pardon, pouvez-vous répéter, s'il vous plaît ?",
        "de": "Entschuldigung, bitte wiederholen Sie das.",
        "it": "Scusi, può ripetere, per favore?",
        "pt": "Desculpe, pode repetir, por favor?",
        "ca": "Perdó, pot repetir-ho, si us plau?",
        "gl": "Perdón, pode repetilo, por favor?",
        "eo": "Pardonu, bonvolu ripeti.",
    ]

    static func text(for language: String) -> String {
        texts[language] ?? texts["en", default: "Please repeat."]
    }
}

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
