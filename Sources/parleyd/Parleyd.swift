import ArgumentParser
import Foundation
import Logging
import ParleyDaemon
import ParleyProtocol
import ParleySystemd

/// parleyd: the Parley daemon. Everything but argument parsing lives in ParleyDaemon.
@main
struct Parleyd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "parleyd",
        abstract: "Hands-free conversation interpreter: hears one person, speaks the translation to the other.",
        discussion: """
            Live: parleyd --config /etc/parley/parley.toml
            File mode: parleyd --config FILE --input in.wav --output out.wav runs a recording through the \
            same pipeline, writes what would have been played to out.wav, logs the turns and exits.
            Another language: parleyd model check DIR, then parleyd model install DIR --language xx.
            """,
        version: ParleyVersion.string,
        subcommands: [ModelCommand.self, WorkerCommand.self])

    @Option(name: .long, help: "The TOML config file (config/parley.toml documents every key).")
    var config: String?

    @Option(name: .long, help: "File mode: a 16 kHz mono 16-bit .wav or .raw recording to use instead of the microphone.")
    var input: String?

    @Option(name: .long, help: "File mode: the .wav file that receives what would have been played.")
    var output: String?

    @Flag(name: .long, help: "File mode: read the recording at the speed of a live microphone (for measuring latency).")
    var pace = false

    /// Usage errors exit 2, as documented (docs/architecture.md), rather than ArgumentParser's 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(DaemonFailure.Code.config.rawValue)
            }
            exit(withError: error)
        }
    }

    func validate() throws {
        if (input == nil) != (output == nil) {
            throw ValidationError("--input and --output go together: give both to run a recording, or neither to use the sound devices")
        }
    }

    func run() async throws {
        // Under systemd each line carries its priority (<3> to <7>) for the journal.
        let format = ParleyLogHandler.detectFormat()
        LoggingSystem.bootstrap { label in ParleyLogHandler(label: label, format: format) }
        let logger = Logger(label: "parleyd")
        do {
            try await Daemon.run(DaemonOptions(configPath: config, input: input, output: output, pace: pace), logger: logger)
        } catch let failure as DaemonFailure {
            // One line that says what to do; under systemd a <3> journal entry.
            logger.critical("\(failure.description)")
            throw ExitCode(failure.code.rawValue)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(DaemonFailure.Code.runtime.rawValue)
        }
    }
}
