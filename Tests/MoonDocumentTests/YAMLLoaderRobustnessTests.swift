import Foundation
import Testing
import MoonDocument

/// Whatever the bytes, loading returns a tree or diagnostics: no crash, trap
/// or hang, and every diagnostic renders. Inputs are the YAML test suite's
/// files cut short and mutated with a fixed seed, so a failure reproduces.
/// `MOON_FUZZ_ITERATIONS` raises the number of mutations for a longer run.
@Suite struct YAMLLoaderRobustnessTests {
    /// xorshift64*: small, seeded, the same on every platform.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2685821657736338717
        }
    }

    static let interesting: [[UInt8]] = [
        [0x00], [0xFF], [0xC3], [0xE2, 0x80, 0xA8], [0xEF, 0xBB, 0xBF], [0x0D], [0x0A], [0x09],
        Array("&a ".utf8), Array("*a".utf8), Array("<<: ".utf8), Array("[".utf8), Array("{".utf8),
        Array("? ".utf8), Array("- ".utf8), Array("---\n".utf8), Array("...\n".utf8), Array("!!".utf8),
        Array("|".utf8), Array(">-".utf8), Array("\"\\x".utf8), Array("%YAML 1.1\n".utf8), Array("#".utf8),
    ]

    func check(_ bytes: [UInt8], _ label: String) {
        let source = SourceFile(path: "fuzz.yaml", bytes: bytes)
        do {
            _ = try YAMLLoader.load(source, limits: YAMLLoader.Limits(maxDepth: 64, maxNodes: 100_000))
        } catch {
            #expect(!error.items.isEmpty, "\(label)")
            _ = DiagnosticRenderer(color: true).render(error.items, source: source)
            for item in error.items {
                if let span = item.span {
                    #expect(span.start.line >= 1 && span.start.column >= 1, "\(label)")
                    #expect(span.start.offset >= 0 && span.start.offset <= bytes.count, "\(label)")
                }
            }
        }
    }

    // Without the YAML test suite's files the test shows as skipped, not as passed.
    @Test(.enabled(if: !YAMLTestSuiteTests.cases().isEmpty, "needs the YAML test suite's cases"))
    func mutatedSuiteInputs() {
        let cases = YAMLTestSuiteTests.cases()
        let iterations = Int(ProcessInfo.processInfo.environment["MOON_FUZZ_ITERATIONS"] ?? "") ?? 3_000
        var random = Generator(state: 0x9E37_79B9_7F4A_7C15)
        for iteration in 0..<iterations {
            var bytes = cases[Int(random.next() % UInt64(cases.count))].yaml
            for _ in 0..<(1 + Int(random.next() % 4)) {
                let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count + 1))
                switch random.next() % 4 {
                case 0 where !bytes.isEmpty && position < bytes.count:
                    bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1:
                    bytes.insert(contentsOf: Self.interesting[Int(random.next() % UInt64(Self.interesting.count))], at: position)
                case 2:
                    bytes.removeSubrange(position..<min(bytes.count, position + 1 + Int(random.next() % 8)))
                default:
                    bytes = Array(bytes[..<position])
                }
            }
            check(bytes, "iteration \(iteration)")
        }
    }

    @Test func everyPrefixOfAGraph() {
        let text = Array("""
            version: 1
            x-base: &base {queue: net, env: {A: "é"}}
            nodes:
              a: {<<: *base, run: [echo, "1"]}
              b:
                needs: [a]
                run: |
                  echo 2
            """.utf8)
        for end in 0...text.count { check(Array(text[..<end]), "prefix \(end)") }
    }
}
