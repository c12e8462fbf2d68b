import Foundation
import Testing
@testable import ParleyWeb

/// The caption page's words (`PageText`): every language has every key, translated, with the
/// same blanks to fill; and the page asks only for words the table has.
@Suite struct WebPageTextTests {
    static let english = PageText.table["en"] ?? [:]

    /// `{language}`, `{percent}`: the blanks the page fills in.
    static func blanks(_ phrase: String) -> Set<String> {
        var found: Set<String> = []
        var rest = Substring(phrase)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            found.insert(String(rest[open...close]))
            rest = rest[rest.index(after: close)...]
        }
        return found
    }

    @Test func theTableHoldsExactlyTheSupportedLanguages() {
        #expect(Set(PageText.table.keys) == Set(PageText.languages))
        #expect(Set(PageText.languages).isSuperset(of: ["en", "es", "fr", "pt", "it", "ca", "gl"]))
        #expect(Self.english.count > 30, "the English words are the reference")
    }

    @Test(arguments: PageText.languages)
    func everyLanguageHasEveryKeyTranslated(language: String) throws {
        let phrases = try #require(PageText.table[language])
        let missing = Set(Self.english.keys).subtracting(phrases.keys).sorted()
        let unknown = Set(phrases.keys).subtracting(Self.english.keys).sorted()
        #expect(missing.isEmpty, "\(language) lacks \(missing)")
        #expect(unknown.isEmpty, "\(language) has keys English lacks: \(unknown)")
        for (key, phrase) in phrases {
            #expect(!phrase.trimmingCharacters(in: .whitespaces).isEmpty, "\(language).\(key) is empty")
            #expect(Self.blanks(phrase) == Self.blanks(Self.english[key] ?? ""), "\(language).\(key): \(phrase)")
            if language != "en" {
                #expect(phrase != Self.english[key], "\(language).\(key) is still English: \(phrase)")
            }
        }
        // Every supported language can be named inside a sentence of this one.
        for other in PageText.languages { #expect(phrases["lang_\(other)"] != nil, "\(language) cannot name \(other)") }
    }

    @Test func everyKeyThePageAsksForIsInTheTable() {
        let script = WebPage.script
        #expect(script.contains(PageText.json), "app.js carries the table")
        // t("key") and t("key", {...}) in app.js.
        var asked: Set<String> = []
        var rest = Substring(script)
        while let call = rest.range(of: "t(\"") {
            let after = rest[call.upperBound...]
            guard let end = after.firstIndex(of: "\"") else { break }
            // t( itself, not createElement( or another name ending in t.
            let before = call.lowerBound > script.startIndex ? script[script.index(before: call.lowerBound)] : " "
            if !(before.isLetter || before.isNumber || before == "_" || before == ".") { asked.insert(String(after[..<end])) }
            rest = after[end...]
        }
        #expect(asked.count > 10, "\(asked)")
        for key in asked where !key.hasSuffix("_") {
            #expect(Self.english[key] != nil, "app.js asks for \(key)")
        }
        // Keys made at run time: a state's words ("state_" + name; echo_guard reads as speaking)
        // and an error's ("error_" + code, else error_other).
        for state in [
            "listening", "hearing", "recognizing", "translating", "speaking", "paused", "idle", "device_lost", "other",
            // Auto mode not yet sure who speaks ("state_" + state + "_any").
            "listening_any", "hearing_any",
        ] {
            #expect(Self.english["state_\(state)"] != nil, "no words for the state \(state)")
        }
        // Words given to notice() by key, not through t("...").
        for key in ["paired", "not_connected"] { #expect(Self.english[key] != nil && script.contains("notice(\"\(key)\""), "\(key)") }
        for code in ["wrong_code", "pairing_required", "not_found", "too_many_clients", "message_too_large", "unavailable", "other"] {
            #expect(Self.english["error_\(code)"] != nil, "no words for the error \(code)")
        }
    }

    /// The page's Portuguese is European, as Parley's Portuguese translation and voice are
    /// (issue 38): none of Brazil's forms: the gerund ("ouvindo", "conectando": pt-PT says "a
    /// ouvir"), "sua resposta" without its article, "conexão", "digitar", "tela", "celular",
    /// "demais", "deu certo", "recarregar", "tentando".
    @Test func thePortugueseIsEuropean() throws {
        let portuguese = try #require(PageText.table["pt"])
        let brazilian = ["conexão", "conectando", "digit", "tela", "celular", "demais", "deu certo", "recarreg", "aguardando", "equipe", "arquivo"]
        for (key, phrase) in portuguese {
            let lower = phrase.lowercased()
            for form in brazilian { #expect(!lower.contains(form), "pt.\(key) is Brazilian (\(form)): \(phrase)") }
            let words = lower.split { !$0.isLetter }.map(String.init)
            for word in words where ["ando", "endo", "indo"].contains(where: word.hasSuffix) && !["quando", "lindo"].contains(word) {
                Issue.record("pt.\(key) has a gerund, Brazilian where pt-PT says \"a ...\": \(word) in \(phrase)")
            }
            if lower.hasPrefix("sua ") || lower.hasPrefix("seu ") { Issue.record("pt.\(key): pt-PT puts the article: \(phrase)") }
        }
        // The forms that are European, where the Brazilian page had others.
        #expect(portuguese["connection"] == "Ligação")
        #expect(portuguese["state_listening"]?.hasPrefix("A ouvir") == true)
        #expect(portuguese["typed_reply"] == "A sua resposta")
    }
}
