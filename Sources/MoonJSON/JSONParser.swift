/// moon's one reader of JSON it does not own as Codable (a recorded event
/// stream, a `for-each` over a need's output, a stored node's outputs):
/// RFC 8259 into `JSONValue`, object keys in the order written. Strict, so
/// hostile text is an error and never a trap: invalid UTF-8, a lone
/// surrogate, a raw control character, NaN or Infinity, a number beyond a
/// Double, a duplicate key, nesting deeper than `maximumDepth` and text
/// after the value are all refused with the place and what was expected.
public struct JSONParser {
    /// Deeper nesting is refused: no JSON moon reads nests past a few levels,
    /// and the parser recurses once per level.
    public static let maximumDepth = 512

    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// 1-based line and column (in bytes) of the offending byte, and its 0-based offset.
        public var line: Int
        public var column: Int
        public var offset: Int
        public var message: String
        public var description: String { "line \(line), column \(column): \(message)" }
    }

    /// The one value of `text`, with nothing but white space around it.
    public static func parse(_ text: String) throws(Error) -> JSONValue {
        var text = text
        return try text.withUTF8 { bytes in Result { () throws(Error) in try parse(bytes) } }.get()
    }

    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(Error) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.at == bytes.count else { throw parser.fail("expected the end of the text after the value") }
        return value
    }

    /// The members of the object at the start of `bytes` that come before
    /// the first member named `key`, or all of its members when none is.
    /// Nothing from that member on is read, so a record's small fields are
    /// read without its large ones, which its writer puts last; a text that
    /// is not an object, or is broken before that member, is an error.
    public static func members(_ bytes: UnsafeBufferPointer<UInt8>, before key: String) throws(Error) -> [(String, JSONValue)] {
        var parser = JSONParser(bytes)
        parser.skipSpace()
        guard parser.at < bytes.count, bytes[parser.at] == UInt8(ascii: "{") else { throw parser.fail("expected an object, found \(parser.found)") }
        return try parser.members(depth: 1, before: key)
    }

    /// Reads the one value of `bytes` with `body`, which takes it in order
    /// through the `read…` methods below into a type of its own, with no
    /// `JSONValue` tree between (a cache entry, read at every restore). The
    /// same lexer and strictness as `parse`; the text must end after it.
    public static func read<T>(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout JSONParser) throws -> T) throws -> T {
        var parser = JSONParser(bytes)
        parser.skipSpace()
        let result = try body(&parser)
        parser.skipSpace()
        guard parser.at == bytes.count else { throw parser.fail("expected the end of the text after the value") }
        return result
    }

    /// An object key as `readObject` gives it: the bytes of the text when
    /// it has no escape (no String made), else its decoded text.
    public struct Key {
        fileprivate var raw: UnsafeBufferPointer<UInt8>
        fileprivate var decoded: [UInt8]?

        fileprivate func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            if let decoded { return decoded.withUnsafeBufferPointer(body) }
            return body(raw)
        }

        public static func == (key: Key, name: StaticString) -> Bool {
            key.withBytes { bytes in
                guard bytes.count == name.utf8CodeUnitCount else { return false }
                let other = name.utf8Start
                for i in 0..<bytes.count where bytes[i] != other[i] { return false }
                return true
            }
        }

        fileprivate static func == (a: Key, b: Key) -> Bool {
            a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
        }
    }

    /// The object at the cursor, each member in turn: `body` gets its key
    /// and reads its value (or `skipValue`s it). A key twice is refused.
    public mutating func readObject(_ body: (inout JSONParser, Key) throws -> Void) throws {
        guard at < bytes.count, bytes[at] == UInt8(ascii: "{") else { throw fail("expected an object, found \(found)") }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        at += 1
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
            at += 1
            return
        }
        var keys: [Key] = []
        while true {
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("expected a key (a string), found \(found)") }
            let keyStart = at
            let key = try self.key()
            if keys.contains(where: { $0 == key }) {
                throw fail("duplicate key '\(key.withBytes { String(decoding: $0, as: UTF8.self) })'", at: keyStart)
            }
            keys.append(key)
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw fail("expected ':' after a key, found \(found)") }
            at += 1
            skipSpace()
            try body(&self, key)
            skipSpace()
            guard at < bytes.count else { throw fail("expected ',' or '}', found the end of the text") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
            guard bytes[at] == UInt8(ascii: "}") else { throw fail("expected ',' or '}', found \(found)") }
            at += 1
            return
        }
    }

    /// The array at the cursor: `body` reads each item in turn.
    public mutating func readArray(_ body: (inout JSONParser) throws -> Void) throws {
        guard at < bytes.count, bytes[at] == UInt8(ascii: "[") else { throw fail("expected an array, found \(found)") }
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        at += 1
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
            at += 1
            return
        }
        while true {
            skipSpace()
            try body(&self)
            skipSpace()
            guard at < bytes.count else { throw fail("expected ',' or ']', found the end of the text") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
            guard bytes[at] == UInt8(ascii: "]") else { throw fail("expected ',' or ']', found \(found)") }
            at += 1
            return
        }
    }

    /// The string at the cursor; `what` names it in the error for another value.
    public mutating func readString(_ what: String) throws -> String {
        guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("expected a string for \(what), found \(found)") }
        return try string()
    }

    /// The string or `null` at the cursor.
    public mutating func readOptionalString(_ what: String) throws -> String? {
        if at < bytes.count, bytes[at] == UInt8(ascii: "n") {
            _ = try word("null", .null)
            return nil
        }
        return try readString(what)
    }

    /// The integer (one that fits `Int`, no fraction or exponent) at the cursor.
    public mutating func readInteger(_ what: String) throws -> Int {
        let start = at
        guard at < bytes.count, bytes[at] == UInt8(ascii: "-") || Self.isDigit(bytes[at]),
              case .int(let n) = try number() else { throw fail("expected an integer for \(what), found \(found)", at: start) }
        return n
    }

    /// The integer or `null` at the cursor.
    public mutating func readOptionalInteger(_ what: String) throws -> Int? {
        if at < bytes.count, bytes[at] == UInt8(ascii: "n") {
            _ = try word("null", .null)
            return nil
        }
        return try readInteger(what)
    }

    /// Checks that a string or `null` is at the cursor and goes past it, the
    /// string unbuilt (a large field the caller has no use for).
    public mutating func skipOptionalString(_ what: String) throws {
        if at < bytes.count, bytes[at] == UInt8(ascii: "n") {
            _ = try word("null", .null)
            return
        }
        guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("expected a string for \(what), found \(found)") }
        try skipString()
    }

    /// Checks the value at the cursor and goes past it without keeping it;
    /// a string is checked without being built.
    public mutating func skipValue() throws {
        if at < bytes.count, bytes[at] == UInt8(ascii: "\"") {
            try skipString()
        } else {
            _ = try value(depth: depth)
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0
    /// The objects and arrays `readObject` and `readArray` are in.
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private func fail(_ message: String, at offset: Int? = nil) -> Error {
        let offset = min(offset ?? at, bytes.count)
        var line = 1, lineStart = 0
        for i in 0..<offset where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        return Error(line: line, column: offset - lineStart + 1, offset: offset, message: message)
    }

    /// What the byte at the cursor is, for messages.
    private var found: String {
        guard at < bytes.count else { return "the end of the text" }
        let byte = bytes[at]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    private mutating func skipSpace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    private mutating func value(depth: Int) throws(Error) -> JSONValue {
        guard at < bytes.count else { throw fail("expected a value, found the end of the text") }
        switch bytes[at] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try word("true", .bool(true))
        case UInt8(ascii: "f"): return try word("false", .bool(false))
        case UInt8(ascii: "n"): return try word("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("expected a value, found \(found)")
        }
    }

    private mutating func word(_ text: StaticString, _ value: JSONValue) throws(Error) -> JSONValue {
        let count = text.utf8CodeUnitCount
        guard at + count <= bytes.count, (0..<count).allSatisfy({ bytes[at + $0] == text.utf8Start[$0] }) else {
            throw fail("expected a value, found \(found)")
        }
        at += count
        return value
    }

    private mutating func object(depth: Int) throws(Error) -> JSONValue {
        .object(try members(depth: depth, before: nil))
    }

    /// The object at the cursor's members, up to the one named `stop` (see `members(_:before:)`).
    private mutating func members(depth: Int, before stop: String?) throws(Error) -> [(String, JSONValue)] {
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        at += 1
        var members: [(String, JSONValue)] = []
        var keys: Set<String>? = nil
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") {
            at += 1
            return members
        }
        while true {
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fail("expected a key (a string), found \(found)") }
            let keyStart = at
            let key = try string()
            if let stop, key == stop { return members }
            // A short object is searched; a long one keeps a set.
            if members.count < 16 {
                if members.contains(where: { $0.0 == key }) { throw fail("duplicate key '\(key)'", at: keyStart) }
            } else {
                if keys == nil { keys = Set(members.map(\.0)) }
                guard keys!.insert(key).inserted else { throw fail("duplicate key '\(key)'", at: keyStart) }
            }
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw fail("expected ':' after a key, found \(found)") }
            at += 1
            skipSpace()
            members.append((key, try value(depth: depth)))
            skipSpace()
            guard at < bytes.count else { throw fail("expected ',' or '}', found the end of the text") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
            guard bytes[at] == UInt8(ascii: "}") else { throw fail("expected ',' or '}', found \(found)") }
            at += 1
            return members
        }
    }

    private mutating func array(depth: Int) throws(Error) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        at += 1
        var items: [JSONValue] = []
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "]") {
            at += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value(depth: depth))
            skipSpace()
            guard at < bytes.count else { throw fail("expected ',' or ']', found the end of the text") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
            guard bytes[at] == UInt8(ascii: "]") else { throw fail("expected ',' or ']', found \(found)") }
            at += 1
            return .array(items)
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// An integer that fits `Int` is `.int`; any other number a finite `.double`.
    private mutating func number() throws(Error) -> JSONValue {
        let start = at
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard at < bytes.count, Self.isDigit(bytes[at]) else { throw fail("expected a digit, found \(found)") }
        if bytes[at] == UInt8(ascii: "0") {
            at += 1
            if at < bytes.count, Self.isDigit(bytes[at]) { throw fail("a number has no leading zero", at: start) }
        } else {
            while at < bytes.count, Self.isDigit(bytes[at]) { at += 1 }
        }
        var integral = true
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            integral = false
            at += 1
            guard at < bytes.count, Self.isDigit(bytes[at]) else { throw fail("expected a digit after '.', found \(found)") }
            while at < bytes.count, Self.isDigit(bytes[at]) { at += 1 }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            integral = false
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, Self.isDigit(bytes[at]) else { throw fail("expected a digit in the exponent, found \(found)") }
            while at < bytes.count, Self.isDigit(bytes[at]) { at += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        if integral, let n = Int(text) { return .int(n) }
        guard let d = Double(text), d.isFinite else { throw fail("number \(text.prefix(40)) is out of range", at: start) }
        return .double(d)
    }

    /// A string literal, its escapes resolved; the cursor is on its quote.
    /// One byte loop, as the other lexers: escapes, surrogate pairs and UTF-8
    /// checks share its cursor.
    private mutating func string() throws(Error) -> String {
        at += 1
        let start = at
        // The usual string has no escape: one validated slice.
        let ascii: Bool
        (at, ascii) = plainRun(from: at)
        var out: [UInt8] = []
        if at < bytes.count, bytes[at] == UInt8(ascii: "\"") {
            defer { at += 1 }
            let slice = UnsafeBufferPointer(rebasing: bytes[start..<at])
            if ascii { return String(decoding: slice, as: UTF8.self) }
            return try validated(slice, from: start)
        }
        out.reserveCapacity(at - start + 64)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<at]))
        while at < bytes.count {
            // The bytes up to the next quote, escape or control character, in one append.
            let run = at
            at = plainRun(from: at).end
            if at > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<at])) }
            guard at < bytes.count else { break }
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                return try validated(out, from: start)
            case UInt8(ascii: "\\"):
                let code = try escape()
                if code < 0x80 {
                    out.append(UInt8(code))
                } else {
                    out.append(contentsOf: UTF8.encode(Unicode.Scalar(code)!)!)
                }
            default:
                guard byte >= 0x20 else { throw fail("a control character in a string must be escaped (\\u00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16)))") }
                out.append(byte)
                at += 1
            }
        }
        throw fail("expected '\"' to end the string that starts at offset \(start - 1), found the end of the text")
    }

    /// A key at the cursor (on its quote): its bytes in the text when it
    /// has no escape, which is checked as `string` checks it.
    private mutating func key() throws(Error) -> Key {
        let start = at + 1
        let (scan, ascii) = plainRun(from: start)
        if scan < bytes.count, bytes[scan] == UInt8(ascii: "\""), ascii {
            at = scan + 1
            return Key(raw: UnsafeBufferPointer(rebasing: bytes[start..<scan]), decoded: nil)
        }
        return Key(raw: UnsafeBufferPointer(start: nil, count: 0), decoded: Array(try string().utf8))
    }

    /// Goes past the string at the cursor (on its quote) with the checks of
    /// `string`, without building it: escapes are checked, and each run
    /// between them is checked as UTF-8 when it is not ASCII (an escape is
    /// ASCII, so no character spans two runs).
    private mutating func skipString() throws(Error) {
        let quote = at
        at += 1
        while at < bytes.count {
            let run = at
            let ascii: Bool
            (at, ascii) = plainRun(from: at)
            if !ascii { _ = try validated(UnsafeBufferPointer(rebasing: bytes[run..<at]), from: quote + 1) }
            guard at < bytes.count else { break }
            switch bytes[at] {
            case UInt8(ascii: "\""):
                at += 1
                return
            case UInt8(ascii: "\\"):
                _ = try escape()
            default:
                throw fail("a control character in a string must be escaped (\\u00\(bytes[at] < 0x10 ? "0" : "")\(String(bytes[at], radix: 16)))")
            }
        }
        throw fail("expected '\"' to end the string that starts at offset \(quote), found the end of the text")
    }

    /// From `from`: the index of the first quote, backslash or control
    /// character (or the end), and whether every byte before it is ASCII.
    /// On the buffer's pointer: every string's bytes go through it.
    private func plainRun(from: Int) -> (end: Int, ascii: Bool) {
        let count = bytes.count
        guard from < count, let base = bytes.baseAddress else { return (from, true) }
        var i = from
        var high: UInt8 = 0
        while i < count {
            let byte = base[i]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            high |= byte
            i += 1
        }
        return (i, high < 0x80)
    }

    /// The code point of the escape at the cursor (on its backslash), a
    /// surrogate pair's as one.
    private mutating func escape() throws(Error) -> UInt32 {
        at += 1
        guard at < bytes.count else { throw fail("expected an escape after '\\', found the end of the text") }
        let escape = bytes[at]
        at += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return UInt32(escape)
        case UInt8(ascii: "n"): return 0x0A
        case UInt8(ascii: "t"): return 0x09
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "b"): return 0x08
        case UInt8(ascii: "f"): return 0x0C
        case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800...0xDBFF).contains(code) {
                guard at + 1 < bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                    throw fail("a high surrogate \\u\(String(code, radix: 16)) without its low surrogate")
                }
                at += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("a high surrogate without its low surrogate") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(code) {
                throw fail("a lone low surrogate \\u\(String(code, radix: 16))")
            }
            return code
        default:
            at -= 1
            throw fail("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found \(found)")
        }
    }

    private mutating func hex4() throws(Error) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard at < bytes.count else { throw fail("expected 4 hex digits after \\u, found the end of the text") }
            let byte = bytes[at]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw fail("expected 4 hex digits after \\u, found \(found)")
            }
            code = code << 4 | UInt32(digit)
            at += 1
        }
        return code
    }

    /// `bytes` as a String, refusing invalid UTF-8 (never replaced by U+FFFD).
    private func validated(_ slice: some Collection<UInt8>, from start: Int) throws(Error) -> String {
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw fail("a string that is not valid UTF-8", at: start - 1)
        }
        return string
    }
}

extension JSONValue {
    /// The value of `key` in an object (the first, as keys are unique); nil
    /// for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.0 == key })?.1
    }

    public var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// An array of strings; nil when any item is not one.
    public var stringArray: [String]? {
        guard case .array(let items) = self else { return nil }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard case .string(let s) = item else { return nil }
            out.append(s)
        }
        return out
    }
}
