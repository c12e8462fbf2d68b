import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A translation backend, named as in `[translator] backends`.
public enum TranslatorBackend: String, Sendable, CaseIterable, Codable {
    /// Local Apertium pipelines; the default.
    case apertium
    /// A LibreTranslate server, over HTTP.
    case libreTranslate = "libretranslate"
    /// An Apertium APy server, over HTTP.
    case apertiumApy = "apertium-apy"
}

/// Where a secret comes from. The secret itself is never kept in the config, so printing the
/// config cannot leak it.
public enum SecretSource: Sendable, Equatable {
    /// A file only its owner may read (mode 0600 or stricter).
    case file(String)
    /// A systemd credential: `$CREDENTIALS_DIRECTORY/<name>` (LoadCredential=, SetCredential=).
    case credential(String)
}

/// `[translator.libretranslate]`, `[translator.apertium-apy]`.
public struct HTTPBackendConfig: Sendable, Equatable {
    public var url: String
    /// How long one request may take.
    public var timeoutMs = 5_000
    public var apiKey: SecretSource?

    public init(url: String, timeoutMs: Int = 5_000, apiKey: SecretSource? = nil) {
        self.url = url
        self.timeoutMs = timeoutMs
        self.apiKey = apiKey
    }
}

extension ParleyConfig {
    /// Bergamot's folder (`bergamot/` in the engines folder): the configured engines folder's,
    /// else the first installed one's; nil when it is off or none is found.
    public var bergamotFolder: String? {
        guard bergamotEnabled else { return nil }
        let engines = translatorEngines ?? TranscriberConfig.searchPath.first { FileManager.default.fileExists(atPath: $0 + "/bergamot") }
        return engines.map { $0 + "/bergamot" }
    }

    static var backendNames: String {
        TranslatorBackend.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
    }
}

extension Section {
    /// `[translator] backends`: a non-empty list of backends, each once, in the order to try them.
    func backends(_ key: String) throws(ConfigError) -> [TranslatorBackend]? {
        guard let names = try strings(key) else { return nil }
        guard !names.isEmpty else {
            throw error(key, "is empty; list at least one of \(ParleyConfig.backendNames), e.g. [\"apertium\"]")
        }
        var backends: [TranslatorBackend] = []
        for name in names {
            guard let backend = TranslatorBackend(rawValue: name) else {
                throw error(key, "names \(quoted(name)); use \(ParleyConfig.backendNames)")
            }
            guard !backends.contains(backend) else {
                throw error(key, "lists \(quoted(name)) twice; list each backend once, in the order to try them")
            }
            backends.append(backend)
        }
        return backends
    }

    /// An http:// or https:// URL with a host.
    func httpURL(_ key: String) throws(ConfigError) -> String? {
        guard let url = try string(key) else { return nil }
        guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme), parsed.host != nil else {
            throw error(key, "is \(quoted(url)); give an http:// or https:// URL such as \"http://127.0.0.1:5000\"")
        }
        return url
    }

    /// A systemd credential's name, as in LoadCredential=NAME:PATH.
    func credential(_ key: String) throws(ConfigError) -> String? {
        guard let name = try string(key) else { return nil }
        guard !name.isEmpty, !name.contains("/") else {
            throw error(key, "is \(quoted(name)); give the credential's name as in LoadCredential=NAME:PATH")
        }
        return name
    }
}

extension SecretSource {
    /// Reads the secret. A key file that others may read is refused, with the fix in the error.
    /// The error never contains the secret.
    public func read(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> String {
        let path: String
        switch self {
        case .file(let file):
            var info = stat()
            guard stat(file, &info) == 0 else {
                throw ConfigError("cannot read the API key file \(file): \(String(cString: strerror(errno))); create it with the key on one line and `chmod 600 \(file)`")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw ConfigError(
                    "the API key file \(file) has mode \(String(info.st_mode & 0o777, radix: 8)) and others may read it; run `chmod 600 \(file)`")
            }
            path = file
        case .credential(let name):
            guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
                throw ConfigError(
                    "the API key credential \"\(name)\" needs systemd: $CREDENTIALS_DIRECTORY is not set; add LoadCredential=\(name):PATH to the unit, or use api_key_file")
            }
            path = directory + "/" + name
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigError("cannot read the API key from \(path); check that it exists and parleyd may read it")
        }
        let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty else { throw ConfigError("the API key file \(path) is empty; put the key in it") }
        return key
    }
}
