#if canImport(Glibc)
    import Glibc
#endif

/// The process's heap.
public enum Heap {
    /// glibc's `malloc_trim(0)`: the free pages of every arena given back to the system. Found
    /// at run time (nothing where the C library has none). parleyd calls it once a turn is over
    /// and the room quiet (`HeapTrimmer`); Moonshine's worker, after loading and once no request
    /// has come for 2 s (`WyomingService.serve`).
    public static let trim: @Sendable () -> Void = {
        #if os(Linux)
            typealias Trim = @convention(c) (Int) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return {} }
            let function = unsafeBitCast(symbol, to: Trim.self)
            return { _ = function(0) }
        #else
            return {}
        #endif
    }()
}
