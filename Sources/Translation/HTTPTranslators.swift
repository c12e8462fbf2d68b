import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A network backend's failure, classified so the chain knows whether to retry.
public struct BackendError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Worth retrying after a pause: 5xx, a refused or closed connection, a timeout.
        case transient
        /// HTTP 429: the server asks to wait this long before the next request.
        case rateLimited(retryAfter: Duration)
        /// Retrying will not help: other 4xx, a malformed answer, an unknown language.
        case permanent
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// One HTTP exchange with a translation server, over AsyncHTTPClient.
///
/// Every backend shares one `HTTPClient` (`ServerClient.http`), whose connection pools are per
/// server (scheme, host and port): a server that hangs holds connections of its own pool only,
/// and cannot delay another backend's requests. An answer's body is read only up to
/// `largestBody`: a larger one is refused without being held in memory.
struct ServerClient: Sendable {
    /// The client of every translation server, for the life of the process (so never shut
    /// down). Unlike `HTTPClient.shared`, a refused connection fails the request at once
    /// instead of being tried again until its deadline: a server that is down is said so, and
    /// the chain's retries and circuit breaker decide what comes next.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    let baseURL: URL
    let timeoutMs: Int
    /// Names the server in errors ("LibreTranslate at http://...").
    let name: String

    /// The default wait after a 429 without a usable Retry-After.
    static let defaultRetryAfter = Duration.seconds(30)

    /// The largest answer accepted from a server (1 MiB; a sentence's translation is a few
    /// hundred bytes). A larger one is rejected: it would be held in memory, spoken for minutes
    /// and stored.
    static let largestBody = 1 << 20

    init(baseURL: URL, timeoutMs: Int, name: String) {
        self.baseURL = baseURL
        self.timeoutMs = timeoutMs
        self.name = name
    }

    /// `path` below the base URL, with `query` items.
    func url(_ path: String, query: [URLQueryItem] = []) throws -> URL {
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        guard var components = URLComponents(string: base + path) else {
            throw BackendError(.permanent, "\(name): cannot build a URL from \(base)\(path)")
        }
        if !query.isEmpty { components.queryItems = query }
        // `+` in a query is a space to most servers; encode it so it stays a plus.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { throw BackendError(.permanent, "\(name): cannot build a URL for \(path)") }
        return url
    }

