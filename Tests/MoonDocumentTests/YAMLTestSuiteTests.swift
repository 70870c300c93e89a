import Foundation
import Testing
import MoonDocument

/// Runs every case of the YAML test suite (Tests/Fixtures/yaml-test-suite, a
/// snapshot kept in the repository with its MIT licence) through `YAMLLoader`: nothing crashes or hangs,
/// invalid YAML is rejected, valid YAML is accepted, and the loaded value
/// (plain scalars resolved by the core schema) equals the suite's JSON.
///
/// moon's loader is stricter than YAML by design: a graph file holds exactly
/// one document. So a valid case with several documents must be rejected with
/// the "second document" message, and one with none with the "empty" message.
@Suite struct YAMLTestSuiteTests {
    static let suiteDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // MoonDocumentTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // repository root
        .appendingPathComponent("Tests/Fixtures/yaml-test-suite")
        .standardizedFileURL

    /// Valid cases that libyaml accepts but whose value differs from the
    /// suite's JSON for a reason of YAML 1.1 (libyaml) against YAML 1.2 or of
    /// moon's deliberate choices, each with that reason. Kept short and explicit.
    static let valueSkips: [String: String] = [
        // libyaml reads `?` directly before text in a flow collection as the
        // explicit-key indicator (YAML 1.1); 1.2 makes `?foo` a plain scalar.
        "652Z": "libyaml: `?foo` in flow is an explicit key",
        "HM87-01": "libyaml: `[?x]` in flow is an explicit key",
        // libyaml drops a trailing line of spaces in a block scalar when the
        // stream ends without a final line break.
        "JEF9-02": "libyaml: keep-chomped block scalar at end of stream without newline",
        "L24T-01": "libyaml: trailing spaces line in a literal at end of stream without newline",
        // libyaml uses YAML 1.1 anchor characters: `&an:chor` is the anchor `an`.
        "Y2GN": "libyaml: `:` is not allowed in anchor names",
    ]

    /// Valid cases that libyaml accepts and moon rejects by design (besides
    /// several/zero documents), each with the reason.
    static let rejectionSkips: [String: String] = [
        // `{ &a [a, b]: ..., *a : ... }` uses the same node as two keys: valid
        // syntax, but a duplicate key, which moon always rejects.
        "X38W": "duplicate key by design (the alias is the same node as the first key)",
    ]

    struct Case {
        let id: String
        let directory: URL
        var isError: Bool { FileManager.default.fileExists(atPath: directory.appendingPathComponent("error").path) }
        var json: Data? { try? Data(contentsOf: directory.appendingPathComponent("in.json")) }
        var yaml: [UInt8] { (try? Data(contentsOf: directory.appendingPathComponent("in.yaml"))).map { Array($0) } ?? [] }
    }

