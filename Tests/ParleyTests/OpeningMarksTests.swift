import Testing
@testable import ParleyTranslation

@Suite("Spanish's opening ¿ and ¡ on translations")
struct OpeningMarksTests {
    @Test(arguments: [
        ("Dónde está la estación?", "¿Dónde está la estación?"),
        ("Hola. Qué tal estás?", "Hola. ¿Qué tal estás?"),
        ("Qué bonito! Vienes mañana? Sí.", "¡Qué bonito! ¿Vienes mañana? Sí."),
        ("\"A qué hora sale el tren?\"", "\"¿A qué hora sale el tren?\""),
        ("¿Dónde está? Aquí.", "¿Dónde está? Aquí."),
        ("Juan, ¿vienes?", "Juan, ¿vienes?"),
        ("En serio?!", "¡¿En serio?!"),
        ("La casa es roja.", "La casa es roja."),
        ("Y tú?", "¿Y tú?"),
        ("3 euros?", "¿3 euros?"),
        ("?", "?"),
        ("Sin final", "Sin final"),
    ])
    func eachQuestionAndExclamationIsOpened(translation: String, expected: String) {
        #expect(OpeningMarks.added(to: translation, language: "es") == expected)
    }

    @Test func otherLanguagesAreLeftAsTheyAre() {
        #expect(OpeningMarks.added(to: "Where is the station?", language: "en") == "Where is the station?")
        #expect(OpeningMarks.added(to: "Onde fica a estação?", language: "pt") == "Onde fica a estação?")
    }

    @Test func aChainAddsThemToASpanishTranslation() async throws {
        let chain = TranslatorChain([.init(name: "fixed", translator: FixedTranslator("Dónde está la estación?"))], cacheCapacity: 0)
        #expect(try await chain.translate("Where is the station?", from: "en", to: "es") == "¿Dónde está la estación?")
    }
}

/// Answers every sentence with one fixed translation.
private struct FixedTranslator: Translator {
    let answer: String
    init(_ answer: String) { self.answer = answer }
    func translate(_ text: String, from source: String, to target: String) async throws -> String { answer }
    func supports(_ pair: LanguagePair) -> Bool { true }
    func prepare(_ pair: LanguagePair) async throws {}
}
