import Foundation
import ParleyCore
import Testing
@testable import ParleyConfig
import ParleyEndpoint
import ParleyProtocol

/// The config's tables (`ParleyConfig.sections`) are the one declaration of its keys: the file
/// that documents them (config/parley.toml, whose comments are also the man page) must name the
/// same keys, with their defaults.
@Suite("Config tables")
struct ConfigTableTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/parley.toml")

    /// Every key the tables declare, as "section.key", a language's table as "section.<lang>.key".
    static var declared: Set<String> {
        var names: Set<String> = []
        for table in ParleyConfig.sections {
            for key in table.keys {
                if key.tableKeys.isEmpty {
                    names.insert("\(table.name).\(key.name)")
                } else {
                    for inner in key.tableKeys { names.insert("\(table.name).\(key.name).\(inner)") }
                }
            }
        }
        return names
    }

    /// Every `key = value` line of the documented file (`# key = value`: left out by default),
    /// under the table it follows, with its value; a language's table named "<lang>".
    static func documented() throws -> [(name: String, value: String, commented: Bool)] {
        let text = try String(contentsOf: shipped, encoding: .utf8)
        let table = try Regex(#"^(#\s*)?\[([A-Za-z0-9_.-]+)\]"#)
        let key = try Regex(#"^(#\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$"#)
        var current = ""
        var entries: [(name: String, value: String, commented: Bool)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = line.trimmingCharacters(in: .whitespaces)
            if let match = try table.firstMatch(in: line), let name = match.output[2].substring {
                current = name.split(separator: ".").map { $0.count == 2 && $0.allSatisfy(\.isLowercase) ? "<lang>" : String($0) }
                    .joined(separator: ".")
            } else if let match = try key.firstMatch(in: line), let name = match.output[2].substring, let rest = match.output[3].substring {
                entries.append(("\(current).\(name)", String(rest), match.output[1].substring != nil))
            }
        }
        return entries
    }

    @Test func theShippedFileDocumentsEveryDeclaredKeyAndNoOther() throws {
        let documented = Set(try Self.documented().map(\.name))
        #expect(documented.count > 60, "the file was read: \(documented.count) keys")
        let undocumented = Self.declared.subtracting(documented).sorted()
        let unknown = documented.subtracting(Self.declared).sorted()
        #expect(undocumented.isEmpty, "declared in ParleyConfig.sections, not in config/parley.toml: \(undocumented)")
        #expect(unknown.isEmpty, "in config/parley.toml, not declared in ParleyConfig.sections: \(unknown)")
    }

    /// "Every key is shown with its default": each value the file gives a key of a fixed table,
    /// read alone, leaves the config as it was.
    @Test func theValueShownBesideEachKeyIsItsDefault() throws {
        let environment = ["HOME": "/home/someone"]
        let defaults = ParleyConfig(environment: environment)
        // The development tree's engines, which `make install` rewrites to the installed folder.
        let rewritten: Set = ["transcriber.engines", "translator.engines"]
        var checked = 0
        for entry in try Self.documented() where !entry.name.contains("<lang>") && !rewritten.contains(entry.name) {
            let parts = entry.name.split(separator: ".")
            guard parts.count == 2 else { continue }  // a backend's table, left out by default
            let value = entry.value.split(separator: "#").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            let text = "[\(parts[0])]\n\(parts[1]) = \(value)"
            let config = try ParleyConfig.parse(text, source: "parley.toml", environment: environment)
            if entry.commented {
                continue  // an example, left out by default: it must parse
            }
            #expect(config == defaults, "config/parley.toml shows \(entry.name) = \(value), which is not its default")
            checked += 1
        }
        #expect(checked > 50)
    }

    /// A key of each reload class is reported under its own name, and a change of every
    /// declared key is reported (none falls through to "other").
    @Test func theReloadPlanNamesTheKeyThatChanged() throws {
        let old = ParleyConfig(environment: ["HOME": "/home/x"])
        var new = old
        new.endpoint.floorRiseMs = 5_000
        new.transcriber.beamSize = 2
        new.maxWordsPerFrame = 20
        new.voices["it"] = VoiceConfig()
        new.echoTailMs = 200
        let plan = ParleyConfig.reloadPlan(from: old, to: new)
        #expect(plan.applied == ["conversation.echo_tail_ms"])
        #expect(plan.change?.echoTailMs == 200)
        #expect(plan.restartNeeded == ["endpoint.floor_rise_ms", "recognizer.maxwpf", "transcriber.beam_size", "voice.it"])
    }
}