    static func cases() -> [Case] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: suiteDirectory.path)) ?? []
        return names.sorted().compactMap { name in
            let directory = suiteDirectory.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("in.yaml").path) else { return nil }
            return Case(id: name, directory: directory)
        }
    }

    /// id -> "valid-rejected" | "error-accepted".
    static func divergences() -> [String: String] {
        let url = suiteDirectory.appendingPathComponent("libyaml-divergences.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [:] }
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("id\t") {
            let fields = line.split(separator: "\t")
            if fields.count >= 2 { result[String(fields[0])] = String(fields[1]) }
        }
        return result
    }

    // Over 60 lines: one walk over the suite that tallies every case's
    // outcome against the recorded divergences, then reports them together.
    @Test func everyCase() throws {
        let cases = Self.cases()
        try #require(cases.count >= 400, "yaml-test-suite not found at \(Self.suiteDirectory.path)")
        let divergences = Self.divergences()
        var tally: [String: Int] = [:]
        let clock = ContinuousClock()

        for testCase in cases {
            let source = SourceFile(path: "\(testCase.id)/in.yaml", bytes: testCase.yaml)
            var loaded: YAMLNode?
            var errors: [Diagnostic] = []
            let elapsed = clock.measure {
                do throws(Diagnostics) { loaded = try YAMLLoader.load(source) } catch { errors = error.items }
            }
            #expect(elapsed < .seconds(10), "\(testCase.id) took \(elapsed)")
            for error in errors {
                // Every diagnostic must render without trouble and point inside the file.
                _ = DiagnosticRenderer().render(error, source: source)
                if let span = error.span {
                    #expect(span.start.offset >= 0 && span.start.offset <= testCase.yaml.count, "\(testCase.id)")
                }
            }
            let messages = errors.map(\.message)
            let multiDocument = messages.contains("a graph file holds one YAML document; found a second one here")
            let empty = messages.contains("the file is empty; a graph file starts with `version: 1`")

            if let divergence = divergences[testCase.id] {
                // libyaml disagrees with the suite here; moon follows libyaml.
                if divergence == "valid-rejected" {
                    #expect(loaded == nil, "\(testCase.id): libyaml rejects this valid case; so should moon")
                }
                tally["divergent (\(divergence)), moon \(loaded == nil ? "rejects" : "accepts")", default: 0] += 1
                continue
            }
            if testCase.isError {
                #expect(loaded == nil, "\(testCase.id): invalid YAML was accepted")
                tally[loaded == nil ? "error cases rejected" : "error cases FAILED", default: 0] += 1
                continue
            }
            guard let root = loaded else {
                if multiDocument || empty {
                    tally["valid, rejected by design (not one document)", default: 0] += 1
                } else if let reason = Self.rejectionSkips[testCase.id] {
                    _ = reason
                    tally["valid, rejected by design (skip list)", default: 0] += 1
                } else {
                    Issue.record("\(testCase.id): valid YAML was rejected: \(messages)")
                    tally["valid cases FAILED (rejected)", default: 0] += 1
                }
                continue
            }
            guard let jsonData = testCase.json, !jsonData.isEmpty else {
                tally["valid, accepted (no JSON to compare)", default: 0] += 1
                continue
            }
            guard let json = try? JSONSerialization.jsonObject(with: jsonData, options: [.fragmentsAllowed]) else {
                Issue.record("\(testCase.id): in.json holds several values but the loader accepted one document")
                continue
            }
            if let difference = Self.difference(root, json, path: "$") {
                if Self.valueSkips[testCase.id] != nil {
                    tally["valid, value differs (skip list)", default: 0] += 1
                } else {
                    Issue.record("\(testCase.id): \(difference)")
                    tally["valid cases FAILED (value)", default: 0] += 1
                }
            } else {
                tally["valid, accepted, value equals JSON", default: 0] += 1
            }
        }

        let report = tally.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }.joined(separator: "\n")
        print("yaml-test-suite: \(cases.count) cases\n\(report)")
    }

    /// nil when `node` equals the JSON value, else where and how they differ.
    static func difference(_ node: YAMLNode, _ json: Any, path: String) -> String? {
        switch node.kind {
        case .scalar(let text, _, _):
            let value = node.resolvedScalar ?? .string(text)
            switch (value, json) {
            case (.null, is NSNull):
                return nil
            case (.string(let s), let j as String):
                return s == j ? nil : "\(path): \(s.debugDescription) != \(j.debugDescription)"
            case (.bool(let b), let n as NSNumber) where isJSONBool(n):
                return b == n.boolValue ? nil : "\(path): \(b) != \(n)"
            case (.int(let i), let n as NSNumber) where !isJSONBool(n):
                return Double(i) == n.doubleValue ? nil : "\(path): \(i) != \(n)"
            case (.float(let f), let n as NSNumber) where !isJSONBool(n):
                let d = n.doubleValue
                return f == d || abs(f - d) <= 1e-12 * max(abs(f), abs(d)) ? nil : "\(path): \(f) != \(d)"
            default:
                return "\(path): YAML \(value) != JSON \(json)"
            }
        case .sequence(let items):
            guard let array = json as? [Any] else { return "\(path): a list, but JSON has \(json)" }
            guard array.count == items.count else { return "\(path): \(items.count) items, JSON has \(array.count)" }
            for (i, (item, element)) in zip(items, array).enumerated() {
                if let d = difference(item, element, path: "\(path)[\(i)]") { return d }
            }
            return nil
        case .mapping(let pairs):
            guard let object = json as? [String: Any] else { return "\(path): a mapping, but JSON has \(json)" }
            guard object.count == pairs.count else { return "\(path): \(pairs.count) keys, JSON has \(object.count)" }
            for pair in pairs {
                guard let key = pair.key.scalar else { return "\(path): a key that is a collection" }
                // JSON writes a null key as "" or "null" depending on the suite's tool.
                guard let value = object[key] ?? (pair.key.isNull ? object["null"] ?? object[""] : nil) else {
                    return "\(path): key \(key.debugDescription) missing from JSON"
                }
                if let d = difference(pair.value, value, path: "\(path).\(key)") { return d }
            }
            return nil
        }
    }

    /// Foundation gives JSON true/false as a boolean NSNumber subclass (`__NSCFBoolean`).
    static func isJSONBool(_ n: NSNumber) -> Bool {
        String(describing: type(of: n)).contains("Boolean")
    }
}
