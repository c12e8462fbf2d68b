import Foundation

/// Levels of 16-bit audio in dB relative to full scale, as every stage measures them.
public enum Decibels {
    /// The level given to digital silence, below anything a real microphone produces.
    public static let silence: Float = -96

    /// The mean power of `samples` relative to full scale (1: every sample at full scale).
    public static func meanPower<C: Collection>(of samples: C) -> Double where C.Element == Int16 {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return sum / Double(samples.count) / (32_768.0 * 32_768.0)
    }

    /// A power relative to full scale, in dB (no lower than `silence`).
    public static func of(power: Double) -> Float {
        guard power > 0 else { return silence }
        return max(silence, Float(10 * log10(power)))
    }

    /// The level of `samples` (their mean power, in dB).
    public static func level<C: Collection>(of samples: C) -> Float where C.Element == Int16 {
        of(power: meanPower(of: samples))
    }
}
