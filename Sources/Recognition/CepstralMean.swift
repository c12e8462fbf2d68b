import Foundation

/// The cepstral mean of one acoustic front end heard through one capture device, kept in the
/// cache folder so the first utterance after a start is normalised like the tenth.
///
/// A small text file of numbers, one per cepstral coefficient, written after each utterance
/// (atomically: a crash leaves the old one) and read when the decoder loads.
public struct CepstralMeanStore: Sendable {
    public let path: String

    /// The store for `acousticModel` heard through `device`, in `cacheDirectory`.
    public init(cacheDirectory: String, acousticModel: String, device: String) {
        let name = Self.safeName(acousticModel) + "@" + Self.safeName(device)
        path = (cacheDirectory as NSString).appendingPathComponent("cmn/\(name).txt")
    }

    /// The mean saved last, if there is one that reads back whole.
    public func load(length: Int) -> [Float]? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let values = text.split(whereSeparator: \.isWhitespace).compactMap { Float(String($0)) }
        guard values.count == length, values.allSatisfy(\.isFinite) else { return nil }
        return values
    }

    /// Keeps `mean`; a failure (a read-only or full disk) only costs the next start's first turn.
    public func save(_ mean: [Float]) {
        guard mean.allSatisfy(\.isFinite) else { return }
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = mean.map { String(format: "%.3f", $0) }.joined(separator: " ") + "\n"
        try? text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// A mean to start from when nothing was kept: the one pocketsphinx-en-us ships for this
    /// front end (16 kHz, 13 cepstra, 25 filters from 130 to 6800 Hz). It describes the
    /// microphone and room more than the language, so it suits every model on that front end
    /// far better than PocketSphinx's generic default (8, 0, 0, ...).
    public static let seed: [Float] = [41.00, -5.29, -0.12, 5.09, 2.48, -4.07, -1.37, -1.78, -5.08, -2.05, -6.45, -1.42, 1.17]

    private static func safeName(_ text: String) -> String {
        String(text.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }.suffix(120))
    }
}
