import ParleyCore  // SettingsChange, what a reload applies at once
import TOMLKit

/// How a changed key takes effect when the file is read again (`parley reload`, SIGHUP).
public enum KeyReload<Root>: Sendable {
    /// Read only at start-up: a change is reported as needing a restart.
    case restart
    /// Applied at once, as part of the conversation settings a `set` changes.
    case set(@Sendable (inout SettingsChange, Root) -> Void)
    /// Applied at once by the daemon itself (the log's level, whether transcripts are logged).
    case atOnce
}

/// How a key declared on `Root` with a value of `Value` is reloaded; turned into `KeyReload`
/// by the key that names it.
public enum Reload<Value>: Sendable {
    case restart
    /// Applied at once, as this field of `set`.
    case set(any WritableKeyPath<SettingsChange, Value?> & Sendable)
    case atOnce
}

/// One key of the config file, declared once: its name, how its value is read and checked
/// (bounds included) into the field that holds it (whose initial value is the default), and
/// when a change takes effect. Parsing, the allowed keys, the reload plan and the check that
/// config/parley.toml documents every key all read these tables (`ParleyConfig.sections`).
public struct ConfigKey<Root>: Sendable {
    public let name: String
    public let reload: KeyReload<Root>
    /// A pattern stands for every key of its table that no other key names (`[recognizer.<lang>]`).
    public let isPattern: Bool
    /// The keys of the table this key holds, when it holds one (for the documentation check).
    public let tableKeys: [String]
    /// Reads the key named `key` of the section (absent: nothing changes).
    let read: @Sendable (Section, _ key: String, inout Root) throws(ConfigError) -> Void
    /// The names (this key's, or a pattern's keys) whose values differ between two roots.
    let changed: @Sendable (Root, Root) -> [String]
    /// Copies the value from another root.
    let adopt: @Sendable (inout Root, Root) -> Void

    /// A key whose value `parse` reads from the section (nil: absent).
    static func key<Value: Equatable & Sendable>(
        _ name: String, _ field: any WritableKeyPath<Root, Value> & Sendable, _ reload: Reload<Value> = .restart,
        parse: @escaping @Sendable (Section, String) throws(ConfigError) -> Value?
    ) -> ConfigKey {
        ConfigKey(
            name: name, reload: reload.keyReload(field), isPattern: false, tableKeys: [],
            read: { section, key, root throws(ConfigError) in
                if let value = try parse(section, key) { root[keyPath: field] = value }
            },
            changed: { $0[keyPath: field] == $1[keyPath: field] ? [] : [name] },
            adopt: { $0[keyPath: field] = $1[keyPath: field] })
    }

    /// A table of its own under a fixed name (`[translator.libretranslate]`), read by `table`.
    static func table<Value: Equatable & Sendable>(
        _ name: String, _ field: any WritableKeyPath<Root, Value> & Sendable, _ table: ConfigTable<Value>
    ) -> ConfigKey {
        ConfigKey(
            name: name, reload: .restart, isPattern: false, tableKeys: table.keys.map(\.name),
            read: { section, key, root throws(ConfigError) in
                if let inner = try section.section(key) { try table.read(inner, into: &root[keyPath: field]) }
            },
            changed: { $0[keyPath: field] == $1[keyPath: field] ? [] : [name] },
            adopt: { $0[keyPath: field] = $1[keyPath: field] })
    }

    /// A table per language (`[voice.es]`), each read by `table` into `make(language)` and then
    /// made the field's value by `finish`. (A key that is not a table is refused by
    /// `ConfigTable.read`, which knows the section's other keys.)
    static func languageTables<Draft, Value: Equatable & Sendable>(
        _ field: any WritableKeyPath<Root, [String: Value]> & Sendable, _ table: ConfigTable<Draft>,
        make: @escaping @Sendable (String) -> Draft, finish: @escaping @Sendable (Section, Draft) throws(ConfigError) -> Value
    ) -> ConfigKey {
        ConfigKey(
            name: "<lang>", reload: .restart, isPattern: true, tableKeys: table.keys.map(\.name),
            read: { section, language, root throws(ConfigError) in
                guard let inner = try section.section(language) else { return }
                guard Section.isLanguageCode(language) else {
                    throw section.error(
                        language, "is not a language code; name the table after a two-letter ISO 639-1 code, as in [\(section.name ?? "").es]")
                }
                var draft = make(language)
                try table.read(inner, into: &draft)
                root[keyPath: field][language] = try finish(inner, draft)
            },
            changed: { old, new in
                Set(old[keyPath: field].keys).union(new[keyPath: field].keys).sorted()
                    .filter { old[keyPath: field][$0] != new[keyPath: field][$0] }
            },
            adopt: { $0[keyPath: field] = $1[keyPath: field] })
    }

