import Foundation
import ParleyCore
import Testing
@testable import ParleyProtocol
@testable import ParleyCLI

@Suite("parley languages: the routes' matrix")
struct LanguagesTableTests {
    @Test func aCellSaysTheEngineAndTheLanguagesInBetween() {
        #expect(Languages.cell("apertium") == "=")
        #expect(Languages.cell("apertium via es") == "es")
        #expect(Languages.cell("bergamot") == "B")
        #expect(Languages.cell("bergamot en-pt + apertium pt-es") == "Bpt")
        #expect(Languages.cell("apertium es-pt + bergamot pt-en") == "Bpt")
        #expect(Languages.cell("bergamot en-pt + apertium pt-es + apertium es-fr") == "Bptes")
        #expect(Languages.cell(nil) == "-")
    }

    @Test func theTableNamesThePairInUseWithEveryLegAndFitsEightyColumns() {
        let codes = LanguageTable.offline.map(\.code)
        var directions: [LanguagesInfo.Direction] = []
        for source in codes {
            for target in codes where target != source {
                let route: String
                switch (source, target) {
                case ("en", "pt"), ("pt", "en"): route = "bergamot"
                case ("en", "es"): route = "bergamot en-pt + apertium pt-es"
                case ("es", "en"): route = "apertium es-pt + bergamot pt-en"
                case ("en", _): route = "bergamot en-pt + apertium pt-es + apertium es-\(target)"
                case (_, "en"): route = "apertium \(source)-es + apertium es-pt + bergamot pt-en"
                default: route = "apertium via es"
                }
                directions.append(.init(source: source, target: target, route: route))
            }
        }
        let languages = codes.map { code in
            LanguagesInfo.Language(code: code, hearable: true, speakable: true, to: [], from: [], name: LanguageTable.names[code], inUse: ["en", "fr"].contains(code))
        }
        let table = Languages.table(LanguagesInfo(languages: languages, backends: [], directions: directions, missingPackages: []))
        for line in table.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        #expect(table.contains("  en->fr: bergamot en-pt + apertium pt-es + apertium es-fr\n"), "\(table)")
        #expect(table.contains("  fr->en: apertium fr-es + apertium es-pt + bergamot pt-en\n"), "\(table)")
        #expect(table.contains("Bptes"), "\(table)")
    }

    @Test func eachLanguageSaysWhichEngineSpeaksItInEightyColumns() throws {
        let codes = LanguageTable.offline.map(\.code)
        let festival = ["en": "cmu_us_slt_arctic_hts", "it": "lp_diphone", "ca": "upc_ca_ona_hts"]
        let languages = codes.map { code in
            LanguagesInfo.Language(
                code: code, hearable: true, speakable: true, to: [], from: [], engine: "whisper-base", name: LanguageTable.names[code],
                voice: festival[code] ?? LanguageTable.info(code)?.voice, voiceEngine: festival[code] == nil ? "espeak-ng" : "festival",
                inUse: ["en", "es"].contains(code))
        }
        let table = Languages.table(LanguagesInfo(languages: languages, backends: [], directions: [], missingPackages: []))
        for line in table.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        #expect(table.contains("festival cmu_us_slt_arctic_hts"), "\(table)")
        #expect(table.contains("festival upc_ca_ona_hts"), "\(table)")
        #expect(table.contains("espeak-ng es"), "\(table)")
        #expect(table.contains("espeak-ng pt (stand-in)"), "Galician: \(table)")
        // An older parleyd sends no engine: espeak-ng's voice, as before.
        var old = languages[0]
        old.voice = "en"
        old.voiceEngine = nil
        #expect(Languages.voice(old) == "espeak-ng en")
        let json = String(decoding: try JSONEncoder().encode(languages[0]), as: UTF8.self)
        #expect(json.contains(#""voice_engine":"festival""#), "\(json)")
    }
}
