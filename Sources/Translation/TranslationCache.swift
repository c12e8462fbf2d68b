import Synchronization

/// Recent translations, least recently used dropped first, so a repeated phrase costs nothing.
public final class TranslationCache: Sendable {
    public struct Key: Hashable, Sendable {
        public var source: String
        public var target: String
        public var text: String
    }

    private struct Storage {
        var values: [Key: (value: String, route: String?, used: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    public let capacity: Int
    private let storage = Mutex(Storage())

    public init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    public func value(for key: Key) -> String? { entry(for: key)?.value }

    /// The translation kept for `key` and the route it took when it was made.
    public func entry(for key: Key) -> (value: String, route: String?)? {
        storage.withLock { storage in
            guard let entry = storage.values[key] else { return nil }
            storage.tick += 1
            storage.values[key] = (entry.value, entry.route, storage.tick)
            return (entry.value, entry.route)
        }
    }

    public func insert(_ value: String, route: String? = nil, for key: Key) {
        guard capacity > 0 else { return }
        storage.withLock { storage in
            storage.tick += 1
            storage.values[key] = (value, route, storage.tick)
            if storage.values.count > capacity, let oldest = storage.values.min(by: { $0.value.used < $1.value.used })?.key {
                storage.values.removeValue(forKey: oldest)
            }
        }
    }

    public var count: Int { storage.withLock { $0.values.count } }

    func removeAll() { storage.withLock { $0.values.removeAll() } }
}
