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
