import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Apertium, run as one warm pipeline per language pair in null-flush mode.
///
/// Every stage of the pair's mode runs with `-z`: a NUL byte after a sentence flushes it through
/// the whole pipeline, so a sentence costs milliseconds instead of a cold start per call. A
/// pipeline that dies or stops answering is restarted.
public final class ApertiumTranslator: Translator, @unchecked Sendable {
    // All mutable state is confined to `queue`.
    private let queue = DispatchQueue(label: "parley.apertium")
    private var pipelines: [LanguagePair: Pipeline] = [:]
    private var commands: [LanguagePair: String] = [:]
    private let modesDirectory: String
    private let timeoutMs: Int
    private let keepUnknownMarks: Bool

    /// Starts pipelines for `pairs` now; other installed pairs start on first use.
    /// `keepUnknownMarks` leaves Apertium's `*`, `#` and `@` on unknown words (for debugging).
    public init(
        pairs wanted: [LanguagePair], modesDirectory: String, timeoutMs: Int = 5_000, keepUnknownMarks: Bool = false
    ) throws(TranslationError) {
        self.modesDirectory = modesDirectory
        self.timeoutMs = timeoutMs
        self.keepUnknownMarks = keepUnknownMarks
        for pair in wanted {
            let command = try Self.pipelineCommand(for: pair, modesDirectory: modesDirectory)
            commands[pair] = command
            pipelines[pair] = try Pipeline(command: command, pair: pair)
        }
    }

    deinit {
        for pipeline in pipelines.values { pipeline.stop() }
    }

    public func supports(_ pair: LanguagePair) -> Bool {
        Self.modeFile(for: pair, modesDirectory: modesDirectory) != nil
    }

    public func prepare(_ pair: LanguagePair) async throws(TranslationError) {
        try await onQueue { () throws(TranslationError) in
            if self.pipelines[pair] == nil {
                self.pipelines[pair] = try Pipeline(command: try self.command(for: pair), pair: pair)
            }
        }
    }

    public func translate(_ text: String, from source: String, to target: String) async throws(TranslationError) -> String {
        let pair = LanguagePair(source, target)
        return try await onQueue { () throws(TranslationError) in try self.translateNow(text, pair: pair) }
    }

    public func availablePairs() async throws -> [LanguagePair] {
        LanguageCodes.apertiumPairs(modesDirectory: modesDirectory)
    }

