import Foundation
import MoonDocument
import MoonGraph
@testable import MoonState

/// A fresh temporary directory with helpers to write, touch and remove files;
/// removed when the test lets go of it.
final class TempTree {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("moon-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func path(_ name: String) -> String { root + "/" + name }

    func write(_ name: String, _ text: String) throws {
        let full = path(name)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    }

    /// Sets the file's mtime to `secondsAgo` in the past, so its stat changes without its content.
    func touch(_ name: String, secondsAgo: TimeInterval = 0) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-secondsAgo)], ofItemAtPath: path(name))
    }

    func remove(_ name: String) throws { try FileManager.default.removeItem(atPath: path(name)) }

    /// Loads a graph file written at `moon.yaml` in the tree.
    func graph(_ yaml: String) throws -> Graph {
        try write("moon.yaml", yaml)
        let result = GraphLoader.load(SourceFile(path: path("moon.yaml"), bytes: Array(yaml.utf8)))
        guard let graph = result.graph else { throw GraphError(diagnostics: result.diagnostics.map(\.message)) }
        return graph
    }

    struct GraphError: Error { var diagnostics: [String] }
}

extension StateStore {
    /// Has this process's connection change a row (of a table of its own),
    /// so that `record` writes the history to the store itself, as a run
    /// that wrote node states does, not to the journal.
    func changeHere() throws {
        try db.writeWithoutTransaction { try $0.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS changed (x); INSERT INTO changed VALUES (1)") }
    }
}
