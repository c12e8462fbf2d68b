import Foundation
import ParleyCore
import Synchronization
import Testing
@testable import ParleyTranslation

/// Debian bookworm's Apertium pairs between Parley's offline languages, both ways (as in
/// RoutePlannerTests), and Bergamot's two models.
private let apertiumPairs: Set<LanguagePair> = {
    let pairs = [("en", "es"), ("en", "ca"), ("en", "gl"), ("es", "fr"), ("es", "pt"), ("es", "it"), ("es", "ca"), ("es", "gl"),
                 ("ca", "fr"), ("ca", "pt"), ("ca", "it"), ("pt", "gl")]
    return Set(pairs.flatMap { [LanguagePair($0.0, $0.1), LanguagePair($0.1, $0.0)] })
}()
private let bergamotPairs: Set<LanguagePair> = [LanguagePair("en", "pt"), LanguagePair("pt", "en")]

private func offered(_ leg: TranslationLeg) -> Bool {
    switch leg.engine {
    case .apertium: apertiumPairs.contains(leg.pair)
    case .bergamot: bergamotPairs.contains(leg.pair)
    }
}

/// An engine in memory: marks each leg it translates ("hi [bergamot en-pt]"), offers `pairs`,
/// and fails every request while `failing` is set, as a crashed worker makes Bergamot's fail.
private final class MarkingEngine: Translator {
    let engine: TranslationEngine
    let pairs: Set<LanguagePair>
    let failing = Atomic<Bool>(false)
    let prepared = Mutex<[LanguagePair]>([])

    init(_ engine: TranslationEngine, _ pairs: Set<LanguagePair>) {
        self.engine = engine
        self.pairs = pairs
    }

    func supports(_ pair: LanguagePair) -> Bool { pairs.contains(pair) }
    func prepare(_ pair: LanguagePair) async throws { prepared.withLock { $0.append(pair) } }
    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        if failing.load(ordering: .relaxed) {
            throw TranslationError("the Bergamot worker gave no \(source)-\(target) translation: it exited (killed by signal 9)")
        }
        return "\(text) [\(engine) \(source)-\(target)]"
    }
    func availablePairs() async throws -> [LanguagePair] { pairs.sorted { ($0.source, $0.target) < ($1.source, $1.target) } }
}

/// The lines a chain logs.
private final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
}

@Suite("Bergamot: routes with its models, and the fallback to Apertium")
struct BergamotRoutesTests {
    let planner = RoutePlanner(offers: offered)

    @Test func theCandidatesJoinAModelAtOneEndToApertiumRoutes() {
        let enEs = planner.candidates(for: LanguagePair("en", "es"))
        #expect(enEs.contains(TranslationRoute(.bergamot("en", "pt"), .apertium("pt", "es"))))
        #expect(enEs.contains(TranslationRoute(.bergamot("en", "pt"), .apertium("pt", "ca"), .apertium("ca", "es"))))
        #expect(enEs.first == TranslationRoute("en", "es"), "a one-leg route comes first")
        let esEn = planner.candidates(for: LanguagePair("es", "en"))
        #expect(esEn.contains(TranslationRoute(.apertium("es", "pt"), .bergamot("pt", "en"))))
        #expect(planner.candidates(for: LanguagePair("en", "pt")).contains(TranslationRoute(.bergamot("en", "pt"))))
        for source in LanguageTable.offline.map(\.code) {
            for target in LanguageTable.offline.map(\.code) where target != source {
                for route in planner.candidates(for: LanguagePair(source, target)) {
                    #expect(route.isChained && route.visitsEachLanguageOnce && route.legs.count <= 3, "\(route)")
                    #expect(route.legs.filter { $0.engine == .bergamot }.count <= 1, "\(route)")
                }
            }
        }
        // Without Bergamot's models, Apertium's candidates alone, as before.
        let apertiumOnly = RoutePlanner(installedPairs: apertiumPairs)
        #expect(apertiumOnly.candidates(for: LanguagePair("en", "pt")) == [TranslationRoute("en", "pt", via: "es"), TranslationRoute("en", "pt", via: "ca")])
    }

