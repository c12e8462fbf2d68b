import Foundation

#if canImport(Glibc)
    import Glibc
#endif

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
    /// One mapping of /proc/self/smaps.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var path: String
    }

    /// The mappings `release` may drop, from the text of /proc/self/smaps.
    static func releasable(inSmaps text: String) -> [Mapping] {
        var found: [Mapping] = []
        var current: Mapping?
        var clean = false
        func close() {
            if let mapping = current, clean { found.append(mapping) }
            current = nil
        }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            // A mapping's first line: "start-end perms offset dev inode path".
            if fields.count >= 5, fields[0].contains("-"), !fields[0].hasSuffix(":") {
                close()
                let bounds = fields[0].split(separator: "-")
                guard fields[1] == "r-xp", fields.count == 6, bounds.count == 2,
                    let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16), end > start
                else { continue }
                let path = fields[5].trimmingCharacters(in: .whitespaces)
                guard path.hasPrefix("/") else { continue }
                current = Mapping(start: start, end: end, path: path)
                clean = false
            } else if current != nil, fields.count >= 2, fields[0] == "Anonymous:" {
                clean = fields[1] == "0"
            }
        }
        close()
        return found
    }

    /// Releases the resident code pages of this process's clean code mappings. Returns how many
    /// bytes of address space were advised (0 where /proc is not there).
    @discardableResult
    public static func release() -> Int {
        #if os(Linux)
            // Read to the end: /proc's files say they are empty.
            guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return 0 }
            let text = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
            try? file.close()
            var released = 0
            for mapping in releasable(inSmaps: text) {
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
