import Foundation
import ParleyCore
import Synchronization
import Testing
import ParleyTesting
@testable import ParleyTranslation

/// Short waits, so a test of three retries does not take seven seconds. The deadline is long:
/// tests that count retries must not depend on how busy the machine is (other suites run
/// alongside and can hold the few threads of the concurrency pool for seconds).
private let quick = TranslatorChain.Timing(backoff: [.milliseconds(10), .milliseconds(20), .milliseconds(40)], deadline: .seconds(60))

private func reversed(_ text: String) -> String { String(text.reversed()) }

/// The chain against real HTTP servers that misbehave, each started by the test on a loopback port.
@Suite("Translation backends: faults", .blocksThreads)
struct TranslatorChainFaultTests {
    let pair = ("en", "es")

    func apy(_ server: FaultServer, timeoutMs: Int = 5_000) -> TranslatorChain.Backend {
        .init(name: "apy-\(server.port)", translator: ApyTranslator(url: server.url, timeoutMs: timeoutMs))
    }

    func libre(_ server: FaultServer, timeoutMs: Int = 5_000, key: String? = nil) -> TranslatorChain.Backend {
        .init(name: "libre-\(server.port)", translator: LibreTranslateTranslator(url: server.url, timeoutMs: timeoutMs, apiKey: key))
    }

    /// The chain with `backends`, the shipped backoff and `deadline`, on `clock`, which only the
    /// waits the test lets pass move.
    fileprivate func gated(_ backends: [TranslatorChain.Backend], deadline: Duration, _ clock: ManualClock) -> TranslatorChain {
        TranslatorChain(backends, timing: TranslatorChain.Timing(deadline: deadline, clock: ParleyClock(clock)))
    }

    /// A server answering 500 and a working one behind a gated chain with `deadline`, asked
    /// one sentence.
    fileprivate func askFailingThenWorking(deadline: Duration) async throws -> (
        failing: FaultServer, working: FaultServer, clock: ManualClock, answer: Task<(text: String, backend: String), any Error>
    ) {
        let failing = try await FaultServer("500")
        let working = try await FaultServer("echo")
        let clock = ManualClock()
        let chain = gated([libre(failing), libre(working)], deadline: deadline, clock)
        let answer = Task { try await chain.translateNamingBackend("the house is red", from: "en", to: "es") }
        return (failing, working, clock, answer)
    }

    // A missing wait would leave `letSleepsPass` waiting: the limit turns that into a failure.
    @Test(.timeLimit(.minutes(1))) func a500IsRetriedThreeTimesBackingOffOneTwoFourSecondsThenTheNextBackendAnswers() async throws {
        let (failing, working, clock, answer) = try await askFailingThenWorking(deadline: .seconds(60))
        #expect(await clock.letSleepsPass(3) == [.seconds(1), .seconds(2), .seconds(4)])
        let (text, backend) = try await answer.value
        #expect(text == reversed("the house is red"))
        #expect(backend == "libre-\(working.port)")
        #expect(try await failing.count().requests == 4, "one request and three retries")
    }

    // A missing wait would leave `letSleepsPass` waiting: the limit turns that into a failure.
    @Test(.timeLimit(.minutes(1))) func aRetryThatWouldEndPastTheDeadlineIsNotMade() async throws {
        // 1 + 2 s fit in 5 s; the 4 s wait would end past it, so the next backend answers.
        let (failing, working, clock, answer) = try await askFailingThenWorking(deadline: .seconds(5))
        #expect(await clock.letSleepsPass(2) == [.seconds(1), .seconds(2)])
        #expect(try await answer.value.backend == "libre-\(working.port)")
        #expect(try await failing.count().requests == 3, "one request and the two retries that fit")
    }

    @Test func aClosedConnectionIsTransientAndRetried() async throws {
        let closing = try await FaultServer("close")
        let working = try await FaultServer("echo")
        let chain = TranslatorChain([apy(closing), apy(working)], timing: quick)
        #expect(try await chain.translate("good morning", from: "en", to: "es") == reversed("good morning"))
        #expect(try await closing.count().requests == 4)
        #expect(try await working.count().requests == 1)
    }

