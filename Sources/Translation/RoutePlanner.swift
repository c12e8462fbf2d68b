import ParleyCore

/// An engine a leg of a route runs on.
public enum TranslationEngine: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Debian's Apertium pairs (rules and dictionaries): `ApertiumTranslator`.
    case apertium
    /// Mozilla's Bergamot models (Firefox Translations, small neural models): `BergamotTranslator`.
    case bergamot

    public var description: String { rawValue }
}

/// One translation of a route: a pair, on an engine.
public struct TranslationLeg: Sendable, Hashable, CustomStringConvertible {
    public var engine: TranslationEngine
    public var pair: LanguagePair

    public init(_ engine: TranslationEngine, _ pair: LanguagePair) {
        self.engine = engine
        self.pair = pair
    }

    public static func apertium(_ source: String, _ target: String) -> TranslationLeg { .init(.apertium, LanguagePair(source, target)) }
    public static func bergamot(_ source: String, _ target: String) -> TranslationLeg { .init(.bergamot, LanguagePair(source, target)) }

    /// "bergamot en-pt".
    public var description: String { "\(engine) \(pair)" }
}

/// How one direction is translated: one leg, or several one after the other (through one or
/// two languages in between), each on its engine.
public struct TranslationRoute: Sendable, Hashable, CustomStringConvertible {
    /// The direction it translates.
    public let pair: LanguagePair
    /// The translations made one after the other; never empty.
    public let legs: [TranslationLeg]

    /// A route of the given legs, first to last.
    public init(_ first: TranslationLeg, _ rest: TranslationLeg...) {
        self.init(legs: first, rest)
    }

    private init(legs first: TranslationLeg, _ rest: [TranslationLeg]) {
        legs = [first] + rest
        pair = LanguagePair(first.pair.source, (rest.last ?? first).pair.target)
    }

    /// An Apertium route: its own pair, or two pairs through `via`.
    public init(_ pair: LanguagePair, via: String? = nil) {
        if let via {
            self.init(legs: .init(.apertium, LanguagePair(pair.source, via)), [.init(.apertium, LanguagePair(via, pair.target))])
        } else {
            self.init(legs: .init(.apertium, pair), [])
        }
    }

    public init(_ source: String, _ target: String, via: String? = nil) {
        self.init(LanguagePair(source, target), via: via)
    }

    /// The language after the first leg; nil for one leg.
    public var via: String? { legs.count > 1 ? legs[0].pair.target : nil }

    /// Whether each leg starts where the one before it ended (routes the planner makes are).
    public var isChained: Bool { zip(legs, legs.dropFirst()).allSatisfy { $0.pair.target == $1.pair.source } }

    /// The route as a turn names it within a backend named for `home`: "direct" or "via es"
    /// when every leg is on `home` (one pivot at most), else each leg with its engine,
    /// "bergamot en-pt + apertium pt-es". `TranslatorChain.routeName` puts the backend in front
    /// of the first two ("apertium via es"), and keeps the last as it is.
    public func name(home: TranslationEngine) -> String {
        if legs.allSatisfy({ $0.engine == home }) && legs.count <= 2 {
            return via.map { "via \($0)" } ?? "direct"
        }
        return legs.map(\.description).joined(separator: " + ")
    }

    /// As an Apertium backend names it: "direct", "via es", or each leg with its engine.
    public var description: String { name(home: .apertium) }
}