    /// A table per language whose value is read whole by `table`.
    static func languageTables<Value: Equatable & Sendable>(
        _ field: any WritableKeyPath<Root, [String: Value]> & Sendable, _ table: ConfigTable<Value>, make: @escaping @Sendable (String) -> Value
    ) -> ConfigKey {
        languageTables(field, table, make: make, finish: { _, value in value })
    }

    // MARK: The usual kinds of value

    static func int(_ name: String, _ field: any WritableKeyPath<Root, Int> & Sendable, in range: ClosedRange<Int>, _ reload: Reload<Int> = .restart) -> ConfigKey {
        key(name, field, reload) { section, key throws(ConfigError) in try section.int(key, in: range) }
    }

    static func int(_ name: String, _ field: any WritableKeyPath<Root, Int?> & Sendable, in range: ClosedRange<Int>) -> ConfigKey {
        key(name, field) { section, key throws(ConfigError) in try section.int(key, in: range).map { .some($0) } }
    }

    static func bool(_ name: String, _ field: any WritableKeyPath<Root, Bool> & Sendable, _ reload: Reload<Bool> = .restart) -> ConfigKey {
        key(name, field, reload) { section, key throws(ConfigError) in try section.bool(key) }
    }

    static func string(_ name: String, _ field: any WritableKeyPath<Root, String> & Sendable) -> ConfigKey {
        key(name, field) { section, key throws(ConfigError) in try section.string(key) }
    }

    static func string(_ name: String, _ field: any WritableKeyPath<Root, String?> & Sendable) -> ConfigKey {
        key(name, field) { section, key throws(ConfigError) in try section.string(key).map { .some($0) } }
    }

    /// A path: `~/` is the home folder, a relative path is taken from the config file's folder.
    static func path(_ name: String, _ field: any WritableKeyPath<Root, String> & Sendable) -> ConfigKey {
        key(name, field) { section, key throws(ConfigError) in try section.path(key) }
    }

    static func path(_ name: String, _ field: any WritableKeyPath<Root, String?> & Sendable) -> ConfigKey {
        key(name, field) { section, key throws(ConfigError) in try section.path(key).map { .some($0) } }
    }

    static func float(_ name: String, _ field: any WritableKeyPath<Root, Float> & Sendable, in range: ClosedRange<Float>) -> ConfigKey {
        key(name, field) { section, key throws(ConfigError) in try section.float(key, in: range) }
    }

    static func double(
        _ name: String, _ field: any WritableKeyPath<Root, Double> & Sendable, in range: ClosedRange<Double>, _ reload: Reload<Double> = .restart
    ) -> ConfigKey {
        key(name, field, reload) { section, key throws(ConfigError) in
            try section.double(key, in: range)
        }
    }

    /// A two-letter ISO 639-1 code.
    static func language(_ name: String, _ field: any WritableKeyPath<Root, String> & Sendable, _ reload: Reload<String> = .restart) -> ConfigKey {
        key(name, field, reload) { section, key throws(ConfigError) in try section.language(key) }
    }

    /// One of an enumeration's raw values; `use` says which, for the error.
    static func choice<Value: RawRepresentable & Equatable & Sendable>(
        _ name: String, _ field: any WritableKeyPath<Root, Value> & Sendable, use: String, _ reload: Reload<Value> = .restart
    ) -> ConfigKey where Value.RawValue == String {
        key(name, field, reload) { section, key throws(ConfigError) in
            guard let raw = try section.string(key) else { return nil }
            guard let value = Value(rawValue: raw) else { throw section.error(key, "is \(quoted(raw)); use \(use)") }
            return value
        }
    }

