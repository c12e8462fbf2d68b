import Foundation
import ParleyCore
import ParleyTesting
import Testing

@testable import ParleyRecognition

#if canImport(Glibc)
    import Glibc
#endif

/// Releasing the pages of model files a library mapped and no longer reads (Moonshine's .ort).
@Suite("Moonshine's mapped model files")
struct MoonshineMappedFilesTests {
    @Test func onlyReadOnlyMappingsOfFilesInTheFolderAreChosen() {
        let maps = """
            7f1192200000-7f1193f01000 r--p 00000000 fe:00 5957749                    /e/moonshine/tiny-en/decoder_model_merged.ort
            7f11d8c00000-7f11d98ab000 r--p 00000000 fe:00 5957734                    /e/moonshine/tiny-en/encoder model.ort
            7f11d9000000-7f11d9100000 rw-p 00000000 fe:00 5957734                    /e/moonshine/tiny-en/written.bin
            7f11da000000-7f11da100000 r-xp 00000000 fe:00 5957735                    /e/moonshine/tiny-en/code.so
            7f11db000000-7f11db100000 r--p 00000000 fe:00 5957736                    /e/moonshine/tiny-en-other/x.ort
            7f11dc000000-7f11dc100000 r--p 00000000 00:00 0
            """
        let chosen = MappedModelFiles.readOnlyMappings(in: maps, under: "/e/moonshine/tiny-en")
        #expect(chosen.map(\.path) == ["/e/moonshine/tiny-en/decoder_model_merged.ort", "/e/moonshine/tiny-en/encoder model.ort"])
        #expect(chosen.first == ResidentPages.Mapping(start: 0x7f11_9220_0000, end: 0x7f11_93f0_1000, path: "/e/moonshine/tiny-en/decoder_model_merged.ort"))
    }

    @Test(.blocksThreads) func aMappedFilesPagesLeaveMemoryAndItStillReadsTheSame() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-mapped-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let size = 4 << 20
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let file = folder.appendingPathComponent("model.ort")
        try Data(bytes).write(to: file)
        let descriptor = open(file.path, O_RDONLY)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0)
        try #require(mapped != MAP_FAILED)
        let pages = try #require(mapped)
        defer { munmap(pages, size) }
        let view = pages.assumingMemoryBound(to: UInt8.self)
        var sum = 0
        for index in stride(from: 0, to: size, by: 4096) { sum &+= Int(view[index]) }
        #expect(residentKilobytes(of: file.path) >= 4000)

        #expect(MappedModelFiles.release(under: folder.path) == size)
        #expect(residentKilobytes(of: file.path) == 0)
        // Still the file's bytes: read again from the file.
        #expect((0..<size).allSatisfy { view[$0] == bytes[$0] })
    }

    /// The resident kilobytes of this process's mappings of `path` (/proc/self/smaps).
    func residentKilobytes(of path: String) -> Int {
        // Read to the end: /proc's files say they are empty, and smaps is long.
        guard let data = FileHandle(forReadingAtPath: "/proc/self/smaps")?.readDataToEndOfFile() else { return -1 }
        let smaps = String(decoding: data, as: UTF8.self)
        let real = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        var inside = false
        var total = 0
        for line in smaps.split(separator: "\n") {
            if let range = line.split(separator: " ").first, range.contains("-"), range.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                inside = line.hasSuffix(real)
            } else if inside, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
            }
        }
        return total
    }
}
