import Foundation
import ParleyTesting
import Testing
@testable import ParleyConfig
@testable import ParleyDaemon
@testable import ParleyTranslation

@Suite("Config: [translator]")
struct TranslatorConfigTests {
    private func parse(_ text: String) throws(ConfigError) -> ParleyConfig {
        try parseConfig(text, environment: ["HOME": "/home/someone"])
    }

    private func error(_ text: String) -> String? { configError(text, environment: ["HOME": "/home/someone"]) }

    @Test func defaultsAreApertiumAloneWithAFiveSecondDeadline() throws {
        let config = try parse("")
        #expect(config.translatorBackends == [.apertium])
        #expect(config.translationDeadlineMs == 5_000 && config.translationTimeoutMs == 5_000)
        #expect(!config.keepUnknownMarks && config.failureNotice)
        #expect(config.libreTranslate.url == "http://127.0.0.1:5000" && config.apertiumApy.url == "http://127.0.0.1:2737")
    }

    @Test func backendsAndTheirTablesAreRead() throws {
        let config = try parse(
            """
            [translator]
            backends = ["apertium", "libretranslate", "apertium-apy"]
            apertium_modes = "modes"
            timeout_ms = 2000
            deadline_ms = 3000
            keep_unknown_marks = true
            failure_notice = false
            cache_size = 10
            [translator.libretranslate]
            url = "https://translate.example.org"
            timeout_ms = 1500
            api_key_file = "libre.key"
            [translator.apertium-apy]
            url = "http://10.0.0.2:2737"
            api_key_credential = "apy-key"
            """)
        #expect(config.translatorBackends == [.apertium, .libreTranslate, .apertiumApy])
        #expect(config.apertiumModesDirectory == "/etc/parley/modes")
        #expect(config.translationTimeoutMs == 2_000 && config.translationDeadlineMs == 3_000 && config.translationCacheSize == 10)
        #expect(config.keepUnknownMarks && !config.failureNotice)
        #expect(config.libreTranslate == HTTPBackendConfig(url: "https://translate.example.org", timeoutMs: 1_500, apiKey: .file("/etc/parley/libre.key")))
        #expect(config.apertiumApy == HTTPBackendConfig(url: "http://10.0.0.2:2737", apiKey: .credential("apy-key")))
    }

    @Test func bergamotIsOnByDefaultAndItsEnginesFolderIsReadLikeTheTranscribers() throws {
        let defaults = try parse("")
        #expect(defaults.bergamotEnabled && defaults.translatorEngines == nil)
        let config = try parse("[translator]\nengines = \"engines\"\n")
        #expect(config.translatorEngines == "/etc/parley/engines" && config.bergamotFolder == "/etc/parley/engines/bergamot")
        let off = try parse("[translator]\nbergamot = false\nengines = \"engines\"\n")
        #expect(!off.bergamotEnabled && off.bergamotFolder == nil)
        #expect(error("[translator]\nbergamot = \"yes\"")?.contains("bergamot") == true)
        #expect(error("[translator]\nengines = \"\"")?.contains("engines") == true)
    }

    @Test func theDaemonPutsBergamotJustBeforeApertiumOnlyWhenItIsInstalledAndOn() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // An engines folder as `make engines` lays Bergamot out (the files' contents are not read here).
        let bergamot = dir.appendingPathComponent("bergamot")
        for folder in ["python/fxtranslate", "models/en-pt", "models/pt-en"] {
            try FileManager.default.createDirectory(at: bergamot.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try Data().write(to: bergamot.appendingPathComponent("parley-bergamot"))
        for code in ["enpt", "pten"] {
            let folder = bergamot.appendingPathComponent("models/\(code.prefix(2))-\(code.suffix(2))")
            for file in ["model.\(code).intgemm.alphas.bin", "vocab.\(code).spm"] { try Data().write(to: folder.appendingPathComponent(file)) }
        }
        var config = ParleyConfig()
        config.speakerA = "en"
        config.speakerB = "pt"
        config.translatorEngines = dir.path
        // No Apertium pair: nothing is started (Bergamot's worker only at the first call).
        config.apertiumModesDirectory = dir.path
        config.translatorBackends = [.libreTranslate, .apertium]
        #expect(try Daemon.makeTranslator(config).backends.map(\.name) == ["libretranslate", "bergamot", "apertium"])
        config.bergamotEnabled = false
        #expect(try Daemon.makeTranslator(config).backends.map(\.name) == ["libretranslate", "apertium"])
        config.bergamotEnabled = true
        try FileManager.default.removeItem(at: bergamot.appendingPathComponent("python"))
        #expect(try Daemon.makeTranslator(config).backends.map(\.name) == ["libretranslate", "apertium"], "fxtranslate is missing")
    }

    @Test func mistakesAreNamed() {
        #expect(error("[translator]\nbackends = [\"google\"]")?.contains("\"apertium\", \"libretranslate\", \"apertium-apy\"") == true)
        #expect(error("[translator]\nbackends = []")?.contains("is empty") == true)
        #expect(error("[translator]\nbackends = [\"apertium\", \"apertium\"]")?.contains("twice") == true)
        #expect(error("[translator]\nbackends = \"apertium\"")?.contains("a list of strings") == true)
        #expect(error("[translator.libretranslate]\nurl = \"ftp://x\"")?.contains("http://") == true)
        #expect(error("[translator.libretranslate]\napi_key = \"inline\"")?.contains("api_key_file") == true)
        #expect(error("[translator.apertium-apy]\napi_key_file = \"k\"\napi_key_credential = \"c\"")?.contains("keep one") == true)
        #expect(error("[translator]\ndeadline_ms = 5")?.contains("deadline_ms") == true)
    }

    @Test func anAPIKeyFileOthersMayReadIsRefused() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("key")
        try "top-secret-123\n".write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        do {
            _ = try SecretSource.file(file.path).read()
            Issue.record("a 0644 key file must be refused")
        } catch {
            #expect(error.description.contains("chmod 600 \(file.path)"))
            #expect(!error.description.contains("top-secret"))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        #expect(try SecretSource.file(file.path).read() == "top-secret-123")
    }

    @Test func anAPIKeyComesFromASystemdCredential() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "cred-key".write(to: dir.appendingPathComponent("libre"), atomically: true, encoding: .utf8)
        #expect(try SecretSource.credential("libre").read(environment: ["CREDENTIALS_DIRECTORY": dir.path]) == "cred-key")
        do {
            _ = try SecretSource.credential("libre").read(environment: [:])
            Issue.record("without systemd there is no credential")
        } catch {
            #expect(error.description.contains("LoadCredential=libre"))
        }
    }

    @Test func theDaemonBuildsTheChainInOrderAndRefusesAnUnreadableKey() throws {
        let dir = try TestFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = dir.appendingPathComponent("key")
        try "k".write(to: key, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: key.path)
        var config = ParleyConfig()
        config.translatorBackends = [.apertiumApy, .apertium, .libreTranslate]
        let chain = try Daemon.makeTranslator(config)
        #expect(chain.backends.map(\.name) == ["apertium-apy", "apertium", "libretranslate"])
        config.libreTranslate.apiKey = .file(key.path)
        do {
            _ = try Daemon.makeTranslator(config)
            Issue.record("a key file others may read must stop start-up")
        } catch {
            #expect(error.code == .config)
            #expect(error.description.contains("chmod 600"))
        }
    }
}
