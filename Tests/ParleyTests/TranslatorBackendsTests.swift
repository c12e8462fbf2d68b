import ParleyCore
import Synchronization
import Testing
import ParleyTesting
@testable import ParleyTranslation

/// Lines a chain logs.
private final class Lines: Sendable {
    let value = Mutex<[String]>([])
}

/// A translator that offers some pairs and counts what start-up and turns ask of it.
private final class Offering: Translator {
    private let offered: Set<LanguagePair>
    let prepared = Mutex<[LanguagePair]>([])
    let asked = Mutex<[String]>([])

    init(_ offered: Set<LanguagePair>) { self.offered = offered }

    func supports(_ pair: LanguagePair) -> Bool { offered.contains(pair) }
    func prepare(_ pair: LanguagePair) async throws { prepared.withLock { $0.append(pair) } }
    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        asked.withLock { $0.append(text) }
        return "[\(target)] \(text)"
    }
}

/// What the daemon asks of any translator, without knowing whether it is a chain: its
/// backends (`parley languages`) and a retry someone asked for (`parley retry`).
@Suite("Translator: backends and retries, through the protocol")
struct TranslatorBackendsTests {
    @Test func aChainListsItsBackendsAndAnyOtherTranslatorIsItsOwnOne() {
        let echo = EchoTranslator()
        let chain: any Translator = TranslatorChain([.init(name: "first", translator: echo), .init(name: "second", translator: EchoTranslator())])
        #expect(chain.backends.map(\.name) == ["first", "second"])
        let single: any Translator = echo
        #expect(single.backends.map(\.name) == ["translator"])
        #expect(single.backends.first?.translator as? EchoTranslator === echo)
    }

    @Test func aRetryThroughTheProtocolAsksTheBackendAChainSkips() async throws {
        let down = DownTranslator()
        let chain = TranslatorChain(
            [.init(name: "down", translator: down)],
            timing: .init(backoff: [], deadline: .seconds(600), clock: ParleyClock(ManualClock())))
        let translator: any Translator = chain
        await #expect(throws: TranslationError.self) { try await translator.translate("one", from: "en", to: "es") }
        #expect(chain.isSkipping("down"))
        down.work(true)
        // A turn still skips it; a retry someone asked for asks it, and closes its circuit.
        await #expect(throws: TranslationError.self) { try await translator.translate("two", from: "en", to: "es") }
        #expect(try await translator.retranslate("three", from: "en", to: "es") == "[es] three")
        #expect(!chain.isSkipping("down"))
        #expect(down.asked == ["one", "three"])
    }

    @Test func aTurnTheNextBackendTranslatesIsOneLineForTheLog() async throws {
        let lines = Lines()
        let chain = TranslatorChain(
            [.init(name: "first", translator: EchoTranslator(failing: ["two"])), .init(name: "second", translator: EchoTranslator())],
            cacheCapacity: 0, fellBack: { line in lines.value.withLock { $0.append(line) } })
        #expect(try await chain.translate("one", from: "en", to: "es") == "[es] one")
        #expect(lines.value.withLock { $0 }.isEmpty, "the first backend answered")
        #expect(try await chain.translateNamingBackend("two", from: "en", to: "es") == ("[es] two", "second"))
        let logged = lines.value.withLock { $0 }
        #expect(logged.count == 1)
        #expect(logged.first?.hasPrefix("translation: first failed (") == true && logged.first?.hasSuffix("; second translated the turn instead (second)") == true, "\(logged)")
    }

    @Test func aRetryOfAnyOtherTranslatorIsATranslation() async throws {
        let echo = EchoTranslator()
        let translator: any Translator = echo
        #expect(try await translator.retranslate("hola", from: "es", to: "en") == "[en] hola")
    }

    /// Apertium behind Bergamot: its own English-Spanish pipeline is not started at start-up
    /// (about 110 MiB), only by a turn Bergamot fails; a pair Bergamot does not offer is still
    /// started and checked, as is every pair of a backend that does not stand by.
    @Test func aStandingByBackendIsNotStartedForThePairsOfTheOnesBeforeIt() async throws {
        let enEs = LanguagePair("en", "es"), esEn = LanguagePair("es", "en"), esFr = LanguagePair("es", "fr")
        let bergamot = Offering([enEs, esEn])
        let apertium = Offering([enEs, esEn, esFr])
        let chain = TranslatorChain([.init(name: "bergamot", translator: bergamot), .init(name: "apertium", translator: apertium, standby: true)])
        #expect(await chain.checkBackends([enEs, esEn]).isEmpty)
        #expect(bergamot.prepared.withLock { $0 } == [enEs])
        #expect(apertium.prepared.withLock { $0 }.isEmpty && apertium.asked.withLock { $0 }.isEmpty, "it stands by for en-es and es-en")
        #expect(await chain.checkBackends([enEs, esFr]).isEmpty)
        #expect(apertium.prepared.withLock { $0 } == [esFr], "no backend before it offers es-fr")

        let unchecked = Offering([enEs])
        let behind = TranslatorChain([.init(name: "first", translator: Offering([enEs])), .init(name: "second", translator: unchecked)])
        #expect(await behind.checkBackends([enEs]).isEmpty)
        #expect(unchecked.prepared.withLock { $0 } == [enEs], "a backend that does not stand by is started and checked")
    }
}
