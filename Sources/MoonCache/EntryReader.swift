/// Reads the JSON that `CacheEntry.encoded` writes without `JSONDecoder`'s
/// cost (an entry is read at every restore, and a depfile node's lists
/// every header with its hash): one pass straight into the entry's
/// fields, no tree of values and no dictionaries. It accepts a plain subset
/// of JSON: the entry's own keys (each once), no fractions or exponents,
/// ASCII strings; for anything else it says nil and the caller decodes with
/// `JSONDecoder`, so what is accepted never changes.
struct EntryReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The entry in `bytes`, or nil when the fast path does not apply.
    static func read(_ bytes: [UInt8]) -> CacheEntry? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = EntryReader(buffer)
            guard let entry = reader.entry() else { return nil }
            reader.skipSpace()
            return reader.at == buffer.count ? entry : nil
        }
    }

    private mutating func entry() -> CacheEntry? {
        var version: Int?, node: String?, roots: [String]?, values: [String]?
        var outputs: [(String, String)]?, files: [CacheEntry.File]?, dependencies: [CacheEntry.Dependency]?
        let read = object { reader, key in
            switch key {
            case "version":
                guard version == nil, let n = reader.integer(), let number = Int(exactly: n) else { return false }
                version = number
            case "node":
                guard node == nil, let s = reader.string() else { return false }
                node = s
            case "roots":
                guard roots == nil, let list = reader.strings() else { return false }
                roots = list
            case "values":
                guard values == nil, let list = reader.strings() else { return false }
                values = list
            case "outputs":
                guard outputs == nil, let list = reader.array({ reader -> (String, String)? in
                    guard let pair = reader.strings(), pair.count == 2 else { return nil }
                    return (pair[0], pair[1])
                }) else { return false }
                outputs = list
            case "files":
                guard files == nil, let list = reader.array({ $0.file() }) else { return false }
                files = list
            case "dependencies":
                guard dependencies == nil, let list = reader.array({ $0.dependency() }) else { return false }
                dependencies = list
            default:
                return false
            }
            return true
        }
        guard read, let version, let node, let roots, let values, let outputs, let files, let dependencies else { return nil }
        var entry = CacheEntry(node: node, roots: roots, files: files, outputs: outputs, values: values, dependencies: dependencies)
        entry.version = version
        return entry
    }

    private mutating func file() -> CacheEntry.File? {
        var path: String?, kind: CacheEntry.File.Kind?
        var mode: Int64??, hash: String??, size: Int64??, target: String??
        let read = object { reader, key in
            switch key {
            case "path":
                guard path == nil, let s = reader.string() else { return false }
                path = s
            case "kind":
                guard kind == nil, let s = reader.string(), let k = CacheEntry.File.Kind(rawValue: s) else { return false }
                kind = k
            case "mode":
                guard mode == nil, let n = reader.optional({ $0.integer() }), n.map({ $0 >= 0 && $0 <= Int64(UInt32.max) }) ?? true else { return false }
                mode = .some(n)
            case "hash":
                guard hash == nil, let s = reader.optional({ $0.string() }) else { return false }
                hash = .some(s)
            case "size":
                guard size == nil, let n = reader.optional({ $0.integer() }) else { return false }
                size = .some(n)
            case "target":
                guard target == nil, let s = reader.optional({ $0.string() }) else { return false }
                target = .some(s)
            default:
                return false
            }
            return true
        }
        guard read, let path, let kind else { return nil }
        return CacheEntry.File(path: path, kind: kind, mode: (mode ?? nil).map { UInt32($0) }, hash: hash ?? nil,
                               size: size ?? nil, target: target ?? nil)
    }

    private mutating func dependency() -> CacheEntry.Dependency? {
        var path: String?, hash: String?
        let read = object { reader, key in
            switch key {
            case "path":
                guard path == nil, let s = reader.string() else { return false }
                path = s
            case "hash":
                guard hash == nil, let s = reader.string() else { return false }
                hash = s
            default:
                return false
            }
            return true
        }
        guard read, let path, let hash else { return nil }
        return CacheEntry.Dependency(path: path, hash: hash)
    }

    /// An object, each member's value read by `member` (false: not this reader's).
    private mutating func object(_ member: (inout EntryReader, String) -> Bool) -> Bool {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return false }
        skipSpace()
        if take(UInt8(ascii: "}")) { return true }
        while true {
            skipSpace()
            guard let key = string() else { return false }
            skipSpace()
            guard take(UInt8(ascii: ":")) else { return false }
            skipSpace()
            guard member(&self, key) else { return false }
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "}"))
        }
    }

    /// An array, each item read by `item`.
    private mutating func array<T>(_ item: (inout EntryReader) -> T?) -> [T]? {
        skipSpace()
        guard take(UInt8(ascii: "[")) else { return nil }
        var items: [T] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return items }
        while true {
            skipSpace()
            guard let value = item(&self) else { return nil }
            items.append(value)
            skipSpace()
            if take(UInt8(ascii: ",")) { continue }
            return take(UInt8(ascii: "]")) ? items : nil
        }
    }

    private mutating func strings() -> [String]? {
        array { $0.string() }
    }

    /// `null` as .some(nil); a value as .some(value); nil for anything else.
    private mutating func optional<T>(_ value: (inout EntryReader) -> T?) -> T?? {
        skipSpace()
        if word("null") { return .some(nil) }
        return value(&self).map { .some($0) }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    private mutating func word(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard at + count <= bytes.count else { return false }
        for i in 0..<count where bytes[at + i] != text.utf8Start[i] { return false }
        at += count
        return true
    }

    private mutating func integer() -> Int64? {
        guard at < bytes.count else { return nil }
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
        return negative ? -n : n
    }

    /// A string of printable ASCII with the usual escapes (`\u` only below 0x80).
    private mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
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
