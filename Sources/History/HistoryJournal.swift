import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// Turns that could not be stored before exit (a full disk at SIGTERM), kept as JSON lines,
/// one `TurnRecord` a line, until the next start stores them.
///
/// The journal goes to the first folder it can be written to: the history's own folder first
/// (enough when only the database is full), then the cache and runtime folders. Its name
/// carries a hash of the history's path, so two histories never take each other's turns.
public enum HistoryJournal {
    /// The journal of the history at `historyPath` in `folder`.
    public static func path(in folder: String, for historyPath: String) -> String {
        let name = (historyPath as NSString).lastPathComponent
        return (folder as NSString).appendingPathComponent("\(name).pending-\(hash(historyPath)).jsonl")
    }

    /// Writes `turns` to a journal in the first of `folders` where it can (after any turns a
    /// journal there already holds); returns its path. Each journal is written whole or not at
    /// all (a temporary file, 0600, flushed, then renamed).
    public static func spill(_ turns: [TurnRecord], historyPath: String, folders: [String]) throws(HistoryError) -> String {
        var problems: [String] = []
        var lines = Data()
        for turn in turns {
            guard let line = try? encoder.encode(turn) else { continue }
            lines.append(line)
            lines.append(0x0A)
        }
        for folder in folders {
            let journal = path(in: folder, for: historyPath)
            do {
                if let problem = AppDatabase.makeFolder(folder) { throw HistoryError(problem) }
                var contents = (try? Data(contentsOf: URL(fileURLWithPath: journal))) ?? Data()
                contents.append(lines)
                try writeWhole(contents, to: journal)
                return journal
            } catch {
                problems.append("\(folder): \(AppDatabase.reason(error))")
            }
        }
        throw HistoryError("no folder could hold the turns (\(problems.joined(separator: "; ")))")
    }

    /// What `restore` did with one journal.
    public struct Restored: Sendable, Equatable {
        public var journal: String
        /// Turns stored from it (then it was removed); 0 when `problem` is set.
        public var stored: Int
        /// Why its turns could not be stored; the journal stays for the next start.
        public var problem: String?
    }

    /// Stores the turns of each journal of `historyPath` found in `folders`, in one new session
    /// per journal (its speakers' languages taken from the turns), and removes each journal
    /// once its turns are committed. A journal whose turns cannot be stored is left as it is.
    public static func restore(into database: AppDatabase, historyPath: String, folders: [String]) -> [Restored] {
        var results: [Restored] = []
        var seen = Set<String>()
        for folder in folders {
            let journal = path(in: folder, for: historyPath)
            guard seen.insert((journal as NSString).standardizingPath).inserted,
                let data = FileManager.default.contents(atPath: journal)
            else { continue }
            // A line cut short (the disk filled up as it was written) is skipped; the rest is kept.
            let turns = data.split(separator: 0x0A).compactMap { turn(fromLine: Data($0)) }
            do {
                if let first = turns.first {
                    let (a, b) = first.languages
                    try database.writer.write { db in
                        var session = SessionRecord(startedAt: first.createdAt, speakerA: a, speakerB: b)
                        session.endedAt = turns.last?.createdAt
                        try session.insert(db)
                        guard let id = session.id else { throw HistoryError("the session has no id") }
                        for var turn in turns {
                            turn.id = nil
                            turn.sessionID = id
                            try turn.insert(db)
                        }
                    }
                }
                try FileManager.default.removeItem(atPath: journal)
                results.append(Restored(journal: journal, stored: turns.count))
            } catch {
                results.append(Restored(journal: journal, stored: 0, problem: "\(error)"))
            }
        }
        return results
    }

    /// One journal line as a turn; nil for a line that is not one (cut short). Lines written
    /// before the words and the detection were typed fields hold each as a string of JSON
    /// (`"word_confidence":"[{\"text\":...}]"`): those strings are read as the JSON they hold.
    static func turn(fromLine line: Data) -> TurnRecord? {
        if let turn = try? decoder.decode(TurnRecord.self, from: line) { return turn }
        guard var object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else { return nil }
        var changed = false
        for key in [TurnRecord.CodingKeys.words, .detection].map(\.rawValue) {
            guard let text = object[key] as? String else { continue }
            object[key] = try? JSONSerialization.jsonObject(with: Data(text.utf8))
            changed = true
        }
        guard changed, let rewritten = try? JSONSerialization.data(withJSONObject: object) else { return nil }
        return try? decoder.decode(TurnRecord.self, from: rewritten)
    }

    /// Writes `data` to a new file beside `path`, made 0600 from the start (what people said is
    /// nobody else's business), flushes it to disk and renames it over `path`.
    private static func writeWhole(_ data: Data, to path: String) throws(HistoryError) {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw HistoryError(String(cString: strerror(errno))) }
        var failure: Int32 = 0
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == 0, rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw HistoryError(String(cString: strerror(failure)))
        }
    }

    /// FNV-1a, 64 bits, in hex: stable across runs (unlike `hashValue`).
    static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        return String(value, radix: 16)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}