/// Chooses each direction's route from what the engines offer (the Apertium pairs installed,
/// the Bergamot models present), measured quality and measured memory. Pure: what is offered
/// is a question it is given, so tests use an in-memory list.
///
/// The candidates for a direction:
/// - Apertium: its own pair, and each pivot (`pivots`: es, ca) whose two legs are installed;
///   only one pivot, two legs at most.
/// - Another engine (Bergamot): its own model for the direction; and its model at one end of
///   the route with an Apertium route (of one or two legs) for the rest, as "bergamot en-pt +
///   apertium pt-es" or "apertium es-pt + bergamot pt-en" (three legs at most). A route never
///   visits a language twice.
///
/// A route's value is its chrF on FLORES less the memory its legs keep warm, at one chrF point
/// per `mibPerPoint` MiB (a pivot through Catalan can cost 5 to 9 times the memory of a direct
/// pair: `ca-fr` alone is 626 MiB; Parley runs on small boards).
/// - A direction with a one-leg route (a pair, or a model) takes the one of best value, unless
///   a longer route's value beats it by more than `pivotMargin` (each leg is one more
///   translation per turn).
/// - A direction without one takes the longer route of best value; unmeasured routes are taken
///   after measured ones, in the order above (Spanish, then Catalan).
/// - A model of another engine than Apertium made for the direction itself, and not measured
///   (one a user installed: `parleyd model install-translation`), is taken before all of them.
public struct RoutePlanner: Sendable {
    /// Whether an engine can translate a leg now (its pair installed, its model present).
    public var offers: @Sendable (TranslationLeg) -> Bool
    /// The engines routes may use (Apertium for pivots; the others at one end).
    public var engines: [TranslationEngine]
    public var pivots: [String]
    /// The languages a leg of another engine than Apertium may reach in between.
    public var languages: [String]
    /// chrF on FLORES devtest by route (`RouteMeasurements.chrF`, made by bench/routes.py).
    public var scores: [TranslationRoute: Double]
    /// MiB each leg keeps warm (`RouteMeasurements.legMiB`); a leg not listed costs nothing.
    public var memory: [TranslationLeg: Double]

    /// chrF points a longer route must gain over a one-leg route (memory counted) to be chosen instead.
    public static let pivotMargin = 1.0
    /// Warm memory worth one chrF point.
    public static let mibPerPoint = 100.0

    public init(
        offers: @escaping @Sendable (TranslationLeg) -> Bool, engines: [TranslationEngine] = TranslationEngine.allCases,
        pivots: [String] = LanguageTable.pivots, languages: [String] = LanguageTable.offline.map(\.code),
        scores: [TranslationRoute: Double] = RouteMeasurements.chrF, memory: [TranslationLeg: Double] = RouteMeasurements.legMiB
    ) {
        self.offers = offers
        self.engines = TranslationEngine.allCases.filter(engines.contains)
        self.pivots = pivots
        self.languages = languages
        self.scores = scores
        self.memory = memory
    }

    /// A planner over Apertium alone: `installed` says which of its pairs are.
    public init(
        installed: @escaping @Sendable (LanguagePair) -> Bool, pivots: [String] = LanguageTable.pivots,
        scores: [TranslationRoute: Double] = RouteMeasurements.chrF, memory: [LanguagePair: Double] = RouteMeasurements.pipelineMiB
    ) {
        self.init(
            offers: { $0.engine == .apertium && installed($0.pair) }, engines: [.apertium], pivots: pivots, scores: scores,
            memory: Dictionary(uniqueKeysWithValues: memory.map { (TranslationLeg(.apertium, $0.key), $0.value) }))
    }

    /// A planner over Apertium alone, with a fixed list of installed pairs.
    public init(
        installedPairs: Set<LanguagePair>, pivots: [String] = LanguageTable.pivots, scores: [TranslationRoute: Double] = RouteMeasurements.chrF,
        memory: [LanguagePair: Double] = RouteMeasurements.pipelineMiB
    ) {
        self.init(installed: { installedPairs.contains($0) }, pivots: pivots, scores: scores, memory: memory)
    }

    /// Whether Apertium's pair is installed (for the hints that name a missing package).
    public func installed(_ pair: LanguagePair) -> Bool { offers(TranslationLeg(.apertium, pair)) }

    /// Apertium's routes for `pair`: its own pair, then the pivots in order.
    private func apertiumRoutes(for pair: LanguagePair) -> [TranslationRoute] {
        guard engines.contains(.apertium), pair.source != pair.target else { return [] }
        var routes: [TranslationRoute] = []
        if installed(pair) { routes.append(TranslationRoute(pair)) }
        for pivot in pivots where pivot != pair.source && pivot != pair.target {
            let route = TranslationRoute(pair, via: pivot)
            if route.legs.allSatisfy(offers) { routes.append(route) }
        }
        return routes
    }

