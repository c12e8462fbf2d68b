import Testing
@testable import ParleyAudio

@Suite("Levels")
struct LevelsTests {
    @Test func digitalSilenceIsTheFloor() {
        let levels = Levels(measuring: Signals.silence(ms: 20))
        #expect(levels.rmsDB == Levels.silenceDB)
        #expect(levels.peakDB == Levels.silenceDB)
    }

    @Test func emptyPeriodIsSilence() {
        #expect(Levels(measuring: [Int16]()).rmsDB == Levels.silenceDB)
    }

    @Test func halfScaleSineHasKnownRMSAndPeak() {
        // A sine of amplitude A has RMS A/√2: 0.5 → -9.03 dBFS; its peak is -6.02 dBFS.
        let levels = Levels(measuring: Signals.tone(ms: 100, amplitude: 0.5, hz: 400))
        #expect(abs(levels.rmsDB - -9.03) < 0.1)
        #expect(abs(levels.peakDB - -6.02) < 0.1)
    }

    @Test func fullScaleSquareIsZeroDB() {
        let square = (0..<320).map { $0 % 2 == 0 ? Int16.max : Int16.min }
        let levels = Levels(measuring: square)
        #expect(abs(levels.rmsDB) < 0.01)
        #expect(abs(levels.peakDB) < 0.01)
    }

    @Test func quieterSignalMeasuresLower() {
        let loud = Levels(measuring: Signals.tone(ms: 20, amplitude: 0.1))
        let quiet = Levels(measuring: Signals.tone(ms: 20, amplitude: 0.01))
        #expect(abs((loud.rmsDB - quiet.rmsDB) - 20) < 0.5)
    }
}
