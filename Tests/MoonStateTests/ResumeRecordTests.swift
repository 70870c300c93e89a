import Foundation
import Testing
@testable import MoonState

@Suite struct ResumeRecordTests {
    /// The hand-written JSON is what `load` (JSONDecoder) reads back, for
    /// names, outputs and values that need escaping too.
    @Test func theRecordReadsBackAsItWasSaved() throws {
        let tree = try TempTree()
        try FileManager.default.createDirectory(atPath: tree.path(".moon"), withIntermediateDirectories: true)
        let record = ResumeRecord(nodes: [
            "plain": .init(succeeded: true, definition: "00ff"),
            "quote\"back\\slash/é": .init(succeeded: true, outputs: [("url", "x\n1\t\u{1}"), ("k", "")], values: ["a", "\u{7F}\u{85}\u{2028}"]),
            "failed": .init(succeeded: false),
        ], shared: "abc1")
        try record.save(graphDirectory: tree.root, graphKey: "moon.yaml")
        #expect(Self.loaded(tree) == record)
        let decoded = try JSONDecoder().decode(ResumeRecord.self, from: Data(record.json))
        #expect(decoded == record)
    }

    /// A run that ends as the last one did leaves the file alone.
    @Test func anUnchangedRecordIsNotRewritten() throws {
        let tree = try TempTree()
        try FileManager.default.createDirectory(atPath: tree.path(".moon"), withIntermediateDirectories: true)
        let record = ResumeRecord(nodes: ["a": .init(succeeded: true, values: ["v"])])
        try record.save(graphDirectory: tree.root, graphKey: "moon.yaml")
        let path = tree.path(".moon/resume/moon.yaml.json")
        var before = stat()
        #expect(stat(path, &before) == 0)
        try record.save(graphDirectory: tree.root, graphKey: "moon.yaml")
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_ino == before.st_ino, "an equal record is not replaced")
        var changed = record
        changed.nodes["a"]?.succeeded = false
        try changed.save(graphDirectory: tree.root, graphKey: "moon.yaml")
        #expect(Self.loaded(tree) == changed)
    }

    static func loaded(_ tree: TempTree) -> ResumeRecord? {
        guard case .record(let record) = ResumeRecord.load(graphDirectory: tree.root, graphKey: "moon.yaml") else { return nil }
        return record
    }
}
