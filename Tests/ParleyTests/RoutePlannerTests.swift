import Foundation
import Synchronization
import Testing
import ParleyCore
@testable import ParleyConfig
@testable import ParleyTranslation

/// Debian bookworm's Apertium pairs between Parley's offline languages, both ways.
private let bookworm: Set<LanguagePair> = {
    let pairs = [("en", "es"), ("en", "ca"), ("en", "gl"), ("es", "fr"), ("es", "pt"), ("es", "it"), ("es", "ca"), ("es", "gl"),
                 ("ca", "fr"), ("ca", "pt"), ("ca", "it")]
    return Set(pairs.flatMap { [LanguagePair($0.0, $0.1), LanguagePair($0.1, $0.0)] })
}()

/// A translator that marks each leg, so a test sees which pairs a turn went through; only
/// `pairs` are installed.
private final class MarkingTranslator: Translator {
    let pairs: Set<LanguagePair>
    let prepared = Mutex<[LanguagePair]>([])
    let empty: LanguagePair?

    init(_ pairs: Set<LanguagePair>, emptyOn empty: LanguagePair? = nil) {
        self.pairs = pairs
        self.empty = empty
    }

    func supports(_ pair: LanguagePair) -> Bool { pairs.contains(pair) }
    func prepare(_ pair: LanguagePair) async throws {
        guard pairs.contains(pair) else { throw TranslationError("no \(pair)") }
        prepared.withLock { $0.append(pair) }
    }
    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        let pair = LanguagePair(source, target)
        guard pairs.contains(pair) else { throw TranslationError("no \(pair)") }
        return pair == empty ? "" : "\(text) [\(pair)]"
    }
}

@Suite("Translation routes: the planner and pivots")
struct RoutePlannerTests {
    @Test func aDirectionWithItsOwnPairGoesDirectWhenNothingMeasuredBetter() {
        let planner = RoutePlanner(installedPairs: bookworm, scores: [:])
        #expect(planner.route(for: LanguagePair("en", "es")) == TranslationRoute("en", "es"))
        #expect(planner.route(for: LanguagePair("pt", "es"))?.via == nil)
    }

    @Test func aDirectionWithoutAPairGoesThroughSpanishFirstThenCatalan() {
        let planner = RoutePlanner(installedPairs: bookworm, scores: [:])
        #expect(planner.route(for: LanguagePair("en", "fr")) == TranslationRoute("en", "fr", via: "es"))
        #expect(planner.route(for: LanguagePair("fr", "pt")) == TranslationRoute("fr", "pt", via: "es"))
        // Without Spanish's pairs, Catalan carries it.
        let noSpanishFrench = bookworm.subtracting([LanguagePair("es", "fr"), LanguagePair("fr", "es")])
        #expect(RoutePlanner(installedPairs: noSpanishFrench, scores: [:]).route(for: LanguagePair("en", "fr"))?.via == "ca")
        // Galician has no pair with Catalan: ca->gl goes through Spanish.
        #expect(planner.route(for: LanguagePair("ca", "gl"))?.via == "es")
        #expect(planner.candidates(for: LanguagePair("ca", "gl")) == [TranslationRoute("ca", "gl", via: "es")])
    }

    @Test func measurementsChooseThePivotOnlyWhenClearlyBetter() {
        let direct = TranslationRoute("es", "fr")
        let viaCatalan = TranslationRoute("es", "fr", via: "ca")
        // Better by more than the margin: the pivot.
        #expect(RoutePlanner(installedPairs: bookworm, scores: [direct: 46.7, viaCatalan: 48.8], memory: [:]).route(for: direct.pair) == viaCatalan)
        // Better by less than the margin: not worth a second pipeline.
        #expect(RoutePlanner(installedPairs: bookworm, scores: [direct: 46.7, viaCatalan: 47.5], memory: [:]).route(for: direct.pair) == direct)
        // Without a measurement of the direct pair, it stays.
        #expect(RoutePlanner(installedPairs: bookworm, scores: [viaCatalan: 60], memory: [:]).route(for: direct.pair) == direct)
        // Between two pivots, the better measured one, whatever the order.
        let enFr = LanguagePair("en", "fr")
        let scores = [TranslationRoute(enFr, via: "es"): 47.0, TranslationRoute(enFr, via: "ca"): 48.8]
        #expect(RoutePlanner(installedPairs: bookworm, scores: scores, memory: [:]).route(for: enFr)?.via == "ca")
    }

    @Test func memoryWeighsAgainstQuality() {
        let direct = TranslationRoute("es", "fr")
        let viaCatalan = TranslationRoute("es", "fr", via: "ca")
        let scores = [direct: 46.7, viaCatalan: 48.8]
        // 2.1 points better, but 700 MiB more to keep warm: not worth it.
        let memory = [LanguagePair("es", "fr"): 90.0, LanguagePair("es", "ca"): 167, LanguagePair("ca", "fr"): 626]
        #expect(RoutePlanner(installedPairs: bookworm, scores: scores, memory: memory).route(for: direct.pair) == direct)
        // Cheap legs: the better pivot.
        let cheap = [LanguagePair("es", "fr"): 90.0, LanguagePair("es", "ca"): 20, LanguagePair("ca", "fr"): 20]
        #expect(RoutePlanner(installedPairs: bookworm, scores: scores, memory: cheap).route(for: direct.pair) == viaCatalan)
        // Between two pivots: 1.8 points for 580 MiB more loses.
        let enFr = LanguagePair("en", "fr")
        let pivots = [TranslationRoute(enFr, via: "es"): 47.0, TranslationRoute(enFr, via: "ca"): 48.8]
        let legs = [LanguagePair("en", "es"): 111.0, LanguagePair("es", "fr"): 90, LanguagePair("en", "ca"): 154, LanguagePair("ca", "fr"): 626]
        #expect(RoutePlanner(installedPairs: bookworm, scores: pivots, memory: legs).route(for: enFr)?.via == "es")
    }

