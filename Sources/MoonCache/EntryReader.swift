/// Reads the JSON that `CacheEntry.encoded` writes, a few times faster than
/// `JSONDecoder` (an entry is read at every restore, and a depfile node's
/// lists every header with its hash). It accepts a plain subset of JSON: no
/// fractions or exponents, ASCII strings, nesting at most 8 deep; for
/// anything else (or any type it does not expect) it says nil and the
/// caller decodes with `JSONDecoder`, so what is accepted never changes.
struct EntryReader {
    private indirect enum Value {
        case string(String)
        case int(Int64)
        case array([Value])
        case object([String: Value])
        case bool(Bool)
        case null
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The entry in `bytes`, or nil when the fast path does not apply.
    static func read(_ bytes: [UInt8]) -> CacheEntry? {
        let value: Value? = bytes.withUnsafeBufferPointer { buffer in
            var reader = EntryReader(buffer)
            guard let value = reader.value(depth: 0) else { return nil }
            reader.skipSpace()
            return reader.at == buffer.count ? value : nil
        }
        return value.flatMap(entry)
    }

    private static func entry(_ value: Value) -> CacheEntry? {
        guard case .object(let o) = value, case .int(let version)? = o["version"], let node = string(o["node"]),
              let roots = strings(o["roots"]), let values = strings(o["values"]),
              case .array(let outputList)? = o["outputs"], case .array(let fileList)? = o["files"] else { return nil }
        var outputs: [(String, String)] = []
        for item in outputList {
            guard let pair = strings(item), pair.count == 2 else { return nil }
            outputs.append((pair[0], pair[1]))
        }
        var files: [CacheEntry.File] = []
        for item in fileList {
            guard case .object(let f) = item, let path = string(f["path"]), let kindName = string(f["kind"]),
                  let kind = CacheEntry.File.Kind(rawValue: kindName),
                  let mode = optionalInt(f["mode"]), let size = optionalInt(f["size"]),
                  let hash = optionalString(f["hash"]), let target = optionalString(f["target"]),
                  mode.map({ $0 >= 0 && $0 <= Int64(UInt32.max) }) ?? true else { return nil }
            files.append(CacheEntry.File(path: path, kind: kind, mode: mode.map { UInt32($0) }, hash: hash, size: size, target: target))
        }
        var dependencies: [CacheEntry.Dependency] = []
        guard case .array(let items)? = o["dependencies"] else { return nil }
        for item in items {
            guard case .object(let d) = item, let path = string(d["path"]), let hash = string(d["hash"]) else { return nil }
            dependencies.append(CacheEntry.Dependency(path: path, hash: hash))
        }
        var entry = CacheEntry(node: node, roots: roots, files: files, outputs: outputs, values: values, dependencies: dependencies)
        guard let number = Int(exactly: version) else { return nil }
        entry.version = number
        return entry
    }

    private static func string(_ value: Value?) -> String? {
        if case .string(let s)? = value { return s }
        return nil
    }

    private static func strings(_ value: Value?) -> [String]? {
        guard case .array(let items)? = value else { return nil }
        var result: [String] = []
        for item in items {
            guard case .string(let s) = item else { return nil }
            result.append(s)
        }
        return result
    }

    /// .some(nil) for a missing key or null; nil for another type.
    private static func optionalString(_ value: Value?) -> String?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .string(let s)?: return .some(s)
        default: return nil
        }
    }

    private static func optionalInt(_ value: Value?) -> Int64?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .int(let n)?: return .some(n)
        default: return nil
        }
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    private mutating func value(depth: Int) -> Value? {
        guard depth < 8 else { return nil }
        skipSpace()
        guard at < bytes.count else { return nil }
        switch bytes[at] {
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "["):
            at += 1
            var items: [Value] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            while true {
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipSpace()
                guard at < bytes.count else { return nil }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                guard bytes[at] == UInt8(ascii: "]") else { return nil }
                at += 1
                return .array(items)
            }
        case UInt8(ascii: "{"):
            at += 1
            var members: [String: Value] = [:]
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
            while true {
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipSpace()
                guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
                at += 1
                // A repeated key: JSONDecoder's choice is not this reader's to guess.
                guard let item = value(depth: depth + 1), members.updateValue(item, forKey: key) == nil else { return nil }
                skipSpace()
                guard at < bytes.count else { return nil }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                guard bytes[at] == UInt8(ascii: "}") else { return nil }
                at += 1
                return .object(members)
            }
        case UInt8(ascii: "t"): return word("true", .bool(true))
        case UInt8(ascii: "f"): return word("false", .bool(false))
        case UInt8(ascii: "n"): return word("null", .null)
        default: return integer()
        }
    }

    private mutating func word(_ text: StaticString, _ value: Value) -> Value? {
        let count = text.utf8CodeUnitCount
        guard at + count <= bytes.count else { return nil }
        for i in 0..<count where bytes[at + i] != text.utf8Start[i] { return nil }
        at += count
        return value
    }

    private mutating func integer() -> Value? {
        var negative = false
        if bytes[at] == UInt8(ascii: "-") { negative = true; at += 1 }
        let start = at
        var n: Int64 = 0
        while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 {
            let (times, o1) = n.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(Int64(bytes[at] - 0x30))
            guard !o1, !o2 else { return nil }
            n = plus
            at += 1
        }
        // No digits, a leading zero, or a fraction or exponent: not this reader's.
        guard at > start, !(bytes[start] == 0x30 && at - start > 1) else { return nil }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") || bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") { return nil }
        return .int(negative ? -n : n)
    }

    /// A string of printable ASCII with the usual escapes (`\u` only below 0x80).
    private mutating func string() -> String? {
        at += 1
        // The usual string has no escape: one slice.
        var end = at
        while end < bytes.count, bytes[end] >= 0x20, bytes[end] < 0x80, bytes[end] != UInt8(ascii: "\""),
              bytes[end] != UInt8(ascii: "\\") { end += 1 }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            defer { at = end + 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[at..<end]), as: UTF8.self)
        }
        var out = Array(bytes[at..<end])
        at = end
        while at < bytes.count {
            let byte = bytes[at]
            at += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard at < bytes.count else { return nil }
                let escape = bytes[at]
                at += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard at + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[at..<(at + 4)], as: UTF8.self), radix: 16),
                          code < 0x80 else { return nil }
                    out.append(UInt8(code))
                    at += 4
                default: return nil
                }
            default:
                guard byte >= 0x20, byte < 0x80 else { return nil }
                out.append(byte)
            }
        }
        return nil
    }
}
