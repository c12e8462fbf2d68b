import Foundation
import Logging
import ParleyAudio
import ParleyConfig
import ParleyCore
import ParleyControl
import ParleyHistory
import ParleyProtocol
import ParleyRecognition
import ParleyRuntime
import Synchronization

/// A whole conversation runtime on in-memory engines: the same `Interpreter` parleyd runs,
/// built by the same factory, with a scripted microphone, a recording speaker, scripted
/// recognizers, a silent synthesizer, an echo translator, an in-memory history and a manual
/// clock. Nothing here touches a sound card, a model or the disk.
///
/// Time on the capture timeline passes only when the test gives the microphone audio, so every
/// turn is driven period by period; `ManualClock` times the turns, and the capture backoff of a
/// lost microphone waits on it until the test moves it (`clock.letSleepsPass`).
public final class TestConversation: Sendable {
    public let interpreter: Interpreter
    public let microphone: ScriptedMicrophone
    public let speaker: RecordingSpeaker
    public let recognizers: RecognizerScript
    public let translator: EchoTranslator
    public let synthesizer: SilentSynthesizer
    public let clock: ManualClock
    public let history: AppDatabase
    public let writer: HistoryWriter
    public let events: EventBus
    /// Every event published, in order, until read.
    private let received = Mutex<[Data]>([])
    private let running: Mutex<Task<Result<Void, AudioError>, Never>?>

    /// `config` gives the languages, mode and endpointing (its model and device keys are not
    /// used); `hearable` are the languages with a "model"; `accurate` the accurate engines
    /// (`ScriptedTranscriber`), if any. `realTime: false, hearsPlayback: false` is a recording,
    /// as file mode reads one.
    public init(
        config: ParleyConfig = ParleyConfig(), hearable: Set<String> = ["en", "es"], realTime: Bool = true, hearsPlayback: Bool = true,
        translator: EchoTranslator = EchoTranslator(), synthesizer: sending SilentSynthesizer = SilentSynthesizer(),
        accurate: AccurateHearing? = nil
    ) throws {
        microphone = ScriptedMicrophone(isRealTime: realTime, hearsPlayback: hearsPlayback)
        speaker = RecordingSpeaker(sampleRate: synthesizer.sampleRate)
        recognizers = RecognizerScript(languages: hearable)
        self.translator = translator
        self.synthesizer = synthesizer
        clock = ManualClock()
        history = try AppDatabase.inMemory()
        events = EventBus(capacity: 4096)
        writer = HistoryWriter(store: history, speakerA: config.speakerA, speakerB: config.speakerB)
        writer.startSession(speakerA: config.speakerA, speakerB: config.speakerB)
        var logger = Logger(label: "parley.test")
        logger.logLevel = ProcessInfo.processInfo.environment["PARLEY_TEST_LOG"] == nil ? .critical : .debug
        let voices = synthesizer.languages
        interpreter = Interpreter.make(
            config: config,
            engines: EngineAccess(
                recognizers: recognizers, canSpeak: { voices.contains($0) },
                translator: translator, accurate: accurate),
            synthesizer: synthesizer, playback: speaker.playback(),
            capture: microphone.source(), history: writer, events: events, logger: logger, clock: ParleyClock(clock))
        running = Mutex(nil)
        let subscription = events.subscribe()
        Task { [self] in
            while let line = await subscription.next() {
                received.withLock { $0.append(line) }
            }
        }
    }

    /// Starts the conversation (its capture loop waits for the microphone).
    public func start() {
        let interpreter = self.interpreter
        running.withLock { task in
            task = Task {
                do throws(AudioError) {
                    try await interpreter.run()
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// Ends the recording (or stops, with `stop: true`), waits for the runtime to finish and for
    /// history to commit what it was given.
    @discardableResult
    public func finish(stop: Bool = false) async -> Result<Void, AudioError>? {
        if stop { interpreter.stop() }
        microphone.end()
        guard let task = running.withLock({ $0 }) else { return nil }
        let result = await task.value
        // As the daemon's conversation service does: the turns queued are committed.
        _ = await writer.flush(timeout: .seconds(10))
        return result
    }

    /// How long a test waits for what should come: a guard against a hang, not a measurement.
    /// Long, because on a two-core machine the in-memory suite's long synchronous tests (the
    /// config fuzzing, the mapped-file checks) can hold Swift's cooperative pool for 10-20 s, and
    /// a conversation's events wait for a pool thread meanwhile (10 s made tests fail that way).
    public static let patience: TimeInterval = 60

    /// The next event of `type` (skipping others), decoded; nil if none came within `seconds`.
    public func next<Payload: Decodable>(_ type: String, as payload: Payload.Type, seconds: TimeInterval = TestConversation.patience) async -> Payload? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            guard let line = await nextLine(before: deadline) else { return nil }
            guard let envelope = try? JSONDecoder().decode(Envelope.self, from: line), envelope.type == type else { continue }
            return try? JSONDecoder().decode(Wrapped<Payload>.self, from: line).data
        }
        return nil
    }

    /// Waits (bounded, as a guard against a hung test, not a measurement) until `condition` holds.
    public static func until(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<Int(patience * 1000) {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    /// Every event type seen until one of `type` (included); nil if it did not come.
    public func types(until type: String, seconds: TimeInterval = TestConversation.patience) async -> [String]? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var seen: [String] = []
        while let line = await nextLine(before: deadline) {
            guard let envelope = try? JSONDecoder().decode(Envelope.self, from: line) else { continue }
            if envelope.type == EventType.level { continue }
            seen.append(envelope.type)
            if envelope.type == type { return seen }
        }
        return nil
    }

    /// Every event (its type and line) seen until one of `type` (included), levels left out;
    /// nil if it did not come.
    public func events(until type: String, seconds: TimeInterval = TestConversation.patience) async -> [(type: String, line: Data)]? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var seen: [(type: String, line: Data)] = []
        while let line = await nextLine(before: deadline) {
            guard let envelope = try? JSONDecoder().decode(Envelope.self, from: line) else { continue }
            if envelope.type == EventType.level { continue }
            seen.append((envelope.type, line))
            if envelope.type == type { return seen }
        }
        return nil
    }

    /// The next event line, in order; nil if none came before `deadline` (a guard against a
    /// hung test, not a measurement).
    private func nextLine(before deadline: Date) async -> Data? {
        while Date() < deadline {
            if let line = received.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return line }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return nil
    }

    private struct Wrapped<Payload: Decodable>: Decodable {
        var data: Payload
    }
}
