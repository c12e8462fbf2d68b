import Foundation

/// Synthetic signals for unit tests: tones, noise and silence at 16 kHz.
enum Signals {
    static let rate = 16_000

    static func silence(ms: Int) -> [Int16] {
        [Int16](repeating: 0, count: rate * ms / 1000)
    }

    /// A sine at `amplitude` (0...1 of full scale).
    static func tone(ms: Int, amplitude: Double, hz: Double = 440) -> [Int16] {
        (0..<(rate * ms / 1000)).map { index in
            Int16(amplitude * 32767 * sin(2 * Double.pi * hz * Double(index) / Double(rate)))
        }
    }

    /// Uniform noise at `amplitude`, from a fixed seed so every run is the same.
    static func noise(ms: Int, amplitude: Double, seed: UInt64 = 42) -> [Int16] {
        var state = seed
        return (0..<(rate * ms / 1000)).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let unit = Double(state >> 11) / Double(1 << 53) * 2 - 1
            return Int16(amplitude * 32767 * unit)
        }
    }

    /// Splits a signal into 20 ms periods, as capture delivers it.
    static func periods(_ signal: [Int16], ms: Int = 20) -> [[Int16]] {
        let size = rate * ms / 1000
        return stride(from: 0, to: signal.count, by: size).map { Array(signal[$0..<min(signal.count, $0 + size)]) }
    }
}