    /// The process group of a pair's running pipeline (for tests that kill it).
    func processGroup(of pair: LanguagePair) async -> Int32? {
        try? await onQueue { () throws(TranslationError) -> Int32? in self.pipelines[pair]?.processGroup }
    }

    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws(TranslationError) -> T) async throws(TranslationError) -> T {
        let result: Result<T, TranslationError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(TranslationError) -> T in try work() }) }
        }
        return try result.get()
    }

    /// Runs on `queue`.
    private func command(for pair: LanguagePair) throws(TranslationError) -> String {
        if let command = commands[pair] { return command }
        let command = try Self.pipelineCommand(for: pair, modesDirectory: modesDirectory)
        commands[pair] = command
        return command
    }

    /// Runs on `queue`.
    private func translateNow(_ text: String, pair: LanguagePair) throws(TranslationError) -> String {
        let command = try command(for: pair)
        let input = Self.escape(text)
        guard !input.isEmpty else { return "" }
        do {
            let pipeline = try pipelines[pair] ?? Pipeline(command: command, pair: pair)
            pipelines[pair] = pipeline
            return Self.clean(try pipeline.translate(input, timeoutMs: timeoutMs), keepingMarks: keepUnknownMarks)
        } catch {
            // The pipeline died or froze: start a fresh one and try once more.
            pipelines[pair]?.stop()
            let fresh = try Pipeline(command: command, pair: pair)
            pipelines[pair] = fresh
            return Self.clean(try fresh.translate(input, timeoutMs: timeoutMs), keepingMarks: keepUnknownMarks)
        }
    }

    // MARK: - Modes

    /// The installed mode file for `pair`, named with three- or two-letter codes.
    public static func modeFile(for pair: LanguagePair, modesDirectory: String) -> String? {
        guard let source = LanguageCodes.apertium(pair.source), let target = LanguageCodes.apertium(pair.target) else { return nil }
        return ["\(source)-\(target)", "\(pair.source)-\(pair.target)"].map { "\(modesDirectory)/\($0).mode" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    static func pipelineCommand(for pair: LanguagePair, modesDirectory: String) throws(TranslationError) -> String {
        guard let source = LanguageCodes.apertium(pair.source), let target = LanguageCodes.apertium(pair.target) else {
            throw TranslationError("Apertium has no code for \(pair); use ISO 639-1 codes such as en, es, ca")
        }
        guard let mode = modeFile(for: pair, modesDirectory: modesDirectory) else {
            throw TranslationError(
                "no Apertium mode \(source)-\(target) in \(modesDirectory); install it, e.g. `apt-get install apertium-\(source)-\(target)` "
                    + "(or the package for the reverse pair)")
        }
        // apertium-wblank-mode rewrites the mode with -z on every stage and word-bound blanks handled.
        let rewritten: String
        do {
            rewritten = try run("/usr/bin/env", ["apertium-wblank-mode", "-z", mode])
        } catch {
            throw TranslationError("cannot prepare \(mode): \(error); is the apertium package installed?")
        }
        // $1 is the generator's unknown-word option, $2 the tagger's extra options.
        return rewritten.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "$1", with: "-g")
            .replacingOccurrences(of: "$2", with: "")
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ProcessLauncher.run(process)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TranslationError("\(arguments.first ?? executable) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: - Text in and out

    /// Apertium's stream format reserves these characters; they are escaped with a backslash.
    static let reserved: Set<Character> = ["^", "$", "@", "/", "<", ">", "[", "]", "{", "}", "\\"]

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\0" { continue }
            if character.isNewline {
                escaped.append(" ")
            } else {
                if reserved.contains(character) { escaped.append("\\") }
                escaped.append(character)
            }
        }
        return escaped.trimmingCharacters(in: .whitespaces)
    }

    /// Removes the marks Apertium puts on words it does not know (`*`, `#`, `@`), unless
    /// `keepingMarks`, and undoes escapes.
    static func clean(_ output: String, keepingMarks: Bool = false) -> String {
        var cleaned = ""
        var atWordStart = true
        var escaping = false
        for character in output {
            if escaping {
                cleaned.append(character)
                escaping = false
                atWordStart = false
                continue
            }
            if character == "\\" {
                escaping = true
                continue
            }
            if atWordStart && !keepingMarks && (character == "*" || character == "#" || character == "@") {
                continue
            }
            cleaned.append(character)
            atWordStart = character.isWhitespace
        }
        // A dropped word (an auxiliary Apertium leaves out) leaves two spaces behind.
        return cleaned.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}

/// One running null-flush pipeline.
private final class Pipeline {
    private let process = Process()
    private let input: FileHandle
    private let output: Int32
    private let pair: LanguagePair
    private var buffer = [UInt8]()

    init(command: String, pair: LanguagePair) throws(TranslationError) {
        self.pair = pair
        let stdinPipe = Pipe()
        let stdoutPipe = Pipe()
        // Foundation starts the child as the leader of a process group of its own, which every
        // stage of the pipeline joins: stop() kills the group, even a stage that froze.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = FileHandle.nullDevice
        do {
            try ProcessLauncher.run(process)
        } catch {
            throw TranslationError("cannot start the Apertium \(pair) pipeline: \(error)")
        }
        input = stdinPipe.fileHandleForWriting
        output = stdoutPipe.fileHandleForReading.fileDescriptor
        // Keep the read end alive as long as the pipeline.
        readEnd = stdoutPipe.fileHandleForReading
    }

    private let readEnd: FileHandle

    func translate(_ text: String, timeoutMs: Int) throws(TranslationError) -> String {
        guard process.isRunning else { throw TranslationError("the Apertium \(pair) pipeline has exited") }
        do {
            // lt-proc's bilingual stage flushes a sentence only once it has seen its newline.
            try input.write(contentsOf: Data(text.utf8) + Data([0x0A, 0]))
        } catch {
            throw TranslationError("cannot write to the Apertium \(pair) pipeline: \(error)")
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(timeoutMs) * 1_000_000
        while true {
            if let terminator = buffer.firstIndex(of: 0) {
                let sentence = buffer[..<terminator]
                buffer.removeSubrange(...terminator)
                return String(decoding: sentence, as: UTF8.self)
            }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else {
                throw TranslationError("the Apertium \(pair) pipeline did not answer within \(timeoutMs) ms")
            }
            var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw TranslationError("the Apertium \(pair) pipeline closed its output") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    var processGroup: Int32 { process.processIdentifier }

    func stop() {
        try? input.close()
        if process.isRunning {
            kill(-process.processIdentifier, SIGKILL)
        }
    }
}