    /// Every route what is offered allows for `pair`: the one-leg routes first (Apertium's,
    /// then the other engines'), then Apertium's pivots in order, then the other engines' legs
    /// joined to Apertium routes.
    public func candidates(for pair: LanguagePair) -> [TranslationRoute] {
        guard pair.source != pair.target else { return [] }
        let apertium = apertiumRoutes(for: pair)
        var routes = apertium.filter { $0.legs.count == 1 }
        let others = engines.filter { $0 != .apertium }
        for engine in others where offers(TranslationLeg(engine, pair)) { routes.append(TranslationRoute(TranslationLeg(engine, pair))) }
        routes += apertium.filter { $0.legs.count > 1 }
        for engine in others {
            for middle in languages where middle != pair.source && middle != pair.target {
                let first = TranslationLeg(engine, LanguagePair(pair.source, middle))
                if offers(first) {
                    for rest in apertiumRoutes(for: LanguagePair(middle, pair.target)) {
                        routes.append(TranslationRoute(first, rest.legs[0]) + rest.legs.dropFirst())
                    }
                }
                let last = TranslationLeg(engine, LanguagePair(middle, pair.target))
                if offers(last) {
                    for rest in apertiumRoutes(for: LanguagePair(pair.source, middle)) {
                        routes.append(rest + [last])
                    }
                }
            }
        }
        return routes.filter(\.visitsEachLanguageOnce)
    }

    /// A route's chrF less its warm memory (`mibPerPoint`); nil when its chrF was not measured.
    public func value(of route: TranslationRoute) -> Double? {
        guard let chrF = scores[route] else { return nil }
        return chrF - route.legs.reduce(0) { $0 + (memory[$1] ?? 0) } / Self.mibPerPoint
    }

    /// The route `pair` takes; nil when nothing offered reaches it.
    public func route(for pair: LanguagePair) -> TranslationRoute? {
        let routes = candidates(for: pair)
        // A model made for the direction and not measured here (one a user installed) is taken
        // over every other route: a direct neural model beats rules and pivots wherever one was
        // measured (en<->pt: 69 chrF against Apertium's 21; docs/benchmarks.md).
        if let model = routes.first(where: { $0.legs.count == 1 && $0.legs[0].engine != .apertium && value(of: $0) == nil }) {
            return model
        }
        let direct = best(of: routes.filter { $0.legs.count == 1 })
        let longer = best(of: routes.filter { $0.legs.count > 1 })
        guard let direct else { return longer }
        guard let longer, let longerValue = value(of: longer), let directValue = value(of: direct),
            longerValue > directValue + Self.pivotMargin
        else { return direct }
        return longer
    }

    /// The route of best value (the first of equals); unmeasured ones rank after measured ones, in order.
    private func best(of routes: [TranslationRoute]) -> TranslationRoute? {
        routes.enumerated().max { left, right in
            let (l, r) = (value(of: left.element) ?? -.infinity, value(of: right.element) ?? -.infinity)
            return l < r || (l == r && left.offset > right.offset)
        }?.element
    }
}

extension TranslationRoute {
    /// This route with `legs` after it.
    static func + (route: TranslationRoute, legs: some Sequence<TranslationLeg>) -> TranslationRoute {
        let all = route.legs + legs
        return TranslationRoute(legs: all[0], Array(all.dropFirst()))
    }

    /// Whether no language is reached twice (en->pt->en->es is no route).
    var visitsEachLanguageOnce: Bool {
        let languages = [pair.source] + legs.map(\.pair.target)
        return Set(languages).count == languages.count
    }
}

