import MoonJSON

/// Reads the JSON `CacheEntry.encoded` writes: the one reader of entries.
/// An entry is read at every restore, and a depfile node's lists every
/// header with its hash, so the entry is taken from `JSONParser`'s values
/// field by field rather than through `Decodable`, whose containers cost
/// more than the rest of a restore's reading. Keys may come in any order
/// and spacing; a key it does not know is ignored, a missing or mistyped
/// one is an error that names it.
enum EntryReader {
    static func read(_ bytes: UnsafeBufferPointer<UInt8>) throws -> CacheEntry {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw CacheError.invalidEntry("not JSON (\(error))")
        }
        var entry = CacheEntry(node: try string(value, "node"), roots: try strings(value, "roots"), files: [],
                               outputs: [], values: try strings(value, "values"))
        entry.version = try integer(value, "version")
        guard case .array(let outputs)? = value["outputs"] else { throw missing("outputs") }
        entry.outputs = try outputs.map { item in
            guard let pair = item.stringArray else { throw missing("outputs") }
            return pair
        }
        guard case .array(let files)? = value["files"] else { throw missing("files") }
        entry.files = try files.map(file)
        guard case .array(let dependencies)? = value["dependencies"] else { throw missing("dependencies") }
        entry.dependencies = try dependencies.map { try CacheEntry.Dependency(path: string($0, "path"), hash: string($0, "hash")) }
        entry.why = try optionalString(value, "why")
        return entry
    }

    private static func file(_ value: JSONValue) throws -> CacheEntry.File {
        guard let kind = CacheEntry.File.Kind(rawValue: try string(value, "kind")) else { throw missing("files.kind") }
        var file = CacheEntry.File(path: try string(value, "path"), kind: kind)
        if let mode = try optionalInteger(value, "mode") {
            guard let bits = UInt32(exactly: mode) else { throw missing("files.mode") }
            file.mode = bits
        }
        file.hash = try optionalString(value, "hash")
        file.size = try optionalInteger(value, "size").map(Int64.init)
        file.target = try optionalString(value, "target")
        return file
    }

    private static func missing(_ key: String) -> CacheError { CacheError.invalidEntry("'\(key)' missing or of the wrong type") }

    private static func string(_ value: JSONValue, _ key: String) throws -> String {
        guard let s = value[key]?.string else { throw missing(key) }
        return s
    }

    private static func strings(_ value: JSONValue, _ key: String) throws -> [String] {
        guard let list = value[key]?.stringArray else { throw missing(key) }
        return list
    }

    private static func integer(_ value: JSONValue, _ key: String) throws -> Int {
        guard case .int(let n)? = value[key] else { throw missing(key) }
        return n
    }

    private static func optionalString(_ value: JSONValue, _ key: String) throws -> String? {
        switch value[key] {
        case nil, .null?: return nil
        case .string(let s)?: return s
        default: throw missing(key)
        }
    }

    private static func optionalInteger(_ value: JSONValue, _ key: String) throws -> Int? {
        switch value[key] {
        case nil, .null?: return nil
        case .int(let n)?: return n
        default: throw missing(key)
        }
    }
}
