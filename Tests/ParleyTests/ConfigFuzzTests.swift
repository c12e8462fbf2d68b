import Foundation
import ParleyTesting
import Testing
@testable import ParleyConfig

/// The config reader never crashes: every file either loads or gives a ConfigError. toml++
/// aborts the process on some inputs (`[é]`); a crash here would take the whole test run down.
@Suite("Config reader under fuzzing")
struct ConfigFuzzTests {
    /// A seeded generator (SplitMix64), so a failure is reproducible.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let shipped: String = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/parley.toml").path
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? "[conversation]\nmode = \"auto\"\n"
    }()

    static let pieces: [String] = [
        "[", "]", "[[", "]]", "=", "\"", "'", "\"\"\"", "#", "\n", " ", "\t", ".", ",", "{", "}", "é", "ü", "日本語", "\u{0}",
        "\u{FEFF}", "🙂", "\\", "\\u00e9", "1e999", "-0", "nan", "inf", "true", "0x1F", "1979-05-27T07:32:00Z", "[é]", "[[ü]]",
        "[ 日本]", "é = 1", "[a.é]", "[\"é\"]", "key = ", "= 3", "[recognizer.é]", "\r\n", "[=]", "[\n", "{ é = 1 }", "{,", "x = { a = 1, é = 2 }",
    ]

    @Test(.blocksThreads) func thousandsOfMutatedAndRandomFilesLoadOrFailWithOneLine() {
        var random = Seeded(state: 20_261_123)
        var errors = 0
        for round in 0..<4_000 {
            var text: String
            if round % 4 == 3 {
                text = (0..<Int.random(in: 1...30, using: &random)).map { _ in Self.pieces.randomElement(using: &random) ?? "" }.joined()
            } else {
                var characters = Array(Self.shipped)
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let at = Int.random(in: 0...characters.count, using: &random)
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0: characters.insert(contentsOf: Self.pieces.randomElement(using: &random) ?? "", at: at)
                    case 1 where at < characters.count: characters.removeSubrange(at..<min(characters.count, at + Int.random(in: 1...20, using: &random)))
                    default:
                        // A new line at a random place, starting with a random piece (headers above all).
                        characters.insert(contentsOf: "\n" + (Self.pieces.randomElement(using: &random) ?? "") + "x]\n", at: at)
                    }
                }
                text = String(characters)
            }
            do {
                _ = try ParleyConfig.parse(text, source: "fuzz.toml", environment: ["HOME": "/tmp"])
            } catch {
                errors += 1
                #expect(!error.description.isEmpty && !error.description.contains("\n"), "round \(round): \(error.description.debugDescription)")
            }
        }
        #expect(errors > 1_000, "most mutations are invalid and said so")
    }

    @Test func aTableNameBeginningWithANonASCIICharacterIsASyntaxError() {
        for text in [
            "[é]\n", "[[é]]\n", "[ü]\nx = 1\n", "[日本語]\n", "  [ é]\n", "[conversation]\nmode = \"auto\"\n[é]\n", "\u{FEFF}[é]\n", "[\n",
            "[=]\n", "x = { é = 1 }\n", "x = { a = 1, é = 2 }\n", "[translator]\nbackends = [\n}x]\n\"apertium\"]\n",
            "x = [}]\n", "x = [1, }]\n", "x = [ # a comment\n  }]\n", "x = [,]\n", "x = [1,,2]\n", "x = [\u{2028}]\n", "x = [1,\u{85}2]\n",
            "x = [\"\"\"a\"\"\"\", }]\n", "x = [\"\"\"a\"\"\"\", 1]\n[é]\n",
        ] {
            let error = #expect(throws: ConfigError.self) { try ParleyConfig.parse(text, source: "p.toml", environment: ["HOME": "/tmp"]) }
            let message = error?.description ?? ""
            #expect(message.contains("p.toml: line") && message.contains("fix the TOML syntax"), "\(message)")
        }
        // An array with a trailing comma, a comment or a blank line is valid TOML, and not refused as such.
        for text in [
            "[translator]\nbackends = [\"apertium\",]\n", "[translator]\nbackends = [ # first\n\n  \"apertium\" ,\n]\n",
        ] {
            #expect(throws: Never.self) { try ParleyConfig.parse(text, source: "p.toml", environment: ["HOME": "/tmp"]) }
        }
        // A triple-quoted string ending in a quote of its own, then strings holding ",}" and ",,": valid TOML,
        // so the error is about the backends named, not the syntax.
        for text in ["[translator]\nbackends = [\"apertium\", \"\"\"a\"\"\"\", \",}\"]\n", "[translator]\nbackends = ['''a'''', ',,']\n"] {
            let error = #expect(throws: ConfigError.self) { try ParleyConfig.parse(text, source: "p.toml", environment: ["HOME": "/tmp"]) }
            #expect(error?.description.contains("backends names") == true, "\(error?.description ?? "")")
        }
        // Quoted, it is a valid (if unknown) table: the usual error.
        #expect(throws: ConfigError.self) { try ParleyConfig.parse("[\"é\"]\n", source: "p.toml", environment: ["HOME": "/tmp"]) }
    }
}
