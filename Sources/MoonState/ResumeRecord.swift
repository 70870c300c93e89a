import Foundation

/// How each node of a graph's last run ended, with the outputs and values
/// of those that succeeded: what `moon run --resume` needs to rerun only
/// the rest. One JSON file per graph, `.moon/resume/<graph file name>.json`,
/// replaced whole (temporary file and rename) at the end of every run.
public struct ResumeRecord: Codable, Sendable, Equatable {
    public struct Node: Codable, Sendable, Equatable {
        /// Whether it succeeded (ran, up to date, restored or resumed).
        public var succeeded: Bool
        public var outputs: [[String]]
        public var values: [String]

        public init(succeeded: Bool, outputs: [(String, String)] = [], values: [String] = []) {
            self.succeeded = succeeded
            self.outputs = outputs.map { [$0.0, $0.1] }
            self.values = values
        }

        public var outputPairs: [(String, String)] {
            outputs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        }
    }

    public var nodes: [String: Node]

    public init(nodes: [String: Node]) {
        self.nodes = nodes
    }

    static func path(graphDirectory: String, graphKey: String) -> String {
        let base = graphDirectory == "." ? "" : graphDirectory + "/"
        return base + ".moon/resume/" + graphKey + ".json"
    }

    /// The record of the last run of the graph at `graphPath`; nil when there is none or it cannot be read.
    public static func load(graphDirectory: String, graphKey: String) -> ResumeRecord? {
        guard let data = FileManager.default.contents(atPath: path(graphDirectory: graphDirectory, graphKey: graphKey)) else { return nil }
        return try? JSONDecoder().decode(ResumeRecord.self, from: data)
    }

    /// Replaces the record (only where `.moon/` exists: a run without a store records nothing).
    public func save(graphDirectory: String, graphKey: String) throws {
        let final = Self.path(graphDirectory: graphDirectory, graphKey: graphKey)
        let directory = (final as NSString).deletingLastPathComponent
        guard FileManager.default.fileExists(atPath: (directory as NSString).deletingLastPathComponent) else { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let temp = final + ".\(getpid()).tmp"
        try encoder.encode(self).write(to: URL(fileURLWithPath: temp))
        guard rename(temp, final) == 0 else {
            unlink(temp)
            throw CocoaError(.fileWriteUnknown)
        }
    }
}
