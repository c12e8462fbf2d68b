import Foundation

/// A value shared between threads, and a way to block until it says "go".
///
/// Every change and every wait happens under the one lock of one `NSCondition`: the value is
/// changed under it, the waiter checks it under it and sleeps under it. A change therefore
/// cannot slip between a waiter's check and its sleep, which is how a condition changed under
/// another lock (a `Mutex`) and then broadcast loses its wake-up and hangs the waiter for good.
///
/// The in-memory engines block real threads (the capture loop in `read()`, the speech worker in
/// `write()`, a recognition lane judging a pause), so the wait is a blocking one, as theirs is
/// live.
public final class Gate<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written with `condition` locked.
    private let condition = NSCondition()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    /// Reads or changes the value; every waiter then looks again.
    @discardableResult
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    /// Blocks until `body` returns something other than nil, and returns it. `body` runs under
    /// the lock each time the value changes, and may change the value (take what it waited for).
    public func wait<Result>(for body: (inout Value) throws -> Result?) rethrows -> Result {
        // `sleep` never gives up here, so neither does the loop (`NSCondition.wait(until:
        // .distantFuture)` traps in corelibs Foundation: the deadline does not fit a timespec).
        while true {
            if let result = try waiting(for: body, sleep: { condition.wait(); return true }) { return result }
        }
    }

    /// As `wait(for:)`, giving up at `deadline` (nil then).
    public func wait<Result>(for body: (inout Value) throws -> Result?, until deadline: Date) rethrows -> Result? {
        try waiting(for: body, sleep: { condition.wait(until: deadline) })
    }

    /// Looks with `body` under the lock, and `sleep`s until the next change while it says nil;
    /// `sleep` returning false (a deadline passed) ends the wait with one last look.
    private func waiting<Result>(for body: (inout Value) throws -> Result?, sleep: () -> Bool) rethrows -> Result? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result = try body(&value) {
                condition.broadcast()
                return result
            }
            guard sleep() else { return try body(&value) }
        }
    }

    /// Blocks until `isOpen` holds for the value.
    public func wait(until isOpen: (Value) -> Bool) {
        wait { value -> Void? in isOpen(value) ? () : nil }
    }

    /// Blocks until `isOpen` holds for the value or `deadline` passes; whether it holds.
    public func wait(until isOpen: (Value) -> Bool, deadline: Date) -> Bool {
        wait(for: { value -> Void? in isOpen(value) ? () : nil }, until: deadline) != nil
    }

    /// Wakes every waiter to look again, the value unchanged.
    public func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