    /// Sends a request for `url` and returns the body of a 2xx answer; anything else is a
    /// classified `BackendError`. The request's own timeout is `timeoutMs`, body included.
    func send(_ url: URL, method: HTTPMethod = .GET, json body: Data? = nil) async throws -> Data {
        let path = url.path
        guard ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
            throw BackendError(.permanent, "\(name): \(baseURL.absoluteString) is not an http:// or https:// URL; fix the url in [translator]")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let deadline = NIODeadline.now() + .milliseconds(Int64(timeoutMs))
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await Self.http.execute(request, deadline: deadline)
            if let length = response.headers.first(name: "Content-Length").flatMap(Int.init), length > Self.largestBody {
                throw tooLarge(path: path, bytes: length)
            }
            bytes = try await response.body.collect(upTo: Self.largestBody)
        } catch is NIOTooManyBytesError {
            throw tooLarge(path: path, bytes: nil)
        } catch {
            throw classify(error, path: path)
        }
        let data = Data(bytes.readableBytesView)
        switch response.status.code {
        case 200..<300:
            return data
        case 429:
            let header = response.headers.first(name: "Retry-After")
            let wait = header.flatMap(Self.retryAfter) ?? Self.defaultRetryAfter
            throw BackendError(.rateLimited(retryAfter: wait), "\(name): too many requests (HTTP 429); waiting \(wait.seconds) s before asking it again")
        case 400..<500:
            throw BackendError(.permanent, "\(name): HTTP \(response.status.code) for \(path): \(Self.snippet(data))")
        default:
            throw BackendError(.transient, "\(name): HTTP \(response.status.code) for \(path): \(Self.snippet(data))")
        }
    }

    /// An answer over `largestBody` (`bytes` when the server said how large), refused.
    private func tooLarge(path: String, bytes: Int?) -> BackendError {
        BackendError(
            .permanent,
            "\(name): its answer to \(path) was larger than the 1 MiB accepted\(bytes.map { " (\($0) bytes)" } ?? "") and was rejected; "
                + "check that the url in [translator] names a translation server")
    }

    /// Retry-After as seconds or as an HTTP date.
    static func retryAfter(_ header: String) -> Duration? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSinceNow * 1000)))
    }

    /// What a failed exchange means for the chain: cancelled, transient (no connection, a
    /// closed connection, a timeout), or permanent (a URL that cannot work).
    func classify(_ error: any Error, path: String) -> any Error {
        if error is CancellationError || error is BackendError { return error }
        if let error = error as? HTTPClientError {
            if error == .cancelled { return CancellationError() }
            if [.deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout].contains(error) {
                return BackendError(.transient, "\(name): no answer to \(path) within \(timeoutMs) ms")
            }
            if [.invalidURL, .emptyHost, .emptyScheme, .missingSocketPath].contains(error) {
                return BackendError(.permanent, "\(name): bad URL for \(path) (\(error)); fix the url in [translator]")
            }
        }
        // A system call's failure says it best in the system's words ("Connection refused").
        if let error = error as? IOError {
            return BackendError(.transient, "\(name): \(path) failed: \(String(cString: strerror(error.errnoCode)))")
        }
        return BackendError(.transient, "\(name): \(path) failed: \(error)")
    }

    /// The start of an error body, on one line.
    static func snippet(_ body: Data) -> String {
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return line.isEmpty ? "(empty body)" : line
    }

    /// Decodes a JSON answer; a malformed one is the server's fault and not worth retrying. The
    /// answer itself is not quoted: it may hold what someone said, and errors are logged.
    func decode<T: Decodable>(_ type: T.Type, from data: Data, path: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw BackendError(.permanent, "\(name): unexpected answer to \(path) (\(data.count) bytes, not the JSON expected); check that the url in [translator] names the right kind of server")
        }
    }
}

extension Duration {
    /// Whole seconds, rounded up, for messages.
    var seconds: Int64 {
        let (whole, attoseconds) = components
        return whole + (attoseconds > 0 ? 1 : 0)
    }
}

/// The pairs a server offers, asked once and kept; a server that cannot be reached is asked
/// again next time.
private final class PairCache: Sendable {
    private let pairs = Mutex<[LanguagePair]?>(nil)

    var known: [LanguagePair]? { pairs.withLock { $0 } }

    func get(_ load: () async throws -> [LanguagePair]) async throws -> [LanguagePair] {
        if let cached = known { return cached }
        let loaded = try await load()
        pairs.withLock { $0 = loaded }
        return loaded
    }
}

// MARK: - LibreTranslate

/// A LibreTranslate server: `POST /translate {q, source, target, format}` and `GET /languages`.
public struct LibreTranslateTranslator: Translator {
    let client: ServerClient
    let apiKey: String?
    private let cache = PairCache()

    /// `apiKey` is sent in the request body and never logged.
    public init(url: URL, timeoutMs: Int = 5_000, apiKey: String? = nil) {
        client = ServerClient(baseURL: url, timeoutMs: timeoutMs, name: "LibreTranslate at \(url.absoluteString)")
        self.apiKey = apiKey
    }

    /// True for any pair until the server's language list is known, then what it lists.
    public func supports(_ pair: LanguagePair) -> Bool {
        guard let known = cache.known else { return true }
        return known.contains(pair)
    }

