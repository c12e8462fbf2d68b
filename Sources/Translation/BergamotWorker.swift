import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// What `BergamotTranslator` needs of its worker: a request line out, an answer line back,
/// within a time limit. The real one is a child process (`BergamotWorkerProcess`); unit tests
/// give an in-memory one. Not `Sendable`: it lives in the translator's actor state.
protocol BergamotWorkerLink: AnyObject {
    /// The worker's process id (nil when it is no process).
    var process: pid_t? { get }
    /// Sends one request (a JSON object, without its newline) and returns the next answer
    /// line (without its newline).
    func exchange(_ request: [UInt8], timeoutMs: Int) throws(BergamotWorkerFailure) -> [UInt8]
    /// Ends the worker (killed if it runs) and reaps it; what it answers after is never read.
    func stop()
}

/// Why a worker gave no answer.
typealias BergamotWorkerFailure = ChildFailure

/// The translation worker (`libexec/parley-bergamot`) as a child of parleyd (`ChildPipes`):
/// its standard error is parleyd's, so what it says about a model that will not load reaches
/// the journal.
final class BergamotWorkerProcess: BergamotWorkerLink {
    private let child: ChildPipes
    var process: pid_t? { child.pid }

    /// The longest answer line read: a translation is capped far below this by the chain.
    static let longestLine = 16 << 20

    private init(child: ChildPipes) { self.child = child }

    /// Starts `arguments` (the first is the program) as the worker.
    static func spawn(_ arguments: [String]) throws(TranslationError) -> BergamotWorkerProcess {
        do {
            return BergamotWorkerProcess(child: try ChildPipes.spawn(arguments, stderrToNull: false))
        } catch {
            throw TranslationError("\(error)")
        }
    }

    func exchange(_ request: [UInt8], timeoutMs: Int) throws(BergamotWorkerFailure) -> [UInt8] {
        try child.exchange(request + [UInt8(ascii: "\n")], timeoutMs: timeoutMs) { (said: inout [UInt8]) throws(ChildFailure) -> [UInt8]? in
            guard let newline = said.firstIndex(of: UInt8(ascii: "\n")) else {
                guard said.count <= Self.longestLine else { throw .broken("it sent an answer longer than \(Self.longestLine >> 20) MiB") }
                return nil
            }
            let line = Array(said[..<newline])
            said.removeSubrange(...newline)
            return line
        }
    }

    func stop() { child.stop() }
}

/// The worker's JSON-lines protocol (docs/protocol.md, "The translation worker").
enum BergamotMessage {
    struct Describe: Encodable {
        let type = "describe"
    }

    struct Translate: Encodable {
        let type = "translate"
        let id: Int
        let text: String
        let from: String
        let to: String
    }

    /// Any answer: `info` (with `pairs`), `translation` (with `text`), or `error` (with `error`).
    struct Answer: Decodable {
        struct Pair: Decodable {
            let from: String
            let to: String
        }

        let type: String
        let id: Int?
        let text: String?
        let error: String?
        let pairs: [Pair]?
    }

    static func encode(_ message: some Encodable) -> [UInt8] {
        // Encoding these plain structs of strings and integers cannot fail.
        Array((try? JSONEncoder().encode(message)) ?? Data("{}".utf8))
    }

    static func decode(_ line: [UInt8]) -> Answer? {
        try? JSONDecoder().decode(Answer.self, from: Data(line))
    }
}
