import Foundation
import Testing

/// The shipped JSON Schema of graph files accepts every example, checked by a
/// real validator (Python's jsonschema, with PyYAML reading the YAML), so an
/// editor using the schema never flags a file moon accepts.
@Suite struct GraphSchemaFileTests {
    static let script = """
        import json, sys, yaml, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema)
        bad = 0
        for path in sys.argv[2:]:
            for error in validator.iter_errors(yaml.safe_load(open(path))):
                print(f"{path}: {error.json_path}: {error.message}")
                bad += 1
        sys.exit(1 if bad else 0)
        """

    static var validatorAvailable: Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import yaml, jsonschema"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    @Test(.enabled(if: validatorAvailable, "needs python3 with jsonschema and PyYAML (make test-deps)"))
    func everyExampleValidatesAgainstTheSchema() throws {
        let examples = Moon.root.appendingPathComponent("examples")
        let files = try FileManager.default.contentsOfDirectory(atPath: examples.path)
            .filter { $0.hasSuffix(".yaml") }.sorted().map { examples.appendingPathComponent($0).path }
        #expect(files.count >= 4)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, Moon.root.appendingPathComponent("schema/moon-graph.schema.json").path] + files
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
    }
}