    public func prepare(_ pair: LanguagePair) async throws {}

    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        struct Body: Encodable {
            var q: String
            var source: String
            var target: String
            var format = "text"
            var api_key: String?
        }
        struct Answer: Decodable {
            var translatedText: String
        }
        let body = try JSONEncoder().encode(
            Body(q: text, source: LanguageCodes.libreTranslate(source), target: LanguageCodes.libreTranslate(target), api_key: apiKey))
        let data = try await client.send(try client.url("/translate"), method: .POST, json: body)
        return try client.decode(Answer.self, from: data, path: "/translate").translatedText
    }

    public func availablePairs() async throws -> [LanguagePair] {
        struct Language: Decodable {
            var code: String
            var targets: [String]?
        }
        return try await cache.get {
            let data = try await client.send(try client.url("/languages"))
            let languages = try client.decode([Language].self, from: data, path: "/languages")
            let codes = languages.map { LanguageCodes.iso6391(fromLibreTranslate: $0.code) }
            return languages.flatMap { language -> [LanguagePair] in
                let source = LanguageCodes.iso6391(fromLibreTranslate: language.code)
                // Old servers list no targets: every language translates to every other.
                let targets = language.targets.map { $0.map(LanguageCodes.iso6391(fromLibreTranslate:)) } ?? codes
                return targets.filter { $0 != source }.map { LanguagePair(source, $0) }
            }
        }
    }
}

// MARK: - Apertium APy

/// An Apertium APy server: `GET /translate?langpair=eng|spa&q=` and `GET /listPairs`.
public struct ApyTranslator: Translator {
    let client: ServerClient
    let apiKey: String?
    let keepUnknownMarks: Bool
    private let cache = PairCache()

    /// `apiKey`, if any, goes in the `key` query parameter (for a gateway in front of APy,
    /// which itself asks for none); it is never logged.
    public init(url: URL, timeoutMs: Int = 5_000, apiKey: String? = nil, keepUnknownMarks: Bool = false) {
        client = ServerClient(baseURL: url, timeoutMs: timeoutMs, name: "Apertium APy at \(url.absoluteString)")
        self.apiKey = apiKey
        self.keepUnknownMarks = keepUnknownMarks
    }

    public func supports(_ pair: LanguagePair) -> Bool {
        guard LanguageCodes.apertium(pair.source) != nil, LanguageCodes.apertium(pair.target) != nil else { return false }
        guard let known = cache.known else { return true }
        return known.contains(pair)
    }

    public func prepare(_ pair: LanguagePair) async throws {}

    public func translate(_ text: String, from source: String, to target: String) async throws -> String {
        struct Answer: Decodable {
            struct Data: Decodable { var translatedText: String }
            var responseData: Data
        }
        guard let from = LanguageCodes.apertium(source), let to = LanguageCodes.apertium(target) else {
            throw BackendError(.permanent, "\(client.name): Apertium has no code for \(source)-\(target)")
        }
        var query = [
            URLQueryItem(name: "langpair", value: "\(from)|\(to)"), URLQueryItem(name: "q", value: text),
            URLQueryItem(name: "markUnknown", value: keepUnknownMarks ? "yes" : "no"),
        ]
        if let apiKey { query.append(URLQueryItem(name: "key", value: apiKey)) }
        let data = try await client.send(try client.url("/translate", query: query))
        let translated = try client.decode(Answer.self, from: data, path: "/translate").responseData.translatedText
        return translated.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    public func availablePairs() async throws -> [LanguagePair] {
        struct Answer: Decodable {
            struct Pair: Decodable {
                var sourceLanguage: String
                var targetLanguage: String
            }
            var responseData: [Pair]
        }
        return try await cache.get {
            let data = try await client.send(try client.url("/listPairs"))
            return try client.decode(Answer.self, from: data, path: "/listPairs").responseData.compactMap { pair in
                guard let source = LanguageCodes.iso6391(fromApertium: pair.sourceLanguage),
                    let target = LanguageCodes.iso6391(fromApertium: pair.targetLanguage)
                else { return nil }
                return LanguagePair(source, target)
            }
        }
    }
}
