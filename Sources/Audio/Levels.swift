import ParleyCore

/// Loudness of one period of audio, in dB relative to full scale.
public struct Levels: Sendable, Equatable {
    /// The value reported for digital silence, below anything a real microphone produces.
    public static let silenceDB = Decibels.silence

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
        // One pass over the period (the capture loop measures every one).
        var sumSquares = 0.0
        var peak: Int32 = 0
        for sample in samples {
            sumSquares += Double(sample) * Double(sample)
            peak = max(peak, abs(Int32(sample)))
        }
        let fullScale = 32_768.0 * 32_768.0
        self.init(
            rmsDB: Decibels.of(power: sumSquares / Double(samples.count) / fullScale),
            peakDB: Decibels.of(power: Double(peak) * Double(peak) / fullScale))
    }
}