    @Test func aModelRouteIsTakenOnlyWhenItMeasuredClearlyBetter() {
        let enEs = LanguagePair("en", "es")
        let direct = TranslationRoute(enEs)
        let mixed = TranslationRoute(.bergamot("en", "pt"), .apertium("pt", "es"))
        func route(_ scores: [TranslationRoute: Double], _ memory: [TranslationLeg: Double] = [:]) -> TranslationRoute? {
            RoutePlanner(offers: offered, scores: scores, memory: memory).route(for: enEs)
        }
        #expect(route([direct: 44.1, mixed: 49.6]) == mixed)
        #expect(route([direct: 44.1, mixed: 44.9]) == direct, "within the margin: one translation fewer")
        #expect(route([mixed: 60]) == direct, "an unmeasured direct pair stays")
        // The memory of its legs counts: 6 points for 600 MiB more is not worth it.
        #expect(route([direct: 44.1, mixed: 50.1], [.bergamot("en", "pt"): 600, .apertium("pt", "es"): 50, .apertium("en", "es"): 110]) == direct)
        // Without a direct pair, the longer route of best value.
        let enPt = LanguagePair("en", "pt")
        let model = TranslationRoute(.bergamot("en", "pt"))
        #expect(RoutePlanner(offers: offered, scores: [:]).route(for: enPt) == model, "a model is a one-leg route")
    }

    /// A direct model a user installed (`parleyd model install-translation`), not measured here,
    /// replaces the pivot the shipped models measured best.
    @Test func aDirectModelAUserInstalledReplacesThePivot() {
        let withUserModel: @Sendable (TranslationLeg) -> Bool = { leg in
            offered(leg) || (leg.engine == .bergamot && [LanguagePair("en", "es"), LanguagePair("es", "en")].contains(leg.pair))
        }
        let user = RoutePlanner(offers: withUserModel)
        #expect(user.route(for: LanguagePair("en", "es")) == TranslationRoute(.bergamot("en", "es")))
        #expect(user.route(for: LanguagePair("es", "en")) == TranslationRoute(.bergamot("es", "en")))
        // Once measured, it competes by its measure like any route.
        var scores = RouteMeasurements.chrF
        scores[TranslationRoute(.bergamot("en", "es"))] = 30
        #expect(RoutePlanner(offers: withUserModel, scores: scores).route(for: LanguagePair("en", "es")) == planner.route(for: LanguagePair("en", "es")))
        // The directions it does not touch keep their routes.
        #expect(user.route(for: LanguagePair("en", "pt")) == TranslationRoute(.bergamot("en", "pt")))
        #expect(user.route(for: LanguagePair("es", "fr")) == planner.route(for: LanguagePair("es", "fr")))
    }

    /// What the shipped measurements choose (docs/benchmarks.md, "Bergamot").
    @Test func theShippedMeasurementsUseBergamotForEnglishWithPortugueseSpanishAndFrench() {
        #expect(planner.route(for: LanguagePair("en", "pt")) == TranslationRoute(.bergamot("en", "pt")))
        #expect(planner.route(for: LanguagePair("pt", "en")) == TranslationRoute(.bergamot("pt", "en")))
        #expect(planner.route(for: LanguagePair("en", "es")) == TranslationRoute(.bergamot("en", "pt"), .apertium("pt", "es")))
        #expect(planner.route(for: LanguagePair("es", "en")) == TranslationRoute(.apertium("es", "pt"), .bergamot("pt", "en")))
        #expect(planner.route(for: LanguagePair("en", "fr"))?.legs.first == .bergamot("en", "pt"))
        #expect(planner.route(for: LanguagePair("fr", "en"))?.legs.last == .bergamot("pt", "en"))
        // Between two languages Bergamot has no model for, Apertium's routes as before.
        let apertiumOnly = RoutePlanner(installedPairs: apertiumPairs)
        for (source, target) in [("es", "fr"), ("fr", "es"), ("es", "pt"), ("pt", "es"), ("ca", "fr"), ("it", "fr")] {
            let pair = LanguagePair(source, target)
            #expect(planner.route(for: pair) == apertiumOnly.route(for: pair), "\(pair)")
        }
    }

    @Test func everyCandidateOfTheShippedEnginesIsMeasured() {
        for source in LanguageTable.offline.map(\.code) {
            for target in LanguageTable.offline.map(\.code) where target != source {
                for route in planner.candidates(for: LanguagePair(source, target)) where route.legs.contains(where: { $0.engine == .bergamot }) {
                    #expect(RouteMeasurements.chrF[route] != nil, "\(route) is not measured (bench/routes.py --swift)")
                    for leg in route.legs {
                        #expect(RouteMeasurements.legMiB[leg] != nil, "\(leg)'s memory is not measured (bench/pair-memory.sh, bench/bergamot-cost.py)")
                    }
                }
            }
        }
    }

