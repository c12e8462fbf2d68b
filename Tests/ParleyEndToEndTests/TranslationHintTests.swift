import Foundation
import ParleyCore
import ParleyTesting
import Testing
@testable import ParleyConfig
@testable import ParleyDaemon
import ParleyTranslation

/// Install hints name packages that exist, or say that no offline pair exists and how to use a
/// translation server (issue 16, item 16).
@Suite("Translation install hints", .startsProcesses)
struct TranslationHintTests {
    /// The Apertium package names apt knows (from the local package lists), in one call; empty
    /// when apt cannot say.
    static func aptApertiumPackages() -> Set<String> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/apt-cache")
        process.arguments = ["pkgnames", "apertium-"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return [] }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Set(String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    /// Whether apt knows Debian's Apertium packages here at all (its lists were fetched).
    static let aptKnowsApertium = aptApertiumPackages().contains("apertium-eng-spa")

    @Test(.enabled(if: aptKnowsApertium, "apt's package lists are not here (apt-get update)"))
    func everyPackageNamedExistsAndIsForLanguagesParleyKnows() throws {
        let known = Self.aptApertiumPackages()
        for (pair, package) in LanguageTable.apertiumPackages {
            #expect(known.contains(package), "\(package) (for \(pair)) is not a Debian package")
            for code in pair.split(separator: "-") {
                #expect(LanguageCodes.apertium(String(code)) != nil, "Parley's Apertium backend does not know \(code) of \(pair)")
            }
        }
    }

    @Test(arguments: ["de", "ja"])
    func aLanguageWithNoDebianPairSaysToUseATranslationServer(_ language: String) throws {
        var config = ParleyConfig()
        config.speakerA = "en"
        config.speakerB = language
        let message: String
        do {
            _ = try Daemon.makeTranslator(config)
            Issue.record("en-\(language) was taken without a pair")
            return
        } catch {
            #expect(error.code == .config)
            message = error.description
        }
        #expect(message.contains("Debian has no Apertium pair for en-\(language)"), "\(message)")
        #expect(message.contains("libretranslate") && message.contains("url"), "\(message)")
        #expect(!message.contains("apertium-eng-"), "\(message)")
        #expect(!message.contains("ISO 639-1"), "\(message)")
        #expect(!message.contains("\n"))
    }

    @Test func aPairDebianHasNamesItsPackage() {
        #expect(TranslationHints.missingPair(source: "en", target: "ca").contains("apt-get install apertium-eng-cat"))
        #expect(TranslationHints.missingPair(source: "es", target: "fr").contains("apertium-fr-es"))
        #expect(TranslationHints.missingPair(source: "en", target: "fr").contains("Debian has no Apertium pair"))
    }

    /// `ja` is an ISO 639-1 code: the config takes it.
    @Test func japaneseIsALanguageCode() throws {
        let config = try ParleyConfig.parse(
            "[conversation]\nspeaker_b = \"ja\"\n", source: "test.toml", baseDirectory: "/etc/parley", environment: ["HOME": "/home/someone"])
        #expect(config.speakerB == "ja")
    }
}
