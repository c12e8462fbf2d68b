import Foundation
import ParleyCore

#if canImport(Glibc)
import Glibc
#endif

/// Apertium, run as one warm pipeline per language pair in null-flush mode, between the text
/// deformatter and reformatter, so a sentence translates as `echo "$sentence" | apertium -u
/// eng-spa` translates it (`apertium eng-spa` with `keepUnknownMarks`).
///
/// `apertium` wraps the pair's mode in `apertium-destxt` and `apertium-retxt`. The deformatter
/// escapes the stream format's reserved characters, wraps blanks other than one space in
/// superblanks and, at the end of the text, adds a period and an empty superblank: the tagger
/// then reads the text as a finished sentence, which is what makes "sí" an answer ("Yes")
/// rather than a pronoun ("himself"). The reformatter drops that period again. Both are flex
/// programs that keep a sentence until end of file and drop NUL bytes, so they cannot stay warm
/// in a null-flush pipeline; they are small and regular, and done here instead
/// (`deformat`, `reformat`). A differential test holds Parley's output to `apertium`'s.
///
/// Every stage of the pair's mode runs with `-z`: a NUL byte after a sentence flushes it through
/// the whole pipeline, so a sentence costs milliseconds instead of a cold start per call. When
/// any stage has exited, when a sentence gets no answer within the timeout, or when a non-empty
/// sentence gets an empty answer, the pipeline is restarted and the sentence tried once more on
/// the fresh one.
///
/// A pipeline is warm only once its stages have loaded their data, which takes a fraction of a
/// second here, seconds on a slow board and far longer under emulation. So every new pipeline
/// (started with the translator, by `prepare`, on first use or after a failure) is sent one word
/// ahead of any sentence, whose answer may take `coldStartTimeoutMs`: a slow machine's cold
/// pipeline is waited for instead of restarted cold again and again, while a sentence always
/// gets the timeout, so one that hangs a stage holds the queue for two timeouts, not a cold start.
///
/// An actor on a serial queue of its own (`QueueExecutor`): a sentence's answer is waited for
/// with `poll`, which blocks, so it never runs on the concurrency pool; the pipelines are its
/// state, and `ApertiumPipeline` (not `Sendable`) cannot leave it.
public actor ApertiumTranslator: Translator {
    private let executor = QueueExecutor(label: "parley.apertium")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var pipelines: [LanguagePair: ApertiumPipeline] = [:]
    private var commands: [LanguagePair: [[String]]] = [:]
    /// Pipelines started with the translator and not warmed yet: whatever reaches the actor
    /// first (the warming task, or a sentence) warms them before anything else.
    private var unwarmed: [LanguagePair]
    private let modesDirectory: String
    private let timeoutMs: Int
    private let coldStartTimeoutMs: Int
    private let keepUnknownMarks: Bool

    /// How long a pipeline's first answer may take by default: its stages load their data first.
    public static let defaultColdStartTimeoutMs = 30_000

    /// Starts pipelines for `pairs` now; the first call on the actor warms them (the daemon's
    /// start-up work does, as it checks the backends: `prepare`). Other installed pairs start on
    /// first use. `timeoutMs` bounds a warm pipeline's answer,
    /// `coldStartTimeoutMs` (at least `timeoutMs`) its first one. `keepUnknownMarks` leaves
    /// Apertium's `*`, `#` and `@` on unknown words (for debugging).
    public init(
        pairs wanted: [LanguagePair], modesDirectory: String, timeoutMs: Int = 5_000,
        coldStartTimeoutMs: Int = ApertiumTranslator.defaultColdStartTimeoutMs, keepUnknownMarks: Bool = false
    ) throws(TranslationError) {
        self.modesDirectory = modesDirectory
        self.timeoutMs = timeoutMs
        self.coldStartTimeoutMs = max(timeoutMs, coldStartTimeoutMs)
        self.keepUnknownMarks = keepUnknownMarks
        var commands: [LanguagePair: [[String]]] = [:]
        var pipelines: [LanguagePair: ApertiumPipeline] = [:]
        for pair in wanted {
            let stages = try Self.pipelineStages(for: pair, modesDirectory: modesDirectory, keepUnknownMarks: keepUnknownMarks)
            commands[pair] = stages
            pipelines[pair] = try ApertiumPipeline(stages: stages, pair: pair)
        }
        self.commands = commands
        self.pipelines = pipelines
        unwarmed = wanted
    }

    // No deinit: the pipelines go with the actor, and each stops its stages in its own deinit.

    public nonisolated func supports(_ pair: LanguagePair) -> Bool {
        Self.modeFile(for: pair, modesDirectory: modesDirectory) != nil
    }

    public func prepare(_ pair: LanguagePair) async throws(TranslationError) {
        warmStarted()
        if pipelines[pair] == nil {
            pipelines[pair] = try ApertiumPipeline(stages: try stages(for: pair), pair: pair)
            _ = try? warm(pair)
        }
    }

    public func translate(_ text: String, from source: String, to target: String) async throws(TranslationError) -> String {
        warmStarted()
        return try translateNow(text, pair: LanguagePair(source, target))
    }

    public func availablePairs() async throws -> [LanguagePair] {
        LanguageCodes.apertiumPairs(modesDirectory: modesDirectory)
    }

    /// The process group of a pair's running pipeline (for tests that kill it).
    func processGroup(of pair: LanguagePair) -> Int32? {
        warmStarted()
        return pipelines[pair]?.processGroup
    }

    /// The process ids of a pair's running stages, first to last (for tests that kill one).
    func stageProcesses(of pair: LanguagePair) -> [Int32] {
        warmStarted()
        return pipelines[pair]?.processes ?? []
    }

    private func stages(for pair: LanguagePair) throws(TranslationError) -> [[String]] {
        if let stages = commands[pair] { return stages }
        let stages = try Self.pipelineStages(for: pair, modesDirectory: modesDirectory, keepUnknownMarks: keepUnknownMarks)
        commands[pair] = stages
        return stages
    }

    /// Warms the pipelines started with the translator, once; one that fails is started again
    /// on first use.
    private func warmStarted() {
        let pairs = unwarmed
        unwarmed = []
        for pair in pairs { _ = try? warm(pair) }
    }

    /// The pair's pipeline, warm. A pipeline that has not answered yet is sent the warming word
    /// first, with the cold start's allowance (the answer is not used), so no sentence ever waits
    /// for a cold start. One that gives no answer in time, or an empty one (a stage died), is
    /// stopped and forgotten, and the error thrown.
    @discardableResult
    private func warm(_ pair: LanguagePair) throws(TranslationError) -> ApertiumPipeline {
        guard let pipeline = pipelines[pair] else { throw TranslationError("no Apertium \(pair) pipeline is running") }
        if pipeline.hasAnswered { return pipeline }
        let failure: TranslationError
        do {
            if !Self.reformat(try pipeline.translate(Self.deformat(fixedProbeText), timeoutMs: coldStartTimeoutMs)).isEmpty { return pipeline }
            failure = TranslationError("the new Apertium \(pair) pipeline gave an empty answer to its first word")
        } catch {
            failure = error
        }
        pipeline.stop()
        if pipelines[pair] === pipeline { pipelines[pair] = nil }
        throw failure
    }

    /// Whether the pair's pipeline has answered (for tests).
    func isWarm(_ pair: LanguagePair) -> Bool {
        warmStarted()
        return pipelines[pair]?.hasAnswered ?? false
    }

    private func translateNow(_ text: String, pair: LanguagePair) throws(TranslationError) -> String {
        let stages = try stages(for: pair)
        let input = Self.deformat(text)
        guard !input.isEmpty else { return "" }
        var failure: TranslationError?
        // At most two tries: the running pipeline (if every stage still runs), then a fresh one.
        // A fresh one is warmed first, so the sentence itself always gets the timeout: one that
        // hangs a stage costs the timeout twice, never the cold start's allowance.
        for attempt in 0..<2 {
            if attempt > 0 || pipelines[pair]?.exitedStage() != nil {
                pipelines[pair]?.stop()
                pipelines[pair] = nil
            }
            if pipelines[pair] == nil { pipelines[pair] = try ApertiumPipeline(stages: stages, pair: pair) }
            // A fresh pipeline that cannot answer one word in the allowance is not tried again.
            let pipeline = try warm(pair)
            do {
                let translation = Self.reformat(try pipeline.translate(input, timeoutMs: timeoutMs))
                if !translation.isEmpty { return translation }
                // A stage that died mid-sentence can make the rest flush an empty answer.
                failure = TranslationError("the Apertium \(pair) pipeline gave an empty translation")
            } catch {
                failure = error
                // A pipeline that did not answer in time may answer later, and that late answer
                // would be read as the next sentence's translation: it is not used again.
                pipeline.stop()
                if pipelines[pair] === pipeline { pipelines[pair] = nil }
            }
        }
        throw failure ?? TranslationError("the Apertium \(pair) pipeline gave no translation")
    }

    // MARK: - Modes

    /// The installed mode file for `pair`, named with three- or two-letter codes.
    public static func modeFile(for pair: LanguagePair, modesDirectory: String) -> String? {
        guard let source = LanguageCodes.apertium(pair.source), let target = LanguageCodes.apertium(pair.target) else { return nil }
        return ["\(source)-\(target)", "\(pair.source)-\(pair.target)"].map { "\(modesDirectory)/\($0).mode" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The pair's pipeline as `apertium -z` runs it: the mode rewritten by
    /// `apertium-wblank-mode -z`, `$1` (the generator's unknown-word option) `-n` as with
    /// `apertium -u`, or `-g` when keeping marks, and `$2` (the tagger's extra options) empty.
    static func pipelineCommand(for pair: LanguagePair, modesDirectory: String, keepUnknownMarks: Bool = false) throws(TranslationError) -> String {
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
        return rewritten.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: "$1", with: keepUnknownMarks ? "-g" : "-n")
            .replacingOccurrences(of: "$2", with: "")
    }

    /// The pair's pipeline as one argument list per stage; a mode that uses more of the shell
    /// than pipes and quotes runs as one `/bin/sh -c` stage.
    static func pipelineStages(for pair: LanguagePair, modesDirectory: String, keepUnknownMarks: Bool) throws(TranslationError) -> [[String]] {
        let command = try pipelineCommand(for: pair, modesDirectory: modesDirectory, keepUnknownMarks: keepUnknownMarks)
        return splitPipeline(command) ?? [["/bin/sh", "-c", command]]
    }

    /// Splits a shell pipeline of plain commands (words, single and double quotes, backslashes,
    /// `|`) into argument lists; nil when it uses anything else of the shell.
    static func splitPipeline(_ command: String) -> [[String]]? {
        var stages: [[String]] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var characters = command.makeIterator()
        func endWord() {
            if inWord { words.append(word) }
            word = ""
            inWord = false
        }
        while let character = characters.next() {
            switch character {
            case " ", "\t", "\n":
                endWord()
            case "|":
                endWord()
                guard !words.isEmpty else { return nil }
                stages.append(words)
                words = []
            case "'":
                inWord = true
                while true {
                    guard let quoted = characters.next() else { return nil }
                    if quoted == "'" { break }
                    word.append(quoted)
                }
            case "\"":
                inWord = true
                while true {
                    guard let quoted = characters.next() else { return nil }
                    if quoted == "\"" { break }
                    if quoted == "$" || quoted == "`" { return nil }
                    if quoted == "\\" {
                        guard let escaped = characters.next() else { return nil }
                        if !["\"", "\\", "$", "`"].contains(escaped) { word.append("\\") }
                        word.append(escaped)
                    } else {
                        word.append(quoted)
                    }
                }
            case "\\":
                guard let escaped = characters.next() else { return nil }
                inWord = true
                word.append(escaped)
            case ";", "&", "<", ">", "(", ")", "$", "`", "*", "?", "[", "~", "#", "{", "}":
                return nil
            default:
                inWord = true
                word.append(character)
            }
        }
        endWord()
        guard !words.isEmpty else { return nil }
        stages.append(words)
        return stages
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        // The pipe is made under the launch lock, so no child spawned meanwhile inherits it.
        let output = try ProcessLauncher.withLock {
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            return output
        }
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

    /// One line of text as `apertium-destxt` gives `echo "$text"` to the pipeline: reserved
    /// characters escaped, `~` and blanks other than a single space in superblanks, and a
    /// period and an empty superblank after the last word, before the line's end. Line breaks
    /// are blanks (a turn is one line) and NUL bytes are dropped; empty for blank text.
    static func deformat(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).joined(separator: " ").replacingOccurrences(of: "\0", with: "")
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return "" }
        var formatted = ""
        var blank = ""
        func flushBlank() {
            if blank == " " {
                formatted.append(" ")
            } else if !blank.isEmpty {
                formatted.append("[\(blank)]")
            }
            blank = ""
        }
        for character in trimmed {
            if character == " " || character == "\t" || character == "\r" {
                blank.append(character)
                continue
            }
            flushBlank()
            if character == "~" {
                formatted.append("[~]")
            } else {
                if reserved.contains(character) { formatted.append("\\") }
                formatted.append(character)
            }
        }
        return formatted + ".[][\n]"
    }

    /// The pipeline's answer as `apertium-retxt` gives it back: superblanks opened, the period
    /// the deformatter added (a period before an empty superblank) dropped, escapes undone; then
    /// blanks collapsed to single spaces, for speech. Marks on unknown words are the
    /// generator's business (`-n` leaves none, as `apertium -u`); a `#` or `@` that is left is
    /// the speaker's own.
    static func reformat(_ output: String) -> String {
        var text = ""
        let characters = Array(output)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "\\" where index + 1 < characters.count:
                text.append(characters[index + 1])
                index += 2
            case "." where index + 2 < characters.count && characters[index + 1] == "[" && characters[index + 2] == "]":
                index += 3
            case "[":
                // A superblank: its content, unescaped.
                index += 1
                while index < characters.count, characters[index] != "]" {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    text.append(characters[index])
                    index += 1
                }
                index += 1
            default:
                text.append(character)
                index += 1
            }
        }
        // A dropped word (an auxiliary Apertium leaves out) leaves two spaces behind.
        return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
