import ArgumentParser
import Foundation
import ParleyCore
import ParleyRecognition

#if canImport(Glibc)
    import Glibc
#endif

/// `parleyd worker`: an engine served over the Wyoming protocol on standard input and output.
/// parleyd starts it itself, so that a crash or a hang in the engine's library costs a worker
/// it starts again, not the daemon and the turn in flight.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "An engine's worker, which parleyd starts itself (docs/protocol.md: Wyoming).",
        shouldDisplay: false,
        subcommands: [Moonshine.self])

    struct Moonshine: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Moonshine tiny (English) through libmoonshine's C API, answering Wyoming requests on standard input and output.")

        @Option(name: .long, help: "libmoonshine.so (from `make engines`).")
        var library: String

        @Option(name: .long, help: "The model's folder (encoder_model.ort, decoder_model_merged.ort, tokenizer.bin).")
        var model: String

        @Flag(name: .long, help: "ONNX Runtime on one thread ([transcriber] moonshine_one_thread); without it, one per core.")
        var oneThread = false

        func run() throws {
            do {
                // libmoonshine reads it as it makes its sessions; the worker has no other thread yet.
                // Off, the library's own choice: not a value parleyd inherited.
                if oneThread { setenv(MoonshineTranscriber.singleThreadVariable, "1", 1) } else { unsetenv(MoonshineTranscriber.singleThreadVariable) }
                let engine = try MoonshineTranscriber(library: library, modelFolder: model)
                // Loading leaves ONNX Runtime's copies of the files in freed heap, and the
                // code it ran resident.
                Heap.trim()
                CodePages.release()
                // Freed memory goes back once the room is quiet, where no turn waits for it.
                try WyomingService.serve(engine, languages: ["en"], input: STDIN_FILENO, output: STDOUT_FILENO, quiet: Heap.trim)
            } catch {
                FileHandle.standardError.write(Data("parleyd worker moonshine: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
