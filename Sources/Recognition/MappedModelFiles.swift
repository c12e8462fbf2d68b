import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Pages of model files that a library mapped into memory and no longer reads.
///
/// libmoonshine maps Moonshine's two .ort files (42 MiB) and hands the bytes to ONNX Runtime,
/// which copies what it needs into its own memory while the session is made: the mapping is
/// never read again, yet its pages stayed resident and counted in parleyd's memory
/// (docs/benchmarks.md, "Memory after turns"). `release` tells the kernel they are not needed
/// (`madvise(MADV_DONTNEED)`). The mappings stay: a page read later is read from the file
/// again, so nothing a library holds becomes invalid. Only read-only mappings are touched,
/// which hold the file's own bytes and nothing written.
public enum MappedModelFiles {
    /// One mapping of /proc/self/maps.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
        var path: String
    }

    /// The read-only, non-executable mappings of files in `folder` (not in its subfolders'
    /// names only: the path must start with `folder/`), from the text of /proc/self/maps.
    static func readOnlyMappings(in maps: String, under folder: String) -> [Mapping] {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return maps.split(separator: "\n").compactMap { line -> Mapping? in
            // start-end perms offset dev inode path (the path may hold spaces)
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].hasPrefix("r-"), !fields[1].contains("w"), !fields[1].contains("x") else { return nil }
            let path = fields[5].trimmingCharacters(in: .whitespaces)
            guard path.hasPrefix(prefix) else { return nil }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16), end > start else {
                return nil
            }
            return Mapping(start: start, end: end, path: path)
        }
    }

    /// Releases the resident pages of this process's read-only mappings of files in `folder`.
    /// Returns how many bytes of address space were advised (0 where /proc is not there).
    @discardableResult
    public static func release(under folder: String) -> Int {
        #if os(Linux)
            // Read to the end: /proc's files say they are empty, and a reader that trusts the size
            // gets only the first part of a long one.
            guard let file = FileHandle(forReadingAtPath: "/proc/self/maps") else { return 0 }
            let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
            try? file.close()
            // /proc names files by their real path ("config/../x" and links resolved).
            let real = realpath(folder, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            }
            var released = 0
            for mapping in readOnlyMappings(in: maps, under: real ?? folder) {
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
