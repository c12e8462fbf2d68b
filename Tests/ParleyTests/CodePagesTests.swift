import Testing

@testable import ParleyCore

/// Only clean code mappings of files are released: never data, never a page written in place.
@Suite("Code pages")
struct CodePagesTests {
    static let smaps = """
        55d0a0000000-55d0a2c90000 r-xp 00000000 fd:01 123 /usr/bin/parleyd
        Size:              45632 kB
        Rss:               27352 kB
        Anonymous:             0 kB
        55d0a2c90000-55d0a2dc2000 r--p 02c90000 fd:01 123 /usr/bin/parleyd
        Anonymous:          1224 kB
        55d0a2dc2000-55d0a5000000 rw-p 02dc2000 fd:01 123 /usr/bin/parleyd
        Anonymous:           400 kB
        7f0000000000-7f0000100000 r-xp 00000000 fd:01 456 /usr/lib/libtextrel.so
        Anonymous:             8 kB
        7f0000200000-7f0000300000 r-xp 00000000 00:00 0 
        Anonymous:            64 kB
        7f0000400000-7f0000500000 r-xp 00000000 fd:01 789 /usr/lib/with space.so
        Rss:                  40 kB
        Anonymous:             0 kB
        7f0000600000-7f0000601000 r-xp 00000000 00:00 0                          [vdso]
        Anonymous:             0 kB
        """

    @Test func onlyCleanCodeOfFilesIsReleasable() {
        let found = CodePages.releasable(inSmaps: Self.smaps)
        #expect(
            found == [
                ResidentPages.Mapping(start: 0x55d0_a000_0000, end: 0x55d0_a2c9_0000, path: "/usr/bin/parleyd"),
                ResidentPages.Mapping(start: 0x7f00_0040_0000, end: 0x7f00_0050_0000, path: "/usr/lib/with space.so"),
            ])
    }

    /// On this process: its code is released, and runs on afterwards (read back from the file):
    /// the same code, run again, finds the same clean code mappings.
    @Test func releasingThisProcesssCodeKeepsItRunning() {
        #if os(Linux)
            let before = CodePages.releasable(inSmaps: ResidentPages.procFile("smaps") ?? "")
            #expect(CodePages.release() > 0)
            let after = CodePages.releasable(inSmaps: ResidentPages.procFile("smaps") ?? "")
            #expect(!after.isEmpty && Set(after.map(\.path)) == Set(before.map(\.path)))
        #endif
    }
}
