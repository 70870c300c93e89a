import Foundation
import Testing
@testable import MoonGraph

@Suite struct GraphSchemaTests {
    static let schemaPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schema/moon-graph.schema.json").path

    /// The shipped file is the generated text. `MOON_RECORD=1 swift test --filter GraphSchemaTests` rewrites it.
    @Test func shippedSchemaIsTheGeneratedOne() throws {
        let generated = GraphSchema.text
        if ProcessInfo.processInfo.environment["MOON_RECORD"] == "1" {
            try FileManager.default.createDirectory(atPath: (Self.schemaPath as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try generated.write(toFile: Self.schemaPath, atomically: true, encoding: .utf8)
        }
        let shipped = try? String(contentsOfFile: Self.schemaPath, encoding: .utf8)
        #expect(shipped == generated,
                "schema/moon-graph.schema.json is out of date; re-record it with: MOON_RECORD=1 swift test --filter GraphSchemaTests")
    }

    @Test func schemaIsValidJSONAndDescribesEveryKeyAndBuiltin() throws {
        let object = try JSONSerialization.jsonObject(with: Data(GraphSchema.text.utf8)) as? [String: Any]
        let schema = try #require(object)
        #expect(schema["$schema"] as? String == "https://json-schema.org/draft/2020-12/schema")
        #expect(schema["required"] as? [String] == ["version", "nodes"])
        let defs = try #require(schema["$defs"] as? [String: Any])
        for builtin in BuiltinCatalog.all { #expect(defs["with-\(builtin.name)"] != nil, "\(builtin.name)") }
        let node = try #require(defs["node"] as? [String: Any])
        let nodeKeys = (node["properties"] as? [String: Any])?.keys.sorted()
        #expect(nodeKeys == GraphKeys.node.map(\.name).sorted())
        #expect(GraphSchema.untypedKeys == [], "every key of GraphKeys has a type in GraphSchema")
    }

    @Test func generationIsDeterministic() {
        #expect(GraphSchema.text == GraphSchema.text)
    }
}
