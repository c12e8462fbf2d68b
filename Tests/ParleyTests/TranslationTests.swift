import Foundation
import Testing
@testable import ParleyTranslation

@Suite("Apertium, for real")
struct ApertiumTranslatorTests {
    let modes = "/usr/share/apertium/modes"

    @Test func translatesEnglishToSpanishAndBack() async throws {
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es"), LanguagePair("es", "en")], modesDirectory: modes)
        let spanish = try await translator.translate("go forward ten meters", from: "en", to: "es")
        #expect(spanish.lowercased().contains("diez metros"))
        let english = try await translator.translate("el perro es grande", from: "es", to: "en")
        #expect(english.lowercased().contains("dog"))
    }

    @Test func staysWarmAcrossSentences() async throws {
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes)
        for _ in 0..<5 {
            let spanish = try await translator.translate("the house is red", from: "en", to: "es")
            #expect(spanish.lowercased().contains("casa"))
        }
    }

    @Test func reservedCharactersAreEscaped() {
        #expect(ApertiumTranslator.escape("a^b$c[d]") == #"a\^b\$c\[d\]"#)
        #expect(ApertiumTranslator.escape("two\nlines\0") == "two lines")
    }

    @Test func unknownWordMarksAreCleaned() {
        #expect(ApertiumTranslator.clean("Hola *Parley y #casa") == "Hola Parley y casa")
        #expect(ApertiumTranslator.clean(#"precio \$5"#) == "precio $5")
        #expect(ApertiumTranslator.clean("Va a algún lugar y  algo\n") == "Va a algún lugar y algo")
    }

    @Test func unknownWordMarksCanBeKeptForDebugging() async throws {
        let plain = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes)
        #expect(try await plain.translate("the zorgblatt is red", from: "en", to: "es").contains("zorgblatt"))
        #expect(!(try await plain.translate("the zorgblatt is red", from: "en", to: "es")).contains("*"))
        let marking = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes, keepUnknownMarks: true)
        #expect(try await marking.translate("the zorgblatt is red", from: "en", to: "es").contains("*zorgblatt"))
    }

    @Test func aPipelineKilledMidConversationIsRestartedBehindTheChain() async throws {
        let apertium = try ApertiumTranslator(pairs: [LanguagePair("en", "es"), LanguagePair("es", "en")], modesDirectory: modes)
        let chain = TranslatorChain([.init(name: "apertium", translator: apertium)])
        let turns = [("the house is red", "en", "es", "casa"), ("el perro es grande", "es", "en", "dog"), ("the dog is big", "en", "es", "perro")]
        for (index, (text, source, target, expected)) in turns.enumerated() {
            if index == 2 {
                // Between two turns the English-Spanish pipeline dies.
                let group = try #require(await apertium.processGroup(of: LanguagePair("en", "es")))
                #expect(kill(-group, SIGKILL) == 0)
                try await Task.sleep(for: .milliseconds(100))
            }
            let (translation, backend) = try await chain.translateNamingBackend(text, from: source, to: target)
            #expect(translation.lowercased().contains(expected))
            #expect(backend == "apertium")
        }
    }

    @Test func missingPairSaysWhatToInstall() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-modes-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        do {
            _ = try ApertiumTranslator(pairs: [LanguagePair("en", "ca")], modesDirectory: empty.path)
            Issue.record("a missing pair must be an error")
        } catch {
            #expect(error.description.contains("apt-get install apertium-eng-cat"))
        }
        let translator = try ApertiumTranslator(pairs: [], modesDirectory: modes)
        #expect(translator.supports(LanguagePair("en", "es")))
        #expect(!translator.supports(LanguagePair("en", "xx")))
    }

    @Test func aKilledPipelineIsRestartedAndTheSentenceTranslated() async throws {
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes)
        #expect(try await translator.translate("the house is red", from: "en", to: "es").contains("casa"))
        // The whole pipeline dies mid-conversation.
        let group = try #require(await translator.processGroup(of: LanguagePair("en", "es")))
        #expect(getpgid(group) == group, "the pipeline must lead its own process group")
        #expect(kill(-group, SIGKILL) == 0)
        try await Task.sleep(for: .milliseconds(100))
        #expect(try await translator.translate("the dog is big", from: "en", to: "es").lowercased().contains("perro"))
        // It was restarted: a new group runs the pair.
        let restarted = try #require(await translator.processGroup(of: LanguagePair("en", "es")))
        #expect(restarted != group)
    }
}
