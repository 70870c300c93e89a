import Foundation
import Glibc
import MoonJSON

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
        /// Its command and environment in that run (`definitionStamp`):
        /// a node that changed since is not resumed. Nil in a record of an
        /// older moon, which resumes nothing.
        public var definition: String?

        public init(succeeded: Bool, outputs: [(String, String)] = [], values: [String] = [], definition: String? = nil) {
            self.succeeded = succeeded
            self.outputs = outputs.map { [$0.0, $0.1] }
            self.values = values
            self.definition = definition
        }

        public var outputPairs: [(String, String)] {
            outputs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        }
    }

    public var nodes: [String: Node]
    /// What every node's environment shared in that run
    /// (`sharedDefinitionStamp`): when it changed, nothing is resumed.
    public var shared: String?

    public init(nodes: [String: Node], shared: String? = nil) {
        self.nodes = nodes
        self.shared = shared
    }

    public static func path(graphDirectory: String, graphKey: String) -> String {
        let base = graphDirectory == "." ? "" : graphDirectory + "/"
        return base + ".moon/resume/" + graphKey + ".json"
    }

    /// What `load` found.
    public enum Loaded {
        case record(ResumeRecord)
        /// No run of this graph was recorded.
        case none
        /// A record that cannot be read or decoded, at this path.
        case unreadable(String)
    }

    /// The record of the last run of the graph.
    public static func load(graphDirectory: String, graphKey: String) -> Loaded {
        let path = path(graphDirectory: graphDirectory, graphKey: graphKey)
        guard let data = FileManager.default.contents(atPath: path) else {
            return access(path, F_OK) == 0 ? .unreadable(path) : .none
        }
        guard let record = try? JSONDecoder().decode(ResumeRecord.self, from: data) else { return .unreadable(path) }
        return .record(record)
    }

    /// Replaces the record (only where `.moon/` exists: a run without a store
    /// records nothing). A record equal to the file's bytes is left as it is:
    /// a run with nothing to do writes nothing.
    public func save(graphDirectory: String, graphKey: String) throws {
        let final = Self.path(graphDirectory: graphDirectory, graphKey: graphKey)
        let directory = (final as NSString).deletingLastPathComponent
        // Through the system calls, not FileManager, whose first use costs every run's end more than the work.
        guard access((directory as NSString).deletingLastPathComponent, F_OK) == 0 else { return }
        let bytes = json
        if Self.holds(final, bytes) { return }
        guard mkdir(directory, 0o777) == 0 || errno == EEXIST else { throw CocoaError(.fileWriteUnknown) }
        let temp = final + ".\(getpid()).tmp"
        // Not synced: the rename makes it whole or absent, and a record a
        // power loss takes only means `--resume` reruns more (an unreadable
        // one reads as none).
        guard Self.write(bytes, to: temp), rename(temp, final) == 0 else {
            unlink(temp)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// Whether the regular file `path` holds exactly `bytes` (a link is not followed).
    private static func holds(_ path: String, _ bytes: [UInt8]) -> Bool {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) == bytes.count else { return false }
        var read = [UInt8](repeating: 0, count: bytes.count + 1)
        var count = 0
        while count < read.count {
            let n = read.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            count += n
        }
        // memcmp: the generic comparison goes element by element, and a large graph's record is large.
        guard count == bytes.count else { return false }
        return count == 0 || read.withUnsafeBytes { a in bytes.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, count) == 0 } }
    }

    /// Writes `bytes` to a new file `path`; false when it cannot.
    private static func write(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        var offset = 0
        let written = bytes.withUnsafeBytes { raw -> Bool in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return false }
                offset += n
            }
            return true
        }
        return close(fd) == 0 && written
    }

    /// The record as JSON, keys sorted (what `load` decodes). Written by
    /// hand: every run saves it, and `JSONEncoder` makes the Swift runtime
    /// look up a conformance for each type it meets, at every start.
    var json: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + nodes.count * 64)
        Self.append(#"{"nodes":{"#, to: &out)
        for (i, name) in nodes.keys.sorted().enumerated() {
            let node = nodes[name]!
            if i > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.quote(name, into: &out)
            Self.append(#":{"#, to: &out)
            if let definition = node.definition {
                Self.append(#""definition":"#, to: &out)
                JSONString.quote(definition, into: &out)
                out.append(UInt8(ascii: ","))
            }
            Self.append(#""outputs":["#, to: &out)
            for (k, pair) in node.outputs.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                Self.append(pair, to: &out)
            }
            Self.append(#"],"succeeded":"#, to: &out)
            Self.append(node.succeeded ? "true" : "false", to: &out)
            Self.append(#","values":"#, to: &out)
            Self.append(node.values, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
        if let shared {
            Self.append(#","shared":"#, to: &out)
            JSONString.quote(shared, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A literal's bytes, copied whole (the generic append of a `String`'s
    /// UTF-8 view goes byte by byte).
    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private static func append(_ strings: [String], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (k, string) in strings.enumerated() {
            if k > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.quote(string, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}
