/// Loudness of one period of audio, in dB relative to full scale.
public struct Levels: Sendable, Equatable {
    /// The value reported for digital silence, below anything a real microphone produces.
    public static let silenceDB: Float = -96

    public let rmsDB: Float
    public let peakDB: Float

    public init(rmsDB: Float, peakDB: Float) {
        self.rmsDB = rmsDB
        self.peakDB = peakDB
    }

    /// Measures RMS and peak of 16-bit samples.
    public init<C: Collection>(measuring samples: C) where C.Element == Int16 {
        guard !samples.isEmpty else {
            self.init(rmsDB: Levels.silenceDB, peakDB: Levels.silenceDB)
            return
        }
        var sumSquares: Double = 0
        var peak: Int32 = 0
        for sample in samples {
            let value = Int32(sample)
            sumSquares += Double(value * value)
            peak = max(peak, abs(value))
        }
        let rms = (sumSquares / Double(samples.count)).squareRoot() / 32768
        self.init(rmsDB: Levels.decibels(rms), peakDB: Levels.decibels(Double(peak) / 32768))
    }

    static func decibels(_ amplitude: Double) -> Float {
        guard amplitude > 0 else { return silenceDB }
        return max(silenceDB, Float(20 * log10(amplitude)))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
