import MoonJSON

/// Reads the JSON `CacheEntry.encoded` writes: the one reader of entries.
/// An entry is read at every restore, and a depfile node's lists every
/// header with its hash, so the entry is read field by field straight from
/// its bytes (`JSONParser.read`), with no `JSONValue` tree and no
/// `Decodable` containers. Keys may come in any order and spacing; a key it
/// does not know is checked and skipped, a key twice, a missing or a
/// mistyped one is an error that names it. `parts` false skips the
/// fingerprint's parts (`why`, only `moon why` reads them) unbuilt.
enum EntryReader {
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, parts: Bool = true) throws -> CacheEntry {
        do {
            return try JSONParser.read(bytes) { parser in try entry(&parser, parts: parts) }
        } catch let error as JSONParser.Error {
            throw CacheError.invalidEntry("not an entry (\(error))")
        }
    }

    private static func entry(_ parser: inout JSONParser, parts: Bool) throws -> CacheEntry {
        var version: Int?, node: String?, roots: [String]?, values: [String]?, why: String?
        var files: [CacheEntry.File]?, outputs: [[String]]?, dependencies: [CacheEntry.Dependency]?
        try parser.readObject { parser, key in
            if key == "dependencies" {
                var list: [CacheEntry.Dependency] = []
                try parser.readArray { parser in list.append(try dependency(&parser)) }
                dependencies = list
            } else if key == "files" {
                var list: [CacheEntry.File] = []
                try parser.readArray { parser in list.append(try file(&parser)) }
                files = list
            } else if key == "node" {
                node = try parser.readString("'node'")
            } else if key == "outputs" {
                var list: [[String]] = []
                try parser.readArray { parser in list.append(try strings(&parser, "'outputs'")) }
                outputs = list
            } else if key == "roots" {
                roots = try strings(&parser, "'roots'")
            } else if key == "values" {
                values = try strings(&parser, "'values'")
            } else if key == "version" {
                version = try parser.readInteger("'version'")
            } else if key == "why" && parts {
                why = try parser.readOptionalString("'why'")
            } else if key == "why" {
                // Still a string or null: what is not is no entry.
                try parser.skipOptionalString("'why'")
            } else {
                try parser.skipValue()
            }
        }
        guard let version else { throw missing("version") }
        guard let node else { throw missing("node") }
        guard let roots else { throw missing("roots") }
        guard let files else { throw missing("files") }
        guard let outputs else { throw missing("outputs") }
        guard let values else { throw missing("values") }
        guard let dependencies else { throw missing("dependencies") }
        var entry = CacheEntry(node: node, roots: roots, files: files, outputs: [], values: values, dependencies: dependencies)
        entry.version = version
        entry.outputs = outputs
        entry.why = why
        return entry
    }

    private static func strings(_ parser: inout JSONParser, _ what: String) throws -> [String] {
        var list: [String] = []
        try parser.readArray { parser in list.append(try parser.readString(what)) }
        return list
    }

    private static func dependency(_ parser: inout JSONParser) throws -> CacheEntry.Dependency {
        var path: String?, hash: String?
        try parser.readObject { parser, key in
            if key == "path" {
                path = try parser.readString("'dependencies.path'")
            } else if key == "hash" {
                hash = try parser.readString("'dependencies.hash'")
            } else {
                try parser.skipValue()
            }
        }
        guard let path else { throw missing("dependencies.path") }
        guard let hash else { throw missing("dependencies.hash") }
        return CacheEntry.Dependency(path: path, hash: hash)
    }

    private static func file(_ parser: inout JSONParser) throws -> CacheEntry.File {
        var path: String?, kind: CacheEntry.File.Kind?, mode: UInt32?, hash: String?, size: Int64?, target: String?
        try parser.readObject { parser, key in
            if key == "path" {
                path = try parser.readString("'files.path'")
            } else if key == "kind" {
                guard let known = CacheEntry.File.Kind(rawValue: try parser.readString("'files.kind'")) else { throw missing("files.kind") }
                kind = known
            } else if key == "mode" {
                if let bits = try parser.readOptionalInteger("'files.mode'") {
                    guard let exact = UInt32(exactly: bits) else { throw missing("files.mode") }
                    mode = exact
                }
            } else if key == "hash" {
                hash = try parser.readOptionalString("'files.hash'")
            } else if key == "size" {
                size = try parser.readOptionalInteger("'files.size'").map(Int64.init)
            } else if key == "target" {
                target = try parser.readOptionalString("'files.target'")
            } else {
                try parser.skipValue()
            }
        }
        guard let path else { throw missing("files.path") }
        guard let kind else { throw missing("files.kind") }
        return CacheEntry.File(path: path, kind: kind, mode: mode, hash: hash, size: size, target: target)
    }

    private static func missing(_ key: String) -> CacheError { CacheError.invalidEntry("'\(key)' missing or of the wrong type") }
}
