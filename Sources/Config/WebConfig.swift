import Foundation

/// `[web]`: the caption page parleyd serves to phones (docs/architecture.md, "The caption page").
public struct WebConfig: Sendable, Equatable {
    /// How actions from the page (typed reply, replay, swap) are allowed.
    public enum Pairing: String, Sendable, Equatable, CaseIterable {
        /// A random 6-digit code, new at each start, that `parley web` shows; the page must give it.
        case code
        /// The page only reads: no action is reachable from the web.
        case readOnly = "read-only"
    }

    /// Off by default: nothing listens on the network unless asked.
    public var enabled = false
    /// The address the page is served on; loopback unless a person names another.
    public var listen = "127.0.0.1"
    /// 0 lets the system choose a free port (for tests).
    public var port = 8470
    public var pairing = Pairing.code

    public init() {}
}
