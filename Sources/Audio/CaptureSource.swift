/// Opens the capture device: the one opened at start-up first, then fresh ones after a pause or
/// a lost device. Owned by the capture loop (handed to its thread, used only there).
public final class CaptureSource {
    private var first: (any AudioCapture)?
    private let reopen: () throws(AudioError) -> any AudioCapture

    public init(first: any AudioCapture, reopen: @escaping () throws(AudioError) -> any AudioCapture) {
        self.first = first
        self.reopen = reopen
    }

    public func open() throws(AudioError) -> any AudioCapture {
        if let first {
            self.first = nil
            return first
        }
        return try reopen()
    }
}

