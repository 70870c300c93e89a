import Foundation
import MoonJSON

/// What a node's successful run left, as the cache keeps it: its output
/// files (paths relative to the graph file's directory, with modes, blobs
/// named by content hash, symbolic links as links), its `$MOON_OUTPUT`
/// outputs and values, and for a depfile node the files its depfile listed
/// with their hashes (a restore requires them unchanged). JSON, so that an
/// entry is readable with `cat` and stable across moon versions:
/// `encoded` writes it, `EntryReader` reads it.
public struct CacheEntry: Sendable, Equatable {
    /// An entry larger than this, local or remote, is refused (a miss and a
    /// warning): it is read into memory whole.
    public static let maxSize = 256 << 20

    public struct File: Sendable, Equatable {
        public enum Kind: String, Sendable { case file, directory, symlink }
        public var path: String
        public var kind: Kind
        /// Permission bits (files and directories).
        public var mode: UInt32?
        /// A file's content hash (hex SHA-256) and size.
        public var hash: String?
        public var size: Int64?
        /// A symbolic link's target, as written.
        public var target: String?

        public init(path: String, kind: Kind, mode: UInt32? = nil, hash: String? = nil, size: Int64? = nil, target: String? = nil) {
            self.path = path
            self.kind = kind
            self.mode = mode
            self.hash = hash
            self.size = size
            self.target = target
        }
    }

    public struct Dependency: Sendable, Equatable {
        public var path: String
        public var hash: String

        public init(path: String, hash: String) {
            self.path = path
            self.hash = hash
        }
    }

    public var version = 1
    public var node: String
    /// The outputs' top paths: each is replaced as a whole on a restore.
    public var roots: [String]
    public var files: [File]
    /// `$MOON_OUTPUT` key=value outputs, in order.
    public var outputs: [[String]]
    public var values: [String]
    public var dependencies: [Dependency] = []
    /// The node's fingerprint in parts (`FingerprintParts.json`), so that
    /// `moon why` can say what differs from an entry it does not restore;
    /// nil in entries an older moon made. Never trusted for a restore.
    public var why: String?

    public init(node: String, roots: [String], files: [File], outputs: [(String, String)], values: [String],
                dependencies: [Dependency] = []) {
        self.node = node
        self.roots = roots
        self.files = files
        self.outputs = outputs.map { [$0.0, $0.1] }
        self.values = values
        self.dependencies = dependencies
    }

    /// The bytes of its files.
    public var bytes: Int64 { files.reduce(0) { $0 + ($1.size ?? 0) } }