/// A translator that goes through a pivot where its engines have no direct pair, or where a
/// longer route measured clearly better (`RoutePlanner`): each leg is its engine's own
/// translation, so a route is a composition of them. Routes are planned at each question, so
/// a pair installed while parleyd runs is used from its next turn.
public final class RoutedTranslator: Translator {
    /// The translator of each engine.
    public let engines: [TranslationEngine: any Translator]
    public let planner: RoutePlanner
    /// The engine its backend is named for: routes wholly on it are "direct" or "via es"; the
    /// others name each leg's engine (`TranslationRoute.name(home:)`).
    public let home: TranslationEngine
    /// When set, it offers only the routes that use this engine, and leaves the rest to the
    /// next backend of the chain (a Bergamot backend in front of Apertium's).
    public let requiring: TranslationEngine?

    /// Apertium alone, through pivots where it has no pair.
    public convenience init(
        base: any Translator, scores: [TranslationRoute: Double] = RouteMeasurements.chrF,
        memory: [LanguagePair: Double] = RouteMeasurements.pipelineMiB
    ) {
        self.init(
            engines: [.apertium: base], home: .apertium, scores: scores,
            memory: Dictionary(uniqueKeysWithValues: memory.map { (TranslationLeg(.apertium, $0.key), $0.value) }))
    }

    public init(
        engines: [TranslationEngine: any Translator], home: TranslationEngine, requiring: TranslationEngine? = nil,
        scores: [TranslationRoute: Double] = RouteMeasurements.chrF, memory: [TranslationLeg: Double] = RouteMeasurements.legMiB
    ) {
        self.engines = engines
        self.home = home
        self.requiring = requiring
        self.planner = RoutePlanner(
            offers: { [engines] leg in engines[leg.engine]?.supports(leg.pair) ?? false }, engines: Array(engines.keys), scores: scores,
            memory: memory)
    }

    /// The route `pair` takes through this translator; nil when it has none (or, with
    /// `requiring`, when the best route does not use that engine).
    public func route(for pair: LanguagePair) -> TranslationRoute? {
        guard let route = planner.route(for: pair) else { return nil }
        if let requiring, !route.legs.contains(where: { $0.engine == requiring }) { return nil }
        return route
    }

    public func supports(_ pair: LanguagePair) -> Bool { route(for: pair) != nil }

    public func routeName(for pair: LanguagePair) -> String? { route(for: pair)?.name(home: home) }

    /// Starts every leg of the pair's route.
    public func prepare(_ pair: LanguagePair) async throws {
        guard let route = route(for: pair) else { throw TranslationError("no installed route for \(pair)") }
        for leg in route.legs { try await translator(for: leg).prepare(leg.pair) }
    }

    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        try await translateNamingRoute(text, from: source, to: target).text
    }

    public func translateNamingRoute(_ text: String, from source: String, to target: String) async throws -> RoutedTranslation {
        let pair = LanguagePair(source, target)
        guard let route = route(for: pair) else { throw TranslationError("no installed route for \(pair)") }
        var words = text
        for leg in route.legs {
            do {
                words = try await translator(for: leg).translate(words, from: leg.pair.source, to: leg.pair.target)
            } catch let error as TranslationError where route.legs.count > 1 {
                throw TranslationError("the \(leg) leg of the \(pair) route: \(error)")
            }
            guard !words.isEmpty || text.isEmpty else {
                throw TranslationError("the \(leg) leg of the \(pair) route \(route) came back empty")
            }
        }
        let name = route.name(home: home)
        return RoutedTranslation(text: words, route: name == "direct" ? nil : name)
    }

    /// The pairs of the engine it is named for.
    public func availablePairs() async throws -> [LanguagePair] { try await engines[home]?.availablePairs() ?? [] }

    private func translator(for leg: TranslationLeg) throws(TranslationError) -> any Translator {
        guard let translator = engines[leg.engine] else { throw TranslationError("no \(leg.engine) translator for the \(leg) leg") }
        return translator
    }
}

/// A translation and the way it went: the backend and, through a pivot, "via xx"
/// ("apertium via ca"), or each leg with its engine ("bergamot en-pt + apertium pt-es"); nil
/// when the translator does not say.
public struct RoutedTranslation: Sendable, Equatable {
    public var text: String
    public var route: String?

    public init(text: String, route: String?) {
        self.text = text
        self.route = route
    }
}
