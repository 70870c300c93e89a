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

    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0

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
        var ascii = true
        // The usual string has no escape: one validated slice.
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            if byte >= 0x80 { ascii = false }
            at += 1
        }
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
            while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\"), bytes[at] >= 0x20 { at += 1 }
            if at > run { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<at])) }
            guard at < bytes.count else { break }
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                return try validated(out, from: start)
            case UInt8(ascii: "\\"):
                at += 1
                guard at < bytes.count else { throw fail("expected an escape after '\\', found the end of the text") }
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
                    out.append(contentsOf: String(Character(Unicode.Scalar(code)!)).utf8)
                default:
                    at -= 1
                    throw fail("expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found \(found)")
                }
            default:
                guard byte >= 0x20 else { throw fail("a control character in a string must be escaped (\\u00\(byte < 0x10 ? "0" : "")\(String(byte, radix: 16)))") }
                out.append(byte)
                at += 1
            }
        }
        throw fail("expected '\"' to end the string that starts at offset \(start - 1), found the end of the text")
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
