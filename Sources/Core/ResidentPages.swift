// No Foundation here: ParleyCore is linked into the `parley` CLI, and Foundation's classes
// (FileHandle, CharacterSet) bring ICU with them, 40 MB (docs/architecture.md, "Budgets").
#if canImport(Glibc)
    import Glibc
#endif

/// Resident pages of file mappings that a process no longer needs, given back to the system
/// (`madvise(MADV_DONTNEED)`). The mappings stay: a page read later is read from the file
/// again. Only mappings whose pages are the file's own bytes may be dropped so.
public enum ResidentPages {
    /// One mapping of /proc/self/maps or /proc/self/smaps.
    public struct Mapping: Equatable, Sendable {
        public var start: UInt
        public var end: UInt
        public var path: String

        public init(start: UInt, end: UInt, path: String) {
            self.start = start
            self.end = end
            self.path = path
        }
    }

    /// A /proc file of this process, read to the end (/proc's files say they are empty, and a
    /// reader that trusts the size gets only the first part of a long one); nil where there is
    /// none.
    public static func procFile(_ name: String) -> String? {
        #if os(Linux)
            let descriptor = open("/proc/self/" + name, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                bytes += chunk[0..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        #else
            return nil
        #endif
    }

    /// A mapping's first line ("start-end perms offset dev inode path", the path perhaps with
    /// spaces): its bounds, permissions and path; nil for any other line.
    public static func header(_ line: Substring) -> (start: UInt, end: UInt, permissions: Substring, path: String?)? {
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count >= 5, !fields[0].hasSuffix(":") else { return nil }
        let bounds = fields[0].split(separator: "-")
        guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16), end > start else {
            return nil
        }
        let path = fields.count == 6 ? String(trimmingBlanks(fields[5])) : nil
        return (start, end, fields[1], path)
    }

    /// `text` without the spaces and tabs at either end.
    static func trimmingBlanks(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) }) else { return "" }
        return text[first...last]
    }

    /// Drops the resident pages of `mappings`. Returns how many bytes of address space were
    /// advised.
    @discardableResult
    public static func drop(_ mappings: [Mapping]) -> Int {
        #if os(Linux)
            var released = 0
            for mapping in mappings {
                guard let address = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
                let length = Int(mapping.end - mapping.start)
                if madvise(address, length, MADV_DONTNEED) == 0 { released += length }
            }
            return released
        #else
            return 0
        #endif
    }
}

/// Pages of program code that start-up ran and nothing runs again.
///
/// parleyd is one static binary of 30 MB of code. Start-up (the runtime's set-up, reading the
/// config, loading the models) runs code all over it, and the kernel maps the neighbours of
/// every page it runs (fault-around): 27 MiB of parleyd's code pages stayed resident for good,
/// where a turn runs about 16 (docs/benchmarks.md, "Memory after turns"). `release` tells the
/// kernel the process's code pages are not needed now (`madvise(MADV_DONTNEED)`): code that
/// runs again is read back from the page cache at its first call, in microseconds.
///
/// Only private, executable, read-only mappings of files are touched, and only those holding no
/// page of their own (`Anonymous: 0 kB` in /proc/self/smaps): their pages are the file's bytes,
/// so dropping them loses nothing. A page that was written (a library relocated in place) is
/// anonymous, and its mapping is left alone.
public enum CodePages {
    /// The mappings `release` may drop, from the text of /proc/self/smaps.
    static func releasable(inSmaps text: String) -> [ResidentPages.Mapping] {
        var found: [ResidentPages.Mapping] = []
        var current: ResidentPages.Mapping?
        var clean = false
        for line in text.split(separator: "\n") {
            if let header = ResidentPages.header(line) {
                if let mapping = current, clean { found.append(mapping) }
                current = nil
                clean = false
                if header.permissions == "r-xp", let path = header.path, path.hasPrefix("/") {
                    current = ResidentPages.Mapping(start: header.start, end: header.end, path: path)
                }
            } else if current != nil, line.hasPrefix("Anonymous:") {
                clean = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == "0"
            }
        }
        if let mapping = current, clean { found.append(mapping) }
        return found
    }

    /// Releases the resident code pages of this process's clean code mappings. Returns how many
    /// bytes of address space were advised (0 where /proc is not there).
    @discardableResult
    public static func release() -> Int {
        guard let smaps = ResidentPages.procFile("smaps") else { return 0 }
        return ResidentPages.drop(releasable(inSmaps: smaps))
    }
}