    @Test func aServerThatHangsGivesWayWhenTheDeadlinePasses() async throws {
        let hanging = try await FaultServer("hang")
        let working = try await FaultServer("echo")
        // The request's own timeout is ten minutes: only the turn's deadline moves the chain on
        // (long before; the bound is loose for a busy machine).
        var timing = quick
        timing.deadline = .milliseconds(800)
        let chain = TranslatorChain([libre(hanging, timeoutMs: 600_000), libre(working)], timing: timing)
        let started = ContinuousClock.now
        #expect(try await chain.translate("where is the station", from: "en", to: "es") == reversed("where is the station"))
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(800) && elapsed < .seconds(120), "took \(elapsed)")
        #expect(try await hanging.count().requests == 1)
    }

    @Test func aRequestThatTimesOutIsRetried() async throws {
        let hanging = try await FaultServer("hang")
        let chain = TranslatorChain([apy(hanging, timeoutMs: 1_000)], timing: quick)
        do {
            _ = try await chain.translate("hello", from: "en", to: "es")
            Issue.record("the server never answers; the chain must throw")
        } catch {
            #expect("\(error)".contains("within 1000 ms") && "\(error)".contains("after 3 retries"), "\(error)")
        }
        // On a busy machine a request can time out before it reaches the server.
        let requests = try await hanging.count().requests
        #expect((2...4).contains(requests), "\(requests) requests")
    }

    @Test func a429CoolsTheBackendDownForRetryAfterWhileTheNextTakesTheTurn() async throws {
        let limited = try await FaultServer("429", "30")
        let working = try await FaultServer("echo")
        let clock = ManualClock()
        var timing = quick
        timing.clock = ParleyClock(clock)
        let chain = TranslatorChain([libre(limited), libre(working)], timing: timing)
        let asked = timing.clock.now
        #expect(try await chain.translate("one", from: "en", to: "es") == reversed("one"))
        #expect(try await limited.count().requests == 1, "a 429 is not retried")
        // Thirty seconds from when the 429 came.
        #expect(chain.coolingDownUntil("libre-\(limited.port)") == asked + .seconds(30))
        // While it cools down, the limited server is not asked.
        clock.advance(by: .seconds(29))
        #expect(try await chain.translate("two", from: "en", to: "es") == reversed("two"))
        #expect(try await limited.count().requests == 1)
        // Once Retry-After has passed, it is asked again.
        clock.advance(by: .seconds(1))
        try await limited.setMode("echo")
        #expect(try await chain.translate("three", from: "en", to: "es") == reversed("three"))
        #expect(try await limited.count().requests == 2)
        #expect(try await working.count().requests == 2)
    }

    @Test func a429WithoutRetryAfterWaitsThirtySeconds() async throws {
        let limited = try await FaultServer("429")
        let chain = TranslatorChain([apy(limited)], timing: quick)
        let before = quick.clock.now
        await #expect(throws: TranslationError.self) { try await chain.translate("one", from: "en", to: "es") }
        let after = quick.clock.now
        let until = try #require(chain.coolingDownUntil("apy-\(limited.port)"))
        #expect(until - before >= .seconds(30) && until - after <= .seconds(30))
    }

    @Test func otherClientErrorsAreNotRetried() async throws {
        let forbidden = try await FaultServer("403")
        let working = try await FaultServer("echo")
        let chain = TranslatorChain([libre(forbidden), libre(working)], timing: quick)
        #expect(try await chain.translate("hello", from: "en", to: "es") == reversed("hello"))
        #expect(try await forbidden.count().requests == 1)
    }

    @Test func whenEveryBackendFailsTheErrorNamesEach() async throws {
        let failing = try await FaultServer("500")
        let forbidden = try await FaultServer("403")
        let chain = TranslatorChain([libre(failing), apy(forbidden)], timing: quick)
        do {
            _ = try await chain.translate("hello", from: "en", to: "es")
            Issue.record("every backend failed; the chain must throw")
        } catch {
            let message = "\(error)"
            #expect(message.contains("libre-\(failing.port)") && message.contains("HTTP 500"))
            #expect(message.contains("apy-\(forbidden.port)") && message.contains("HTTP 403"))
        }
    }

    @Test func aDeadServerIsTransient() async throws {
        let port = try freeLoopbackPort()
        let chain = TranslatorChain(
            [.init(name: "dead", translator: ApyTranslator(url: try #require(URL(string: "http://127.0.0.1:\(port)"))))], timing: quick)
        do {
            _ = try await chain.translate("hello", from: "en", to: "es")
            Issue.record("nothing listens; the chain must throw")
        } catch {
            #expect("\(error)".contains("/translate failed: Connection refused (after 3 retries)"), "\(error)")
        }
    }

    @Test func libreTranslateSendsTheAPIKeyAndTextIntact() async throws {
        let server = try await FaultServer("echo")
        let translator = LibreTranslateTranslator(url: server.url, apiKey: "s3cret-key")
        let text = "a+b & c? 100% \"quoted\" ñandú"
        #expect(try await translator.translate(text, from: "en", to: "es") == reversed(text))
        #expect(try await server.count().key == "s3cret-key")
        // Its language list, in LibreTranslate's codes, becomes ISO 639-1 pairs.
        #expect(translator.supports(LanguagePair("en", "ca")), "unknown until the server is asked")
        let pairs = Set(try await translator.availablePairs().map(\.description))
        #expect(pairs == ["en-es", "en-zh", "es-en", "zh-en"])
        #expect(!translator.supports(LanguagePair("en", "ca")))
        // APy's GET keeps the same text intact through the query string.
        #expect(try await ApyTranslator(url: server.url).translate(text, from: "en", to: "es") == reversed(text))
    }
}

/// A translator that counts its calls (no I/O).
private final class CountingTranslator: Translator {
    let calls = Mutex(0)
    func supports(_ pair: LanguagePair) -> Bool { true }
    func prepare(_ pair: LanguagePair) async throws {}
    func translate(_ text: String, from source: String, to target: String) async throws -> String {
        calls.withLock { $0 += 1 }
        return reversed(text)
    }
}

@Suite("Translation cache", .startsProcesses)
struct TranslationCacheTests {
    @Test func aRepeatedPhraseCostsNothing() async throws {
        let backend = CountingTranslator()
        let chain = TranslatorChain([.init(name: "counting", translator: backend)], timing: quick)
        #expect(try await chain.translateNamingBackend("hello", from: "en", to: "es") == (reversed("hello"), "counting"))
        #expect(try await chain.translateNamingBackend("hello", from: "en", to: "es") == (reversed("hello"), "cache"))
        _ = try await chain.translate("hello", from: "en", to: "ca")
        #expect(backend.calls.withLock { $0 } == 2, "another target is another translation")
    }

    @Test func theLeastRecentlyUsedIsDroppedFirst() {
        let cache = TranslationCache(capacity: 2)
        let a = TranslationCache.Key(source: "en", target: "es", text: "a")
        let b = TranslationCache.Key(source: "en", target: "es", text: "b")
        let c = TranslationCache.Key(source: "en", target: "es", text: "c")
        cache.insert("A", for: a)
        cache.insert("B", for: b)
        #expect(cache.value(for: a) == "A")  // a is now more recent than b
        cache.insert("C", for: c)
        #expect(cache.value(for: b) == nil)
        #expect(cache.value(for: a) == "A")
        #expect(cache.value(for: c) == "C")
        #expect(cache.count == 2)
    }

    @Test func aZeroCapacityKeepsNothing() {
        let cache = TranslationCache(capacity: 0)
        let key = TranslationCache.Key(source: "en", target: "es", text: "a")
        cache.insert("A", for: key)
        #expect(cache.value(for: key) == nil)
    }
}

/// The HTTP path against a real Apertium APy, started by the test on a loopback port.
@Suite("Apertium APy, for real", .startsProcesses)
struct ApyTranslatorTests {
    @Test func translatesBothWaysAndListsItsPairs() async throws {
        let server = try await ApyServer()
        let translator = ApyTranslator(url: server.url)
        let spanish = try await translator.translate("the house is red", from: "en", to: "es")
        #expect(spanish.lowercased().contains("casa"))
        let english = try await translator.translate("el perro es grande", from: "es", to: "en")
        #expect(english.lowercased().contains("dog"))
        let pairs = try await translator.availablePairs()
        #expect(pairs.contains(LanguagePair("en", "es")) && pairs.contains(LanguagePair("es", "en")))
        #expect(!translator.supports(LanguagePair("en", "ca")), "once the pairs are known, only they are offered")
        // An unknown word is not marked unless asked for.
        #expect(!(try await translator.translate("the zorgblatt is red", from: "en", to: "es")).contains("*"))
        let marking = ApyTranslator(url: server.url, keepUnknownMarks: true)
        #expect(try await marking.translate("the zorgblatt is red", from: "en", to: "es").contains("*zorgblatt"))
    }

    @Test func aPairItDoesNotHaveIsAPermanentFailure() async throws {
        let server = try await ApyServer()
        do {
            _ = try await ApyTranslator(url: server.url).translate("hello", from: "en", to: "ca")
            Issue.record("APy has no eng-cat here")
        } catch let error as BackendError {
            #expect(error.kind == .permanent)
            #expect(error.description.contains("400"))
        }
    }
}

@Suite("Language codes", .startsProcesses)
struct LanguageCodeTests {
    @Test func apertiumNamesMapToISO6391() {
        #expect(LanguageCodes.iso6391(fromApertium: "eng") == "en")
        #expect(LanguageCodes.iso6391(fromApertium: "es") == "es")
        #expect(LanguageCodes.iso6391(fromApertium: "eng_US") == nil)
        let pairs = LanguageCodes.apertiumPairs(modesDirectory: "/usr/share/apertium/modes")
        #expect(pairs.contains(LanguagePair("en", "es")) && pairs.contains(LanguagePair("es", "en")))
        #expect(LanguageCodes.libreTranslate("zh") == "zh-Hans" && LanguageCodes.iso6391(fromLibreTranslate: "zh-Hans") == "zh")
    }
}


@Suite("Translation backends: circuit breaker", .startsProcesses)
struct CircuitBreakerTests {
    /// No retries, a manual clock for the probes, and a cool-down of 30 s doubling up to 120 s.
    fileprivate func makeChain(_ flaky: DownTranslator, _ clock: ManualClock) -> TranslatorChain {
        let timing = TranslatorChain.Timing(
            backoff: [], deadline: .seconds(600), clock: ParleyClock(clock), coolDown: .seconds(30), longestCoolDown: .seconds(120))
        return TranslatorChain(
            [.init(name: "flaky", translator: flaky), .init(name: "echo", translator: CountingTranslator())], timing: timing, cacheCapacity: 0)
    }

    @Test func aFailedBackendIsSkippedAndProbedUntilItAnswers() async throws {
        let flaky = DownTranslator { text, _ in reversed(text) }
        let clock = ManualClock()
        let chain = makeChain(flaky, clock)
        // It fails a turn: the next backend answers, and the circuit breaks.
        #expect(try await chain.translateNamingBackend("one", from: "en", to: "es") == (reversed("one"), "echo"))
        #expect(chain.isSkipping("flaky"))
        // The turns that follow do not ask it at all.
        #expect(try await chain.translateNamingBackend("two", from: "en", to: "es") == (reversed("two"), "echo"))
        #expect(try await chain.translateNamingBackend("three", from: "en", to: "es") == (reversed("three"), "echo"))
        #expect(flaky.asked == ["one"])
        // The probe waits 30 s, asks a fixed word (no one's words), fails, and waits twice as long,
        // then longer, up to 120 s.
        var waits = await clock.letSleepsPass(4)
        let wait = await clock.nextSleep()
        waits.append(wait)
        #expect(waits == [.seconds(30), .seconds(60), .seconds(120), .seconds(120), .seconds(120)])
        #expect(flaky.asked == ["one", "hello", "hello", "hello", "hello"])
        #expect(chain.isSkipping("flaky"))
        // Back up: the next probe closes the circuit and turns use it again.
        flaky.work(true)
        clock.advance(by: wait)
        await chain.probesFinished()
        #expect(!chain.isSkipping("flaky"))
        #expect(try await chain.translateNamingBackend("four", from: "en", to: "es") == (reversed("four"), "flaky"))
    }

    @Test func aRetrySomeoneAskedForAsksASkippedBackendAndClosesItsCircuit() async throws {
        let flaky = DownTranslator { text, _ in reversed(text) }
        let chain = TranslatorChain(
            [.init(name: "flaky", translator: flaky)],
            timing: .init(backoff: [], deadline: .seconds(600), clock: ParleyClock(ManualClock())))
        await #expect(throws: TranslationError.self) { try await chain.translate("one", from: "en", to: "es") }
        #expect(chain.isSkipping("flaky"))
        flaky.work(true)
        #expect(try await chain.translateNamingBackend("one", from: "en", to: "es", askingSkipped: true) == (reversed("one"), "flaky"))
        #expect(!chain.isSkipping("flaky"))
        #expect(try await chain.translateNamingBackend("two", from: "en", to: "es") == (reversed("two"), "flaky"))
    }

    @Test func theErrorOfASkippedBackendSaysWhy() async throws {
        // The probe never wakes in this test; the chain cancels it when it goes.
        let flaky = DownTranslator { text, _ in reversed(text) }
        let chain = TranslatorChain(
            [.init(name: "flaky", translator: flaky)],
            timing: .init(backoff: [], deadline: .seconds(600), clock: ParleyClock(ManualClock())))
        await #expect(throws: TranslationError.self) { try await chain.translate("one", from: "en", to: "es") }
        do {
            _ = try await chain.translate("two", from: "en", to: "es")
            Issue.record("the only backend is skipped; the turn must fail")
        } catch {
            #expect("\(error)".contains("flaky: skipped since it failed (down: connection refused"), "\(error)")
        }
        #expect(flaky.asked == ["one"], "a skipped backend costs a turn nothing")
    }

    @Test func aBackendThatRefusesIsNotSkipped() async throws {
        // A 4xx or an uninstalled pair is the sentence's or the config's problem, not a dead server.
        let forbidden = try await FaultServer("403")
        let chain = TranslatorChain(
            [.init(name: "forbidden", translator: LibreTranslateTranslator(url: forbidden.url))], timing: quick)
        for _ in 0..<2 {
            await #expect(throws: TranslationError.self) { try await chain.translate("hello", from: "en", to: "es") }
        }
        #expect(!chain.isSkipping("forbidden"))
        #expect(try await forbidden.count().requests == 2)
    }

    @Test func aBackendThatDoesNotAnswerAtStartIsNamedAndSkipped() async throws {
        let port = try freeLoopbackPort()
        let flaky = DownTranslator { text, _ in reversed(text) }
        flaky.work(true)
        let chain = TranslatorChain(
            [
                .init(name: "libretranslate", translator: LibreTranslateTranslator(url: try #require(URL(string: "http://127.0.0.1:\(port)")))),
                .init(name: "working", translator: flaky),
            ],
            timing: .init(backoff: [], deadline: .seconds(600), clock: ParleyClock(ManualClock())))
        let warnings = await chain.checkBackends([LanguagePair("en", "es")])
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("translation backend libretranslate does not answer") == true, "\(warnings)")
        #expect(chain.isSkipping("libretranslate") && !chain.isSkipping("working"))
        #expect(try await chain.translateNamingBackend("one", from: "en", to: "es") == (reversed("one"), "working"))
    }

    /// A local backend starting cold (two Apertium pipelines of a pivot on a busy machine) is
    /// not a backend that does not answer: the check waits for its `prepare`.
    @Test func aBackendStillStartingColdIsNotSkipped() async throws {
        final class ColdStart: Translator {
            let warm = Mutex(false)
            func supports(_ pair: LanguagePair) -> Bool { true }
            func prepare(_ pair: LanguagePair) async throws {
                try await Task.sleep(for: .milliseconds(600))
                warm.withLock { $0 = true }
            }
            func translate(_ text: String, from source: String, to target: String) async throws -> String {
                if !warm.withLock({ $0 }) { try await Task.sleep(for: .seconds(30)) }
                return reversed(text)
            }
        }
        let chain = TranslatorChain(
            [.init(name: "apertium", translator: ColdStart())],
            timing: .init(backoff: [], deadline: .milliseconds(300), clock: ParleyClock(ManualClock())))
        let warnings = await chain.checkBackends([LanguagePair("en", "es")])
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(!chain.isSkipping("apertium"))
    }
}

@Suite("Translation backends: limits", .startsProcesses)
struct TranslationLimitTests {
    @Test(arguments: ["huge", "huge-unsized"])
    func aReplyLargerThanOneMebibyteIsRejected(mode: String) async throws {
        let server = try await FaultServer(mode)
        for translator in [LibreTranslateTranslator(url: server.url) as any Translator, ApyTranslator(url: server.url)] {
            do {
                _ = try await translator.translate("hello", from: "en", to: "es")
                Issue.record("a 3 MiB answer must be rejected")
            } catch let error as BackendError {
                #expect(error.kind == .permanent)
                #expect(error.description.contains("was larger than the 1 MiB accepted"), "\(error)")
            }
        }
    }

    @Test func aTranslationFarLongerThanItsSentenceIsRejectedAndTheNextBackendAnswers() async throws {
        let long = try await FaultServer("long")
        let working = try await FaultServer("echo")
        let chain = TranslatorChain(
            [.init(name: "long", translator: LibreTranslateTranslator(url: long.url)), .init(name: "echo", translator: LibreTranslateTranslator(url: working.url))],
            timing: quick)
        let sentence = "where is the station"
        #expect(try await chain.translateNamingBackend(sentence, from: "en", to: "es") == (reversed(sentence), "echo"))
        let only = TranslatorChain([.init(name: "long", translator: LibreTranslateTranslator(url: long.url))], timing: quick)
        do {
            _ = try await only.translate(sentence, from: "en", to: "es")
            Issue.record("a translation 30 times its sentence's length must be rejected")
        } catch {
            #expect("\(error)".contains("long: its translation was"), "\(error)")
            #expect("\(error)".contains("was rejected; check the server"), "\(error)")
        }
        #expect(!only.isSkipping("long"))
        // Within the limit, a long answer is fine.
        #expect(TranslatorChain.longestTranslation(of: sentence) == 400)
    }
}
