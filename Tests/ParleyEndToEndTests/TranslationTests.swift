import ParleyCore
import Foundation
import ParleyTesting
import Testing
@testable import ParleyTranslation

// Serialized: two tests write a stage script and start pipelines; run side by side, one's spawn
// can inherit the other's still-open script file, and exec fails with "Text file busy".
@Suite("Apertium, for real", .serialized, .startsProcesses)
struct ApertiumTranslatorTests {
    let modes = "/usr/share/apertium/modes"

    /// Waits until every process of `pids` has exited: a zombie (its parent, the translator, has
    /// not reaped it yet) or gone. False after `seconds`, a guard against a hung test only.
    static func exited(_ pids: [pid_t], within seconds: Double = 10) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        func running(_ pid: pid_t) -> Bool {
            // /proc/PID/stat: "PID (name) STATE ..."; the name may hold spaces and parentheses.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
        }
        while pids.contains(where: running) {
            guard Date() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(2))  // the poll's pace, not a guess at how long dying takes
        }
        return true
    }

    @Test func translatesEnglishToSpanishAndBack() async throws {
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es"), LanguagePair("es", "en")], modesDirectory: modes)
        let spanish = try await translator.translate("go forward ten meters", from: "en", to: "es")
        #expect(spanish.lowercased().contains("diez metros"))
        let english = try await translator.translate("el perro es grande", from: "es", to: "en")
        #expect(english.lowercased().contains("dog"))
    }

    @Test func staysWarmAcrossSentences() async throws {
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes)
        let stages = await translator.stageProcesses(of: LanguagePair("en", "es"))
        for _ in 0..<5 {
            let spanish = try await translator.translate("the house is red", from: "en", to: "es")
            #expect(spanish.lowercased().contains("casa"))
            // Children started and reaped by Foundation meanwhile leave the pipeline's alone.
            let other = Process()
            other.executableURL = URL(fileURLWithPath: "/bin/true")
            try ProcessLauncher.run(other)
            other.waitUntilExit()
        }
        #expect(await translator.stageProcesses(of: LanguagePair("en", "es")) == stages, "the same pipeline served every sentence")
    }

    @Test func textIsDeformattedAsApertiumDestxtDoes() {
        #expect(ApertiumTranslator.deformat("sí") == "sí.[][\n]")
        #expect(ApertiumTranslator.deformat("a^b$c[d]") == #"a\^b\$c\[d\]"# + ".[][\n]")
        #expect(ApertiumTranslator.deformat("two\nlines\0") == "two lines.[][\n]")
        #expect(ApertiumTranslator.deformat("a  b\tc ~") == "a[  ]b[\t]c [~].[][\n]")
        #expect(ApertiumTranslator.deformat(" \n ") == "")
    }

    @Test func answersAreReformattedAsApertiumRetxtDoes() {
        #expect(ApertiumTranslator.reformat("Yes.[][\n]") == "Yes")
        #expect(ApertiumTranslator.reformat("No..[][\n]") == "No.")
        #expect(ApertiumTranslator.reformat("Sala #12, complacer.[][\n]") == "Sala #12, complacer")
        #expect(ApertiumTranslator.reformat(#"precio \$5"# + ".[][\n]") == "precio $5")
        #expect(ApertiumTranslator.reformat("Va a algún lugar y  algo[  ]más.[][\n]") == "Va a algún lugar y algo más")
    }

    @Test func aModeSplitsIntoStages() {
        let stages = ApertiumTranslator.splitPipeline(#"lt-proc -z 'a b.bin' | apertium-tagger -z -g  '/x/p.prob' | tool "q\"x""#)
        #expect(stages == [["lt-proc", "-z", "a b.bin"], ["apertium-tagger", "-z", "-g", "/x/p.prob"], ["tool", #"q"x"#]])
        #expect(ApertiumTranslator.splitPipeline("a | b > out") == nil)
        #expect(ApertiumTranslator.splitPipeline("a || b") == nil)
    }

    @Test func aOneWordAnswerIsTranslatedAsASentence() async throws {
        // Without the deformatter's sentence end, the tagger read "sí" as the pronoun ("himself").
        let translator = try ApertiumTranslator(pairs: [LanguagePair("es", "en")], modesDirectory: modes)
        #expect(try await translator.translate("sí", from: "es", to: "en") == "Yes")
        #expect(try await translator.translate("Sí.", from: "es", to: "en") == "Yes.")
    }

    @Test func unknownWordMarksCanBeKeptForDebugging() async throws {
        let plain = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes)
        #expect(try await plain.translate("the zorgblatt is red", from: "en", to: "es").contains("zorgblatt"))
        #expect(!(try await plain.translate("the zorgblatt is red", from: "en", to: "es")).contains("*"))
        let marking = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes, keepUnknownMarks: true)
        #expect(try await marking.translate("the zorgblatt is red", from: "en", to: "es").contains("*zorgblatt"))
    }

    @Test func aPipelineKilledMidConversationIsRestartedBehindTheChain() async throws {
        let apertium = try ApertiumTranslator(pairs: [LanguagePair("en", "es"), LanguagePair("es", "en")], modesDirectory: modes)
        let chain = TranslatorChain([.init(name: "apertium", translator: apertium)])
        let turns = [("the house is red", "en", "es", "casa"), ("el perro es grande", "es", "en", "dog"), ("the dog is big", "en", "es", "perro")]
        for (index, (text, source, target, expected)) in turns.enumerated() {
            if index == 2 {
                // Between two turns the English-Spanish pipeline dies.
                let group = try #require(await apertium.processGroup(of: LanguagePair("en", "es")))
                let stages = await apertium.stageProcesses(of: LanguagePair("en", "es"))
                #expect(kill(-group, SIGKILL) == 0)
                // Dead before the next turn asks, so the translator sees a dead pipeline (the race
                // with a sentence in flight is aKilledMiddleStageIsRestartedAndTheNextSentenceTranslated's).
                #expect(await Self.exited(stages), "the killed stages are still running")
            }
            let (translation, backend) = try await chain.translateNamingBackend(text, from: source, to: target)
            #expect(translation.lowercased().contains(expected))
            #expect(backend == "apertium")
        }
    }

    @Test func missingPairSaysWhatToInstall() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("no-modes-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        do {
            _ = try ApertiumTranslator(pairs: [LanguagePair("en", "ca")], modesDirectory: empty.path)
            Issue.record("a missing pair must be an error")
        } catch {
            #expect(error.description.contains("apt-get install apertium-eng-cat"))
        }
        let translator = try ApertiumTranslator(pairs: [], modesDirectory: modes)
        #expect(translator.supports(LanguagePair("en", "es")))
        #expect(!translator.supports(LanguagePair("en", "xx")))
    }

    @Test func aKilledPipelineIsRestartedAndTheSentenceTranslated() async throws {
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes)
        #expect(try await translator.translate("the house is red", from: "en", to: "es").contains("casa"))
        // The whole pipeline dies mid-conversation.
        let group = try #require(await translator.processGroup(of: LanguagePair("en", "es")))
        let stages = await translator.stageProcesses(of: LanguagePair("en", "es"))
        #expect(getpgid(group) == group, "the pipeline must lead its own process group")
        #expect(kill(-group, SIGKILL) == 0)
        #expect(await Self.exited(stages), "the killed stages are still running")
        #expect(try await translator.translate("the dog is big", from: "en", to: "es").lowercased().contains("perro"))
        // It was restarted: a new group runs the pair.
        let restarted = try #require(await translator.processGroup(of: LanguagePair("en", "es")))
        #expect(restarted != group)
    }

    @Test func aLongTextIsTranslatedWhileItIsStillBeingWritten() async throws {
        // 200 KB in and about as much out: more than the pipes between here and Apertium hold.
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes, timeoutMs: 60_000)
        let text = Array(repeating: "the house is red and the dog is big.", count: 5_000).joined(separator: " ")
        let spanish = try await translator.translate(text, from: "en", to: "es")
        #expect(spanish.components(separatedBy: "perro").count - 1 == 5_000)
    }

    @Test func aKilledMiddleStageIsRestartedAndTheNextSentenceTranslated() async throws {
        let pair = LanguagePair("en", "es")
        let translator = try ApertiumTranslator(pairs: [pair], modesDirectory: modes)
        #expect(try await translator.translate("the house is red", from: "en", to: "es") == "La casa es roja")
        let stages = await translator.stageProcesses(of: pair)
        #expect(stages.count > 4, "each stage is a process of its own")
        // A middle stage dies, and the next sentence comes at once: no sleep, whichever way the
        // race goes (the death seen before the sentence, or the sentence lost in the dead stage).
        #expect(kill(stages[stages.count / 2], SIGKILL) == 0)
        #expect(try await translator.translate("the dog is big", from: "en", to: "es") == "El perro es grande")
        let restarted = await translator.stageProcesses(of: pair)
        #expect(restarted.count == stages.count && Set(restarted).isDisjoint(with: stages))
        // The old stages are gone (killed and reaped), not left behind.
        for pid in stages { #expect(kill(pid, 0) != 0) }
        #expect(try await translator.translate("the house is red", from: "en", to: "es") == "La casa es roja")
    }

    /// A modes folder whose en-es "pair" is one stage, the bash script `script` makes (given the
    /// folder, for any state it keeps); the caller removes the folder.
    private func oneStagePair(_ script: (URL) -> String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-modes-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let stage = folder.appendingPathComponent("stage.sh")
        try script(folder).write(to: stage, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: stage.path)
        try "\(stage.path)\n".write(to: folder.appendingPathComponent("eng-spa.mode"), atomically: true, encoding: .utf8)
        return folder
    }

    @Test func anEmptyAnswerToASentenceRestartsThePipelineAndTheSentenceIsTriedAgain() async throws {
        // A one-stage "pair" whose first run answers its warming word, then every sentence
        // with nothing (as what is left of a pipeline after a stage died does), and whose later
        // runs echo.
        let folder = try oneStagePair { folder in
            """
            #!/bin/bash
            if [ -e "\(folder.path)/ran" ]; then answer=echo; else answer=first; touch "\(folder.path)/ran"; fi
            while IFS= read -r -d '' sentence; do
              if [ "$answer" = empty ]; then printf '\\0'; else printf '%s\\0' "$sentence"; fi
              if [ "$answer" = first ]; then answer=empty; fi
            done
            """
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let translator = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: folder.path)
        let first = await translator.stageProcesses(of: LanguagePair("en", "es"))
        #expect(!first.isEmpty, "the first run answered its warming word")
        #expect(try await translator.translate("hello there", from: "en", to: "es") == "hello there")
        #expect(await translator.stageProcesses(of: LanguagePair("en", "es")) != first)
    }

    @Test func aNewPipelineThatHangsOnItsFirstWordIsGivenUpAfterTheAllowanceAndASentenceAfterTheTimeout() async throws {
        // A one-stage "pair" that never answers its first input (a stage hung at start) and
        // echoes on later runs; and a sentence that hangs every run.
        let folder = try oneStagePair { folder in
            """
            #!/bin/bash
            echo start >> "\(folder.path)/starts"
            run=$(wc -l < "\(folder.path)/starts")
            if [ "$run" = 1 ]; then exec sleep 600; fi
            while IFS= read -r -d '' sentence; do
              echo "$run $sentence" >> "\(folder.path)/inputs"
              case "$sentence" in *hang*) exec sleep 600 ;; esac
              printf '%s\\0' "$sentence"
            done
            """
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let translator = try ApertiumTranslator(
            pairs: [LanguagePair("en", "es")], modesDirectory: folder.path, timeoutMs: 200, coldStartTimeoutMs: 2_000)
        // The first pipeline never answered its warming word: it was stopped, and the first
        // sentence starts and warms a new one.
        #expect(try await translator.translate("hello there", from: "en", to: "es") == "hello there")
        // A sentence that hangs its stage gets the timeout on the running pipeline, then on a
        // fresh one, which first answered its warming word: the sentence never had the cold
        // start's allowance.
        await #expect(throws: TranslationError.self) { try await translator.translate("hang", from: "en", to: "es") }
        // What each run read, without the superblanks deformatting wraps a sentence in.
        let inputs = try String(contentsOf: folder.appendingPathComponent("inputs"), encoding: .utf8).split(separator: "\n")
            .filter { $0.first?.isNumber == true }.map { $0.components(separatedBy: ".[").first ?? "" }
        #expect(inputs == ["2 \(fixedProbeText)", "2 hello there", "2 hang", "3 \(fixedProbeText)", "3 hang"])
        #expect(try await translator.translate("and again", from: "en", to: "es") == "and again")
    }

    @Test func aPipelineThatDidNotAnswerInTimeIsNotAskedAgain() async throws {
        // A one-stage "pair" that holds back its answer to "slow" until the next sentence comes
        // (as a pipeline too slow for the timeout answers late, on a slow machine), then gives
        // both. Reusing it would read "slow" as the next sentence's translation.
        let folder = try oneStagePair { _ in
            """
            #!/bin/bash
            held=
            while IFS= read -r -d '' sentence; do
              case "$sentence" in *slow*) held=$sentence; continue ;; esac
              if [ -n "$held" ]; then printf '%s\\0' "$held"; held=; fi
              printf '%s\\0' "$sentence"
            done
            """
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let translator = try ApertiumTranslator(
            pairs: [LanguagePair("en", "es")], modesDirectory: folder.path, timeoutMs: 200, coldStartTimeoutMs: 2_000)
        await #expect(throws: TranslationError.self) { try await translator.translate("slow", from: "en", to: "es") }
        #expect(try await translator.translate("next one", from: "en", to: "es") == "next one")
    }

    @Test func aNewPipelineIsWarmedBeforeItsFirstSentence() async throws {
        let pair = LanguagePair("en", "es")
        let translator = try ApertiumTranslator(pairs: [pair], modesDirectory: modes)
        // Asked right after start: the warming word went through first (one queue).
        #expect(await translator.isWarm(pair))
        #expect(try await translator.translate("the house is red", from: "en", to: "es") == "La casa es roja")
    }

    @Test func aSlowStartingPipelineIsWaitedForNotRestartedCold() async throws {
        // A one-stage "pair" that takes 1 s to load (as Apertium's transducers do on a slow
        // board) and counts its starts; a warm answer is due within 300 ms.
        let folder = try oneStagePair { folder in
            """
            #!/bin/bash
            echo start >> "\(folder.path)/starts"
            sleep 1
            while IFS= read -r -d '' sentence; do printf '%s\\0' "$sentence"; done
            """
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let translator = try ApertiumTranslator(
            pairs: [LanguagePair("en", "es")], modesDirectory: folder.path, timeoutMs: 300, coldStartTimeoutMs: 30_000)
        #expect(try await translator.translate("hello there", from: "en", to: "es") == "hello there")
        #expect(try await translator.translate("and again", from: "en", to: "es") == "and again")
        let starts = try String(contentsOf: folder.appendingPathComponent("starts"), encoding: .utf8)
        #expect(starts.split(separator: "\n").count == 1, "the cold pipeline was restarted")
    }

    @Test func stagesDoNotInheritAnIgnoredSIGPIPE() async throws {
        // parleyd ignores SIGPIPE; its children must not.
        signal(SIGPIPE, SIG_IGN)
        let pair = LanguagePair("en", "es")
        let translator = try ApertiumTranslator(pairs: [pair], modesDirectory: modes)
        let stages = await translator.stageProcesses(of: pair)
        for pid in stages {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let ignored = status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }?.split(separator: "\t").last
            let mask = UInt64(ignored.map(String.init) ?? "", radix: 16) ?? .max
            #expect(mask & (1 << (UInt64(SIGPIPE) - 1)) == 0, "stage \(pid) ignores SIGPIPE")
        }
    }
}

/// Parley's Apertium against the `apertium` command: the same sentences must come out the same
/// (blanks collapsed: Parley speaks a translation, and Apertium leaves two or three spaces where
/// it drops a word).
///
/// `apertium` itself takes a second or more per call, far too slow for hundreds of sentences in
/// a test, so its answers are recorded in `Tests/data/apertium/*.tsv` by `regenerate.sh`
/// there (sentence, tab, `apertium -u` output), and a few are asked of it live each run, so a
/// changed Apertium package shows up as a failure here rather than as a stale recording.
@Suite("Apertium, the same as the apertium command", .startsProcesses)
struct ApertiumDifferentialTests {
    let modes = "/usr/share/apertium/modes"
    static let data = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../data/apertium")

    /// The recorded sentences and `apertium -u` answers of a direction.
    static func recorded(_ direction: String) throws -> [(sentence: String, expected: String)] {
        let text = try String(contentsOf: data.appendingPathComponent("\(direction).tsv"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 2 else { return nil }
            return (String(fields[0]), String(fields[1]))
        }
    }

    /// What the `apertium` command says of one line, blanks collapsed as Parley collapses them.
    static func apertium(_ options: [String], _ sentence: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["apertium"] + options
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try ProcessLauncher.run(process)
        try input.fileHandleForWriting.write(contentsOf: Data((sentence + "\n").utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return collapsed(String(decoding: data, as: UTF8.self))
    }

    static func collapsed(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    @Test(arguments: [("eng-spa", "en", "es"), ("spa-eng", "es", "en")])
    func everyRecordedSentenceTranslatesAsApertiumDoes(direction: String, source: String, target: String) async throws {
        let sentences = try Self.recorded(direction)
        #expect(sentences.count >= 250)
        let translator = try ApertiumTranslator(pairs: [LanguagePair(source, target)], modesDirectory: modes)
        var differences: [String] = []
        for (sentence, expected) in sentences {
            let translation = try await translator.translate(sentence, from: source, to: target)
            if translation != Self.collapsed(expected) { differences.append("\(sentence) -> \(translation) (apertium: \(expected))") }
        }
        #expect(differences.isEmpty, "\(differences.count) of \(sentences.count) differ:\n\(differences.prefix(20).joined(separator: "\n"))")
    }

    @Test func theRecordingStillMatchesTheInstalledApertium() async throws {
        // A few sentences of each direction, and the marks kept, asked of `apertium` now.
        let english = try Self.recorded("eng-spa")
        let spanish = try Self.recorded("spa-eng")
        let samples: [(options: [String], sentence: String, expected: String?)] = [
            (["-u", "eng-spa"], english[english.count / 3].sentence, english[english.count / 3].expected),
            (["-u", "spa-eng"], spanish[0].sentence, spanish[0].expected),
            (["-u", "spa-eng"], spanish[spanish.count / 2].sentence, spanish[spanish.count / 2].expected),
            (["eng-spa"], "the zorgblatt is red", nil),
        ]
        let live = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for (index, sample) in samples.enumerated() {
                group.addTask { (index, try Self.apertium(sample.options, sample.sentence)) }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        for (index, sample) in samples.enumerated() where sample.expected != nil {
            #expect(live[index] == sample.expected.map(Self.collapsed), "the recording of \(sample.options) is stale; run Tests/data/apertium/regenerate.sh")
        }
        // With marks kept, Parley says what plain `apertium` says.
        let marking = try ApertiumTranslator(pairs: [LanguagePair("en", "es")], modesDirectory: modes, keepUnknownMarks: true)
        #expect(try await marking.translate("the zorgblatt is red", from: "en", to: "es") == live[3])
    }
}
