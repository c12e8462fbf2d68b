import Foundation
import ParleyCore

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
    /// The read-only, non-executable mappings of files in `folder` (not in its subfolders'
    /// names only: the path must start with `folder/`), from the text of /proc/self/maps.
    static func readOnlyMappings(in maps: String, under folder: String) -> [ResidentPages.Mapping] {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return maps.split(separator: "\n").compactMap { line -> ResidentPages.Mapping? in
            guard let header = ResidentPages.header(line), header.permissions.hasPrefix("r-"),
                !header.permissions.contains("w"), !header.permissions.contains("x"),
                let path = header.path, path.hasPrefix(prefix)
            else { return nil }
            return ResidentPages.Mapping(start: header.start, end: header.end, path: path)
        }
    }

    /// Releases the resident pages of this process's read-only mappings of files in `folder`.
    /// Returns how many bytes of address space were advised (0 where /proc is not there).
    @discardableResult
    public static func release(under folder: String) -> Int {
        guard let maps = ResidentPages.procFile("maps") else { return 0 }
        // /proc names files by their real path ("config/../x" and links resolved).
        let real = realpath(folder, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
        return ResidentPages.drop(readOnlyMappings(in: maps, under: real ?? folder))
    }
}