    @Test func noRouteWhenNoPairsReach() {
        let planner = RoutePlanner(installedPairs: bookworm, scores: [:])
        #expect(planner.route(for: LanguagePair("en", "ja")) == nil)
        #expect(planner.route(for: LanguagePair("en", "en")) == nil)
        // A pivot never goes through one of its own ends, and never two pivots deep.
        let chain: Set<LanguagePair> = [LanguagePair("en", "es"), LanguagePair("es", "ca"), LanguagePair("ca", "fr")]
        #expect(RoutePlanner(installedPairs: chain, scores: [:]).route(for: LanguagePair("en", "fr")) == nil)
    }

    /// What the shipped measurements choose (docs/benchmarks.md, "Translation routes").
    @Test func theShippedMeasurementsChooseSpanishAsThePivotAndKeepDirectPairsButCatalanToFrench() {
        let planner = RoutePlanner(installedPairs: bookworm)
        let codes = LanguageTable.offline.map(\.code)
        for source in codes {
            for target in codes where target != source {
                let pair = LanguagePair(source, target)
                let route = planner.route(for: pair)
                // ca->fr's own pipeline keeps 626 MiB warm: through Spanish costs 216 MiB for 3 chrF points less.
                let expected = bookworm.contains(pair) && pair != LanguagePair("ca", "fr") ? nil : "es"
                #expect(route?.via == expected, "\(pair): \(String(describing: route))")
            }
        }
    }

    @Test func theShippedMeasurementsCoverEveryRouteOfTheOfflineLanguages() {
        let codes = LanguageTable.offline.map(\.code)
        let planner = RoutePlanner(installedPairs: bookworm)
        for source in codes {
            for target in codes where target != source {
                let pair = LanguagePair(source, target)
                #expect(planner.route(for: pair) != nil, "\(pair) has no route with bookworm's pairs")
                for route in planner.candidates(for: pair) {
                    #expect(RouteMeasurements.chrF[route] != nil, "\(pair) \(route) is not measured (bench/routes.py --swift)")
                    for leg in route.legs {
                        #expect(RouteMeasurements.legMiB[leg] != nil, "\(leg)'s memory is not measured (bench/pair-memory.sh, bench/bergamot-cost.py)")
                    }
                }
            }
        }
    }

    @Test func aPivotIsTwoTranslationsOneAfterTheOtherAndSaysSo() async throws {
        let base = MarkingTranslator(bookworm)
        let routed = RoutedTranslator(base: base, scores: [:])
        let pivoted = try await routed.translateNamingRoute("hello", from: "en", to: "pt")
        #expect(pivoted == RoutedTranslation(text: "hello [en-es] [es-pt]", route: "via es"))
        let direct = try await routed.translateNamingRoute("hola", from: "es", to: "pt")
        #expect(direct == RoutedTranslation(text: "hola [es-pt]", route: nil))
        #expect(routed.supports(LanguagePair("en", "pt")) && !routed.supports(LanguagePair("en", "ja")))
        #expect(routed.routeName(for: LanguagePair("en", "pt")) == "via es")
        try await routed.prepare(LanguagePair("en", "pt"))
        #expect(base.prepared.withLock { $0 } == [LanguagePair("en", "es"), LanguagePair("es", "pt")])
        await #expect(throws: TranslationError.self) { try await routed.translate("x", from: "en", to: "ja") }
    }

    @Test func anEmptyFirstLegIsAnErrorNotASilentTurn() async throws {
        let routed = RoutedTranslator(base: MarkingTranslator(bookworm, emptyOn: LanguagePair("en", "es")), scores: [:])
        await #expect(throws: TranslationError.self) { try await routed.translate("hello", from: "en", to: "pt") }
    }

    @Test func aChainNamesTheBackendAndThePivot() async throws {
        let chain = TranslatorChain([.init(name: "apertium", translator: RoutedTranslator(base: MarkingTranslator(bookworm), scores: [:]))])
        #expect(chain.routeName(for: LanguagePair("en", "fr")) == "apertium via es")
        #expect(chain.routeName(for: LanguagePair("en", "es")) == "apertium")
        #expect(try await chain.translateNamingRoute("hi", from: "en", to: "fr").route == "apertium via es")
        // A repeated phrase from the cache keeps the route it took.
        #expect(try await chain.translateNamingRoute("hi", from: "en", to: "fr").route == "apertium via es")
        #expect(try await chain.translateNamingBackend("hi", from: "en", to: "fr").backend == "cache")
    }

    @Test func theHintNamesWhatAPivotLacks() {
        let onlyEnglishSpanish: Set<LanguagePair> = [LanguagePair("en", "es"), LanguagePair("es", "en")]
        let hint = TranslationHints.missingRoute(source: "en", target: "fr") { onlyEnglishSpanish.contains(LanguagePair($0, $1)) }
        #expect(hint.contains("through Spanish") && hint.contains("apt-get install apertium-fr-es"), "\(hint)")
        #expect(!hint.contains("apertium-eng-spa"), "\(hint)")
        let nothing = TranslationHints.missingRoute(source: "en", target: "pt") { _, _ in false }
        #expect(nothing.contains("apertium-eng-spa") && nothing.contains("apertium-es-pt"), "\(nothing)")
        #expect(TranslationHints.missingRoute(source: "es", target: "fr") { _, _ in false }.contains("apertium-fr-es"))
        let japanese = TranslationHints.missingRoute(source: "en", target: "ja") { _, _ in true }
        #expect(japanese.contains("libretranslate"), "\(japanese)")
    }
}
