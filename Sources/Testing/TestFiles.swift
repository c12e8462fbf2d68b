import Foundation

/// Files the tests of both test targets make.
public enum TestFiles {
    /// A new, empty folder under the system's temporary folder (the test removes it).
    public static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("parley-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
