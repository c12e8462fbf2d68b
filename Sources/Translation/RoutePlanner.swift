import ParleyCore

/// How one direction is translated: straight through its own pair, or through a pivot
/// language (two pairs, one after the other).
public struct TranslationRoute: Sendable, Hashable, CustomStringConvertible {
    public var pair: LanguagePair
    /// The language in between; nil for a direct pair.
    public var via: String?

    public init(_ pair: LanguagePair, via: String? = nil) {
        self.pair = pair
        self.via = via
    }

    public init(_ source: String, _ target: String, via: String? = nil) {
        self.init(LanguagePair(source, target), via: via)
    }

    /// The pairs translated one after the other.
    public var legs: [LanguagePair] {
        guard let via else { return [pair] }
        return [LanguagePair(pair.source, via), LanguagePair(via, pair.target)]
    }

    /// "direct", or "via es".
    public var description: String { via.map { "via \($0)" } ?? "direct" }
}

/// Chooses each direction's route from the pairs installed, measured quality and measured
/// memory. Pure: what is installed is a question it is given, so tests use an in-memory list.
///
/// A route's value is its chrF on FLORES less the memory its legs keep warm, at one chrF point
/// per `mibPerPoint` MiB (a pivot through Catalan can cost 5 to 9 times the memory of a direct
/// pair: `ca-fr` alone is 626 MiB; Parley runs on small boards).
/// - A direction with its own pair is translated directly, unless a pivot's value beats the
///   direct pair's by more than `pivotMargin` (a pivot also costs a second translation per turn).
/// - A direction without one goes through the pivot of best value whose two legs are installed;
///   unmeasured pivots are taken after measured ones, in `LanguageTable.pivots` order (Spanish,
///   then Catalan).
/// - Only one pivot: two legs at most.
public struct RoutePlanner: Sendable {
    public var installed: @Sendable (LanguagePair) -> Bool
    public var pivots: [String]
    /// chrF on FLORES devtest by route (`RouteMeasurements.chrF`, made by bench/routes.py).
    public var scores: [TranslationRoute: Double]
    /// MiB of one warm pipeline by direction (`RouteMeasurements.pipelineMiB`); a leg not
    /// listed costs nothing.
    public var memory: [LanguagePair: Double]

    /// chrF points a pivot must gain over the direct pair (memory counted) to be chosen instead.
    public static let pivotMargin = 1.0
    /// Warm memory worth one chrF point.
    public static let mibPerPoint = 100.0

    public init(
        installed: @escaping @Sendable (LanguagePair) -> Bool, pivots: [String] = LanguageTable.pivots,
        scores: [TranslationRoute: Double] = RouteMeasurements.chrF, memory: [LanguagePair: Double] = RouteMeasurements.pipelineMiB
    ) {
        self.installed = installed
        self.pivots = pivots
        self.scores = scores
        self.memory = memory
    }

    /// A planner over a fixed list of installed pairs.
    public init(
        installedPairs: Set<LanguagePair>, pivots: [String] = LanguageTable.pivots, scores: [TranslationRoute: Double] = RouteMeasurements.chrF,
        memory: [LanguagePair: Double] = RouteMeasurements.pipelineMiB
    ) {
        self.init(installed: { installedPairs.contains($0) }, pivots: pivots, scores: scores, memory: memory)
    }

    /// Every route the installed pairs allow for `pair`: the direct one first, then the pivots in order.
    public func candidates(for pair: LanguagePair) -> [TranslationRoute] {
        guard pair.source != pair.target else { return [] }
        var routes: [TranslationRoute] = []
        if installed(pair) { routes.append(TranslationRoute(pair)) }
        for pivot in pivots where pivot != pair.source && pivot != pair.target {
            let route = TranslationRoute(pair, via: pivot)
            if route.legs.allSatisfy(installed) { routes.append(route) }
        }
        return routes
    }

    /// A route's chrF less its warm memory (`mibPerPoint`); nil when its chrF was not measured.
    public func value(of route: TranslationRoute) -> Double? {
        guard let chrF = scores[route] else { return nil }
        return chrF - route.legs.reduce(0) { $0 + (memory[$1] ?? 0) } / Self.mibPerPoint
    }

    /// The route `pair` takes; nil when no installed pairs reach it.
    public func route(for pair: LanguagePair) -> TranslationRoute? {
        let routes = candidates(for: pair)
        let direct = routes.first { $0.via == nil }
        let pivoted = routes.filter { $0.via != nil }
        // The pivot of best value (the first of equals); unmeasured ones rank after measured ones, in order.
        let bestPivot = pivoted.enumerated().max { left, right in
            let (l, r) = (value(of: left.element) ?? -.infinity, value(of: right.element) ?? -.infinity)
            return l < r || (l == r && left.offset > right.offset)
        }?.element
        guard let direct else { return bestPivot }
        guard let bestPivot, let pivotValue = value(of: bestPivot), let directValue = value(of: direct),
            pivotValue > directValue + Self.pivotMargin
        else { return direct }
        return bestPivot
    }
}

/// A translator that goes through a pivot where its backend has no direct pair, or where a
/// pivot measured clearly better (`RoutePlanner`): each leg is the backend's own translation,
/// so a pivot is a composition of two of them. Routes are planned at each question, so a pair
/// installed while parleyd runs is used from its next turn.
public final class RoutedTranslator: Translator {
    public let base: any Translator
    public let planner: RoutePlanner

    public init(
        base: any Translator, scores: [TranslationRoute: Double] = RouteMeasurements.chrF,
        memory: [LanguagePair: Double] = RouteMeasurements.pipelineMiB
    ) {
        self.base = base
        self.planner = RoutePlanner(installed: { [base] in base.supports($0) }, scores: scores, memory: memory)
    }

    public func supports(_ pair: LanguagePair) -> Bool { planner.route(for: pair) != nil }

    public func route(for pair: LanguagePair) -> TranslationRoute? { planner.route(for: pair) }

    public func routeName(for pair: LanguagePair) -> String? { planner.route(for: pair)?.description }

    /// Starts every leg of the pair's route.
    public func prepare(_ pair: LanguagePair) async throws {
        guard let route = planner.route(for: pair) else { throw TranslationError("no installed route for \(pair)") }
        for leg in route.legs { try await base.prepare(leg) }
    }

    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        try await translateNamingRoute(text, from: source, to: target).text
    }

    public func translateNamingRoute(_ text: String, from source: String, to target: String) async throws -> RoutedTranslation {
        let pair = LanguagePair(source, target)
        guard let route = planner.route(for: pair) else { throw TranslationError("no installed route for \(pair)") }
        var words = text
        for leg in route.legs {
            words = try await base.translate(words, from: leg.source, to: leg.target)
            guard !words.isEmpty || text.isEmpty else {
                throw TranslationError("the \(leg) leg of the \(pair) route \(route) came back empty")
            }
        }
        return RoutedTranslation(text: words, route: route.via.map { "via \($0)" })
    }

    public func availablePairs() async throws -> [LanguagePair] { try await base.availablePairs() }
}

/// A translation and the way it went: the backend and, through a pivot, "via xx"
/// ("apertium via ca"); nil when the translator does not say.
public struct RoutedTranslation: Sendable, Equatable {
    public var text: String
    public var route: String?

    public init(text: String, route: String?) {
        self.text = text
        self.route = route
    }
}
