import Foundation

/// `[transcriber]`: the accurate pass (docs/architecture.md, "The accurate pass"): Moonshine
/// tiny hears English and Whisper base every language, each in a worker of its own (Whisper's
/// may be a server), and their words are the ones a turn keeps.
public struct TranscriberConfig: Sendable, Equatable {
    /// Off: the streaming recognizer's words are kept (PocketSphinx), as before.
    public var enabled = true
    /// Where `make engines` put Moonshine and Whisper; nil looks in the installed places
    /// (`searchPath`).
    public var engines: String?
    /// A Wyoming speech-to-text server that hears instead of the local Whisper worker:
    /// "tcp://HOST:PORT". nil starts the local worker.
    public var server: String?
    /// Whisper's beam width (1 is greedy: faster, a few more words wrong). 3 hears as many words
    /// as 5 on every recording here, and its decoder takes about a third less time
    /// (`bench/whisper-beam.py`, docs/benchmarks.md).
    public var beamSize = 3
    /// Threads Whisper may use (0: `whisperThreads(cores:)` decides).
    public var threads = 0
    /// Moonshine on one thread (libmoonshine's `MOONSHINE_ORT_SINGLE_THREAD`); off, ONNX Runtime
    /// takes one per core. On one thread it hears the 25 English recordings in 7-17 % more time
    /// when nothing else runs, with about 40 % less CPU (its other thread spins while it waits),
    /// and its words came no later in the room, where the lanes and Whisper need the other core
    /// (`bench/moonshine-threads.py`, `bench/turn-end.py`: docs/benchmarks.md, "Moonshine on one
    /// thread").
    public var moonshineOneThread = true
    /// How long one utterance may take before the worker is restarted and asked again.
    public var timeoutMs = 15_000
    /// The Python that runs the Whisper worker.
    public var python = "/usr/bin/python3"

    /// The threads Whisper's worker is given on a machine of `cores` cores: `threads`, or when it
    /// is 0, one per core but one, at least one. The core left is the capture's, the streaming
    /// lanes' and the voice's, which run while Whisper hears a pass: on this project's 2-core
    /// build machine, Whisper on one thread heard Spanish in 86-103 ms per second of audio alone
    /// where two threads took 112-121, and in the room 118-135 ms where two took 181-230, its
    /// threads waiting on each other while the lanes held a core (docs/benchmarks.md, "Whisper
    /// on one thread of two cores").
    public func whisperThreads(cores: Int) -> Int {
        threads > 0 ? threads : max(1, cores - 1)
    }

    /// Where installed engines are looked for, when `engines` is not set.
    public static let searchPath = ["/usr/local/lib/parley/engines", "/usr/lib/parley/engines"]

    public init() {}

    /// The engines folder to use: the configured one, else the first installed one.
    public var enginesFolder: String? {
        engines ?? Self.searchPath.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The server's host and port, when `server` names one.
    public var serverAddress: (host: String, port: Int)? {
        server.flatMap(Self.address(of:))
    }

    /// The host and port of a server named "tcp://HOST:PORT"; nil when it is not so named.
    static func address(of server: String) -> (host: String, port: Int)? {
        guard server.hasPrefix("tcp://") else { return nil }
        let rest = server.dropFirst("tcp://".count)
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(port) else { return nil }
        let host = String(rest[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return host.isEmpty ? nil : (host, port)
    }
}
