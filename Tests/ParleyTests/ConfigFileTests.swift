import Foundation
import Synchronization
import ParleyTesting
import Testing
@testable import ParleyConfig
import ParleyEndpoint

#if canImport(Glibc)
import Glibc
#endif

/// A flag a writer thread stops on.
private final class StopFlag: Sendable {
    let stopped = Atomic<Bool>(false)
    let versions = Atomic<Int>(0)
    /// Versions whose second write came `ConfigFile.settle` or more after the first: the writer
    /// thread was held up that long (a loaded machine), and the half it left looked finished.
    let stalls = Atomic<Int>(0)
}

/// Reading a config file (issue 16, items 15 and 17).
@Suite("Config file")
struct ConfigFileTests {
    private func temporaryFolder() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    private func loadError(_ path: String) -> String? {
        do {
            _ = try ParleyConfig.load(path: path, environment: ["HOME": "/home/someone"])
            return nil
        } catch {
            return error.description
        }
    }

    /// One short line: no NSError text, no line break, no value pasted whole.
    private func expectShortLine(_ message: String?, saying words: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        guard let message else {
            Issue.record("no error", sourceLocation: sourceLocation)
            return
        }
        #expect(message.count < 300, "\(message.prefix(400))", sourceLocation: sourceLocation)
        #expect(!message.contains("\n"), sourceLocation: sourceLocation)
        for noise in ["NSCocoaErrorDomain", "Error Domain", "The operation could not be completed", "UserInfo"] {
            #expect(!message.contains(noise), "\(message)", sourceLocation: sourceLocation)
        }
        for word in words {
            #expect(message.contains(word), "\(message)", sourceLocation: sourceLocation)
        }
    }

    // MARK: - Item 17: a file being written

    /// A writer rewrites the file in place (truncate, then two writes, as `cat > file` or an
    /// editor without atomic saves does) while loads run: a load either gets the whole file or
    /// is refused; never half of it, never the defaults of an empty one.
    @Test(.blocksThreads) func aFileRewrittenWhileLoadsRunIsNeverTakenHalfWritten() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/parley.toml"
        let head = "[conversation]\nspeaker_a = \"es\"\nspeaker_b = \"en\"\n\n"
        let tail = "[endpoint]\nsilence_ms = 1234\n\n[log]\nlevel = \"debug\"\n"
        try (head + tail).write(toFile: path, atomically: false, encoding: .utf8)
        let flag = StopFlag()
        let writer = Thread {
            var round = 0
            while !flag.stopped.load(ordering: .relaxed) {
                // Timed from the truncation: on a loaded machine the writer can stand still
                // before its first write too, and an empty file left alone for `settle` is taken.
                let half = ContinuousClock.now
                let descriptor = open(path, O_WRONLY | O_TRUNC)
                guard descriptor >= 0 else { continue }
                _ = head.withCString { write(descriptor, $0, strlen($0)) }
                usleep(UInt32(200 + round % 5 * 300))
                _ = tail.withCString { write(descriptor, $0, strlen($0)) }
                if ContinuousClock.now - half >= ConfigFile.settle { flag.stalls.add(1, ordering: .relaxed) }
                close(descriptor)
                flag.versions.add(1, ordering: .relaxed)
                round += 1
                // Mostly rewritten at once; now and then left alone long enough to be read.
                usleep(round % 4 == 0 ? 150_000 : UInt32(round % 7 * 1_000))
            }
        }
        writer.start()
        defer { flag.stopped.store(true, ordering: .relaxed) }
        var whole = 0
        var refused = 0
        var partial: [String] = []
        // At least 40 loads, over at least 30 rewrites.
        while whole + refused + partial.count < 40 || flag.versions.load(ordering: .relaxed) < 30 {
            switch Self.readAndParse(path) {
            case .success(let (text, config)):
                if config.speakerA == "es" && config.endpoint.silenceMs == 1234 && config.logLevel == "debug" {
                    whole += 1
                } else {
                    partial.append(text)
                }
            case .failure(let error):
                #expect(error.description.contains("changed while it was being read"), "\(error)")
                refused += 1
            }
        }
        flag.stopped.store(true, ordering: .relaxed)
        #expect(whole > 0, "no load ever got the file: \(refused) refused")
        // A file that stops changing for `settle` is taken: half a file is applied only when
        // the writer itself stood still that long between its two writes.
        #expect(partial.isEmpty || flag.stalls.load(ordering: .relaxed) > 0, "applied a partial file: \(partial)")
    }

    /// What a reload does: `ParleyConfig.load`, with the text it read when it applies.
    private static func readAndParse(_ path: String) -> Result<(String, ParleyConfig), ConfigError> {
        Result { () throws(ConfigError) in
            let config = try ParleyConfig.load(path: path, environment: ["HOME": "/home/someone"])
            return ("speaker_a \(config.speakerA), silence_ms \(config.endpoint.silenceMs), level \(config.logLevel)", config)
        }
    }

    @Test func aFileLeftAloneIsReadAtOnce() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/parley.toml"
        try "[conversation]\nspeaker_b = \"fr\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try ParleyConfig.load(path: path).speakerB == "fr")
    }

    // MARK: - Item 15: not a config file

    @Test func aFolderAsConfigSaysToPassTheFileInside() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        expectShortLine(loadError(folder), saying: "is a folder", "parley.toml")
    }

    @Test func aFIFOAsConfigIsNotReadNorCalledAPermissionProblem() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/parley.toml"
        #expect(mkfifo(fifo, 0o600) == 0)
        let message = loadError(fifo)
        expectShortLine(message, saying: "a FIFO", "--config")
        #expect(message?.contains("permission") == false)
    }

    @Test func aDeviceAsConfigIsNotRead() {
        let message = loadError("/dev/zero")
        expectShortLine(message, saying: "/dev/zero", "a device", "--config")
        #expect(message?.contains("permission") == false)
    }

    @Test func aMissingConfigSaysSo() {
        expectShortLine(loadError("/nonexistent/parley.toml"), saying: "does not exist", "--config")
    }

    @Test func aHugeFileIsRefusedBeforeItIsRead() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/parley.toml"
        try ("[conversation]\nspeaker_a = \"" + String(repeating: "x", count: 10_000_000) + "\"\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        expectShortLine(loadError(path), saying: "KB", "right file")
    }

    @Test func aLongValueIsNotEchoedWhole() {
        for text in [
            "[conversation]\nspeaker_a = \"" + String(repeating: "x", count: 500_000) + "\"\n",
            "[conversation]\nmode = \"" + String(repeating: "y", count: 500_000) + "\"\n",
            "[log]\nlevel = \"" + String(repeating: "z", count: 500_000) + "\"\n",
            "[conversation]\n" + String(repeating: "k", count: 500_000) + " = 1\n",
            "[translator]\nbackends = [\"" + String(repeating: "b", count: 500_000) + "\"]\n",
        ] {
            let message = configError(text, environment: ["HOME": "/home/someone"])
            expectShortLine(message)
        }
    }
}