    static func choice<Value: RawRepresentable & Equatable & Sendable>(
        _ name: String, _ field: any WritableKeyPath<Root, Value?> & Sendable, use: String
    ) -> ConfigKey where Value.RawValue == String {
        key(name, field) { section, key throws(ConfigError) in
            guard let raw = try section.string(key) else { return nil }
            guard let value = Value(rawValue: raw) else { throw section.error(key, "is \(quoted(raw)); use \(use)") }
            return .some(value)
        }
    }
}

extension Reload {
    func keyReload<Root>(_ field: any WritableKeyPath<Root, Value> & Sendable) -> KeyReload<Root> {
        switch self {
        case .restart: return .restart
        case .atOnce: return .atOnce
        case .set(let target): return .set { change, root in change[keyPath: target] = root[keyPath: field] }
        }
    }
}

/// A table of the config file: its keys, and the checks across them once all are read.
public struct ConfigTable<Root>: Sendable {
    public let name: String
    public let keys: [ConfigKey<Root>]
    let check: @Sendable (Section, inout Root) throws(ConfigError) -> Void

    init(
        _ name: String, _ keys: [ConfigKey<Root>],
        check: @escaping @Sendable (Section, inout Root) throws(ConfigError) -> Void = { _, _ in }
    ) {
        self.name = name
        self.keys = keys
        self.check = check
    }

    /// Reads every key the section has into `root`; a key the table does not know is refused,
    /// naming the ones it does.
    func read(_ section: Section, into root: inout Root) throws(ConfigError) {
        let fixed = keys.filter { !$0.isPattern }
        let pattern = keys.first { $0.isPattern }
        if pattern == nil { try section.allowOnly(fixed.map(\.name)) }
        for key in fixed { try key.read(section, key.name, &root) }
        if let pattern {
            let names = Set(fixed.map(\.name))
            for key in section.table.keys.sorted() where !names.contains(key) {
                guard section.isTable(key) else {
                    let example = "[\(section.name ?? name).\(Section.isLanguageCode(key) ? key : "es")]"
                    throw section.error(
                        key, "must be \(fixed.map(\.name).joined(separator: ", ")) or a table named after a language, as in \(example) with "
                            + pattern.tableKeys.joined(separator: ", "))
                }
                try pattern.read(section, key, &root)
            }
        }
        try check(section, &root)
    }
}

/// What reading a config file again changes (`parley reload`, SIGHUP).
public struct ReloadPlan: Sendable, Equatable {
    /// The conversation settings to apply at once (nil: none changed).
    public var change: SettingsChange?
    /// Keys applied at once, as "section.key".
    public var applied: [String]
    /// Keys that changed but are read only at start-up, as "section.key" (a language's table as
    /// "section.xx"); "other" if a change has no key (not expected: every key is in `sections`).
    public var restartNeeded: [String]
}

extension ParleyConfig {
    /// What reading `new` over `old` (the file as last read) changes. Keys applied at once are
    /// compared with `old`, so a key the file left alone keeps its runtime value; keys read only at
    /// start-up are compared with `startup`, what the daemon runs on, so a change stays reported
    /// until the daemon restarts.
    public static func reloadPlan(from old: ParleyConfig, to new: ParleyConfig, startup: ParleyConfig? = nil) -> ReloadPlan {
        var change = SettingsChange()
        var plan = ReloadPlan(change: nil, applied: [], restartNeeded: [])
        var everything = startup ?? old
        for table in sections {
            for key in table.keys {
                key.adopt(&everything, new)
                switch key.reload {
                case .restart:
                    plan.restartNeeded += key.changed(startup ?? old, new).map { "\(table.name).\($0)" }
                case .set(let apply):
                    guard !key.changed(old, new).isEmpty else { continue }
                    apply(&change, new)
                    plan.applied.append("\(table.name).\(key.name)")
                case .atOnce:
                    plan.applied += key.changed(old, new).map { "\(table.name).\($0)" }
                }
            }
        }
        plan.change = change.isEmpty ? nil : change
        if everything != new { plan.restartNeeded.append("other") }
        return plan
    }
}
