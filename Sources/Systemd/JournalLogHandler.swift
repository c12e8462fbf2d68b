import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's log level, changeable while it runs (a config reload); every `ParleyLogHandler`
/// follows it unless a logger set its own.
public enum ParleyLogLevel {
    private static let current = Mutex<Logger.Level>(.info)
    private static let transcriptsLogged = Mutex(false)

    public static var level: Logger.Level {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// `[log] transcripts`: whether what people said (recognized, typed and translated text) may
    /// be logged. Off by default: log lines name turns by id only.
    public static var transcripts: Bool {
        get { transcriptsLogged.withLock { $0 } }
        set { transcriptsLogged.withLock { $0 = newValue } }
    }
}

/// swift-log to stderr, one line per event.
///
/// Under systemd (stderr is the journal's stream, `$JOURNAL_STREAM`) each line starts with its
/// syslog priority, `<3>` (error and critical) to `<7>` (debug and trace), which journald reads
/// as the entry's priority; the journal adds the time and the unit. Elsewhere a line carries a
/// timestamp and the level's name.
public struct ParleyLogHandler: LogHandler {
    public enum Format: Sendable {
        case journal, plain
    }

    public let label: String
    public let format: Format
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private var ownLevel: Logger.Level?
    private let write: @Sendable (String) -> Void

    public init(label: String, format: Format, write: @escaping @Sendable (String) -> Void = ParleyLogHandler.writeToStandardError) {
        self.label = label
        self.format = format
        self.write = write
    }

    public var logLevel: Logger.Level {
        get { ownLevel ?? ParleyLogLevel.level }
        set { ownLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        write(Self.line(level: event.level, message: "\(event.message)", metadata: merged, format: format, label: label))
    }

    /// One log line, without the newline.
    public static func line(level: Logger.Level, message: String, metadata: Logger.Metadata, format: Format, label: String, now: Date = Date()) -> String {
        var text = message
        for key in metadata.keys.sorted() {
            guard let value = metadata[key] else { continue }
            let rendered = "\(value)"
            text += " \(key)=" + (rendered.contains(" ") || rendered.isEmpty ? "\"\(rendered)\"" : rendered)
        }
        // One event, one line: a newline inside would split it into two journal entries.
        text = text.replacingOccurrences(of: "\n", with: "\\n")
        switch format {
        case .journal:
            return "<\(priority(level))>\(text)"
        case .plain:
            return "\(now.formatted(.iso8601)) \(level) \(label): \(text)"
        }
    }

    /// The syslog priority journald gives the line.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error, .critical: 3
        }
    }

    /// The journal format when stderr is the journal's stream (systemd sets `$JOURNAL_STREAM` to
    /// its device and inode), plain otherwise.
    public static func detectFormat(environment: [String: String] = ProcessInfo.processInfo.environment) -> Format {
        guard let stream = environment["JOURNAL_STREAM"] else { return .plain }
        let parts = stream.split(separator: ":")
        var info = stat()
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]), fstat(STDERR_FILENO, &info) == 0 else {
            return .plain
        }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode ? .journal : .plain
    }

    /// Writes the line and its newline with one write(2), so lines from threads never interleave.
    @Sendable public static func writeToStandardError(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(STDERR_FILENO, raw.baseAddress?.advanced(by: offset), raw.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