    @Test func aRouteNamesItsEngines() {
        let mixed = TranslationRoute(.bergamot("en", "pt"), .apertium("pt", "es"))
        #expect(mixed.name(home: .bergamot) == "bergamot en-pt + apertium pt-es")
        #expect(mixed.name(home: .apertium) == "bergamot en-pt + apertium pt-es")
        #expect(TranslationRoute(.bergamot("en", "pt")).name(home: .bergamot) == "direct")
        #expect(TranslationRoute("en", "fr", via: "es").name(home: .apertium) == "via es")
        #expect(TranslationRoute("en", "fr", via: "es").description == "via es")
        #expect(TranslatorChain.routeName("bergamot", "bergamot en-pt + apertium pt-es") == "bergamot en-pt + apertium pt-es")
        #expect(TranslatorChain.routeName("apertium", "via es") == "apertium via es")
        #expect(TranslatorChain.routeName("bergamot", nil) == "bergamot")
    }

    /// The chain the daemon builds: a "bergamot" backend (routes with a Bergamot leg) in front
    /// of Apertium's own routes.
    private func chain(_ apertium: MarkingEngine, _ bergamot: MarkingEngine, log: LogLines? = nil) -> TranslatorChain {
        TranslatorChain(
            [
                .init(name: "bergamot", translator: RoutedTranslator(engines: [.apertium: apertium, .bergamot: bergamot], home: .bergamot, requiring: .bergamot)),
                .init(name: "apertium", translator: RoutedTranslator(base: apertium)),
            ], cacheCapacity: 0, fellBack: { line in log?.lines.withLock { $0.append(line) } })
    }

    @Test func turnsAndLanguagesNameEachLegsEngine() async throws {
        let apertium = MarkingEngine(.apertium, apertiumPairs)
        let bergamot = MarkingEngine(.bergamot, bergamotPairs)
        let chain = chain(apertium, bergamot)
        #expect(chain.routeName(for: LanguagePair("en", "es")) == "bergamot en-pt + apertium pt-es")
        #expect(chain.routeName(for: LanguagePair("es", "en")) == "apertium es-pt + bergamot pt-en")
        #expect(chain.routeName(for: LanguagePair("en", "pt")) == "bergamot")
        #expect(chain.routeName(for: LanguagePair("es", "fr")) == "apertium")
        #expect(chain.routeName(for: LanguagePair("pt", "fr")) == "apertium via es")
        let turn = try await chain.translateNamingRoute("hi", from: "en", to: "es")
        #expect(turn == RoutedTranslation(text: "hi [bergamot en-pt] [apertium pt-es]", route: "bergamot en-pt + apertium pt-es"))
        #expect(try await chain.translateNamingRoute("olá", from: "pt", to: "en") == RoutedTranslation(text: "olá [bergamot pt-en]", route: "bergamot"))
        // Preparing a direction starts each leg on its engine.
        try await chain.prepare(LanguagePair("es", "en"))
        #expect(apertium.prepared.withLock { $0 } == [LanguagePair("es", "pt")] && bergamot.prepared.withLock { $0 } == [LanguagePair("pt", "en")])
        // `languages` lists the pairs each backend has: Bergamot its models.
        #expect(try await chain.backends[0].translator.availablePairs() == [LanguagePair("en", "pt"), LanguagePair("pt", "en")])
    }

    @Test func whenBergamotFailsApertiumTranslatesTheTurnAndOneLineSaysSo() async throws {
        let apertium = MarkingEngine(.apertium, apertiumPairs)
        let bergamot = MarkingEngine(.bergamot, bergamotPairs)
        let log = LogLines()
        let chain = chain(apertium, bergamot, log: log)
        bergamot.failing.store(true, ordering: .relaxed)
        let turn = try await chain.translateNamingRoute("hi", from: "en", to: "es")
        #expect(turn == RoutedTranslation(text: "hi [apertium en-es]", route: "apertium"))
        let lines = log.lines.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("bergamot failed") == true && lines.first?.contains("killed by signal 9") == true, "\(lines)")
        #expect(lines.first?.contains("apertium translated the turn instead") == true, "\(lines)")
        // A failure is not a hang: Bergamot is asked again at the next turn, and answers.
        #expect(!chain.isSkipping("bergamot"))
        bergamot.failing.store(false, ordering: .relaxed)
        #expect(try await chain.translateNamingRoute("hi again", from: "en", to: "es").route == "bergamot en-pt + apertium pt-es")
        #expect(log.lines.withLock { $0.count } == 1)
        // en->pt has no Apertium pair: with Bergamot failing, Apertium's pivot takes it.
        bergamot.failing.store(true, ordering: .relaxed)
        #expect(try await chain.translateNamingRoute("bye", from: "en", to: "pt").route == "apertium via es")
    }
}
