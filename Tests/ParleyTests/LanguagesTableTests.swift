import ParleyCore
import Testing
@testable import ParleyProtocol
@testable import parley

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
}