    public var outputPairs: [(String, String)] {
        outputs.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// The entry as JSON: keys sorted, no spaces, a missing optional left
    /// out. Written by hand, as `EntryReader` reads it: every store writes
    /// one, and `JSONEncoder`'s containers cost about a tenth of a
    /// millisecond per entry, more than the store's renames.
    public func encoded() throws -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(160 + files.count * 140 + dependencies.count * 120 + (why?.utf8.count ?? 0))
        func key(_ name: StaticString, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            out.append(contentsOf: "\":".utf8)
        }
        func string(_ value: String) { JSONString.quote(value, into: &out) }
        func number<N: BinaryInteger>(_ value: N) { out.append(contentsOf: String(value).utf8) }
        func array<T>(_ items: [T], _ body: (T) -> Void) {
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                body(item)
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "{"))
        key("dependencies", first: true)
        array(dependencies) { dependency in
            out.append(UInt8(ascii: "{"))
            key("hash", first: true)
            string(dependency.hash)
            key("path")
            string(dependency.path)
            out.append(UInt8(ascii: "}"))
        }
        key("files")
        array(files) { file in
            out.append(UInt8(ascii: "{"))
            var first = true
            func field(_ name: StaticString) {
                key(name, first: first)
                first = false
            }
            if let hash = file.hash { field("hash"); string(hash) }
            field("kind")
            string(file.kind.rawValue)
            if let mode = file.mode { field("mode"); number(mode) }
            field("path")
            string(file.path)
            if let size = file.size { field("size"); number(size) }
            if let target = file.target { field("target"); string(target) }
            out.append(UInt8(ascii: "}"))
        }
        key("node")
        string(node)
        key("outputs")
        array(outputs) { pair in array(pair, string) }
        key("roots")
        array(roots, string)
        key("values")
        array(values, string)
        key("version")
        number(version)
        if let why {
            key("why")
            string(why)
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// The entry `data` holds, checked; `parts` false leaves `why` out
    /// (checked, not read: a restore never uses it).
    public static func decode(_ data: Data, parts: Bool = true) throws -> CacheEntry {
        let entry = try data.withUnsafeBytes { raw in try EntryReader.read(raw.bindMemory(to: UInt8.self), parts: parts) }
        try entry.validate()
        return entry
    }

    /// An entry (perhaps from a remote server) that would write outside the
    /// graph's directory, or through a link it restores, is refused. Paths
    /// are checked as bytes, as the kernel splits them.
    func validate() throws {
        guard version == 1 else { throw CacheError.invalidEntry("version \(version)") }
        var links = Set<String>()
        for file in files where file.kind == .symlink { links.insert(file.path) }
        for path in roots { try Self.check(path, links: links) }
        var paths = Set<String>()
        for file in files {
            try Self.check(file.path, links: links)
            paths.insert(file.path)
        }
        // A root is restored by renaming what was built for it: it must have been built.
        for root in roots where !paths.contains(root) { throw CacheError.invalidEntry("root '\(root)' without a file") }
        // Dependencies are only read (hashed), never written: a system
        // header's absolute path and a `dir:`'s `../include/x.h` are sound.
        for dependency in dependencies where dependency.path.isEmpty { throw CacheError.invalidEntry("dependency ''") }
        for file in files {
            switch file.kind {
            case .file:
                guard let hash = file.hash, BlobName.isValid(hash), (file.size ?? -1) >= 0 else { throw CacheError.invalidEntry("file '\(file.path)'") }
            case .symlink:
                guard let target = file.target else { throw CacheError.invalidEntry("link '\(file.path)'") }
                // A restored link is a door for whatever writes the output next (a node's `cp x out`).
                guard Self.staysInside(link: file.path, target: target) else {
                    throw CacheError.invalidEntry("link '\(file.path)' to '\(target)', outside the graph file's directory")
                }
            case .directory: break
            }
            guard roots.contains(where: { Self.isWithin(file.path, $0) }) else {
                throw CacheError.invalidEntry("path '\(file.path)' outside its roots")
            }
        }
    }

    /// A relative path of plain parts (no `.`, `..` or empty one), none of
    /// whose parents is a link the entry restores.
    private static func check(_ path: String, links: Set<String>) throws {
        guard isPlain(path) else { throw CacheError.invalidEntry("path '\(path)'") }
        guard !links.isEmpty else { return }
        var index = path.utf8.startIndex
        while let slash = path.utf8[index...].firstIndex(of: UInt8(ascii: "/")) {
            if links.contains(String(path[..<slash])) { throw CacheError.invalidEntry("path '\(path)' through a link") }
            index = path.utf8.index(after: slash)
        }
    }

    /// Whether `path` is parts between single slashes, none empty, `.` or `..`.
    static func isPlain(_ path: String) -> Bool {
        var text = path
        return text.withUTF8(plainParts)
    }

    /// Whether the bytes are parts between single slashes, none empty, `.` or `..`.
    private static func plainParts(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        var start = 0
        for i in 0...bytes.count where i == bytes.count || bytes[i] == UInt8(ascii: "/") {
            let length = i - start
            if length == 0 { return false }
            if length <= 2, bytes[start] == UInt8(ascii: "."), length == 1 || bytes[start + 1] == UInt8(ascii: ".") { return false }
            start = i + 1
        }
        return true
    }

    /// Whether a link at `link` (relative to the graph file's directory)
    /// with `target` names a path inside that directory, read as written:
    /// relative, and its `..` never climbing above the directory.
    static func staysInside(link: String, target: String) -> Bool {
        guard !target.isEmpty, !target.hasPrefix("/") else { return false }
        var depth = link.split(separator: "/", omittingEmptySubsequences: true).count - 1
        for part in target.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            depth += part == ".." ? -1 : 1
            if depth < 0 { return false }
        }
        return true
    }

    /// Whether `path` is `root` or under it.
    static func isWithin(_ path: String, _ root: String) -> Bool {
        let p = path.utf8, r = root.utf8
        guard p.starts(with: r) else { return false }
        let rest = p.dropFirst(r.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "/")
    }
}

/// Names of content-addressed blobs: lowercase hex SHA-256.
enum BlobName {
    static func isValid(_ hex: String) -> Bool {
        hex.utf8.count == 64 && hex.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}
