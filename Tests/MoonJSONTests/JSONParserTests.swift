import Testing
@testable import MoonJSON

@Suite struct JSONParserTests {
    @Test func valuesKeepTheirTypesAndObjectsTheirKeyOrder() throws {
        let value = try JSONParser.parse(#" {"z": 1, "a": [true, false, null], "m": {"y": "s", "b": -2.5e1}, "e": ""} "#)
        guard case .object(let members) = value else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == ["z", "a", "m", "e"])
        #expect(value["z"] == .int(1))
        #expect(value["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["m"]?["b"] == .double(-25))
        #expect(value["m"]?["y"]?.string == "s")
        #expect(value["missing"] == nil)
        #expect(try JSONParser.parse("[]") == .array([]))
        #expect(try JSONParser.parse("{}") == .object([]))
        #expect(try JSONParser.parse("-0") == .int(0))
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int.max))
        #expect(try JSONParser.parse("9223372036854775808") == .double(9223372036854775808))
    }

    @Test func escapesAndUnicodeAreRead() throws {
        #expect(try JSONParser.parse(#""a\"b\\c\/d\n\t\r\b\f\u0041\u00e9\ud83d\ude00""#) == .string("a\"b\\c/d\n\t\r\u{08}\u{0C}Aé😀"))
        #expect(try JSONParser.parse("\"é😀 raw\"") == .string("é😀 raw"))
        #expect(try JSONParser.parse(#"["x","y"]"#).stringArray == ["x", "y"])
        #expect(try JSONParser.parse(#"["x",1]"#).stringArray == nil)
    }

    /// An object's members before a key are read without anything from that
    /// key on, which may be broken; before it, the rules are the parser's.
    @Test func membersBeforeAKeyLeaveTheRestUnread() throws {
        func members(_ text: String) throws -> [String] {
            var text = text
            return try text.withUTF8 { bytes in try JSONParser.members(bytes, before: "big").map(\.0) }
        }
        #expect(try members(#" {"a": 1, "b": {"c": [2]}, "big": "\x torn"#) == ["a", "b"])
        #expect(try members(#"{"a": 1, "z": 2}"#) == ["a", "z"])
        #expect(try members("{}") == [])
        #expect(throws: JSONParser.Error.self) { try members(#"{"a": 1, "a": 2, "big": 0}"#) }
        #expect(throws: JSONParser.Error.self) { try members(#"{"a": 1 "big": 0}"#) }
        #expect(throws: JSONParser.Error.self) { try members(#"[{"big": 0}]"#) }
        #expect(throws: JSONParser.Error.self) { try members(#"{"a": 1"#) }
    }

    /// What `JSONString` writes, the parser reads back as it was.
    @Test func whatMoonWritesReadsBack() throws {
        let strings = ["plain", "quote\"back\\slash/", "\u{1}\u{7F}\u{85}\u{2028}\u{2029}", "é😀", ""]
        #expect(try JSONParser.parse(JSONString.array(strings)).stringArray == strings)
    }

    /// Hostile text is an error that says where and what was expected; never a trap.
    @Test(arguments: [
        ("", 1, 1, "expected a value, found the end of the text"),
        ("{\"a\":1", 1, 7, "expected ',' or '}', found the end of the text"),
        ("{\"a\":1}x", 1, 8, "expected the end of the text after the value"),
        ("{\"a\":1,\n\"a\":2}", 2, 1, "duplicate key 'a'"),
        ("[NaN]", 1, 2, "expected a value, found 'N'"),
        ("[Infinity]", 1, 2, "expected a value, found 'I'"),
        ("-Infinity", 1, 2, "expected a digit, found 'I'"),
        ("1e400", 1, 1, "number 1e400 is out of range"),
        ("[01]", 1, 2, "a number has no leading zero"),
        ("[1.]", 1, 4, "expected a digit after '.', found ']'"),
        ("[+1]", 1, 2, "expected a value, found '+'"),
        ("\"a\u{1}b\"", 1, 3, "a control character in a string must be escaped (\\u0001)"),
        (#""\ud800""#, 1, 8, "a high surrogate \\ud800 without its low surrogate"),
        (#""\udc00x""#, 1, 8, "a lone low surrogate \\udc00"),
        (#""\x""#, 1, 3, #"expected an escape (\" \\ \/ \b \f \n \r \t \uXXXX), found 'x'"#),
        (#""\u12g4""#, 1, 6, "expected 4 hex digits after \\u, found 'g'"),
        ("{1:2}", 1, 2, "expected a key (a string), found '1'"),
        ("[1 2]", 1, 4, "expected ',' or ']', found '2'"),
        ("tru", 1, 1, "expected a value, found 't'"),
    ])
    func hostileTextIsRefused(text: String, line: Int, column: Int, message: String) {
        #expect(throws: JSONParser.Error(line: line, column: column, offset: Self.offset(text, line, column), message: message)) {
            try JSONParser.parse(text)
        }
    }

    /// The reader that takes values in order (`JSONParser.read`) refuses
    /// what `parse` refuses, with the same place and message, whether it
    /// skips a value or reads it, at the top or inside an object.
    @Test(arguments: [
        "", "{\"a\":1", "{\"a\":1}x", "{\"a\":1,\n\"a\":2}", "[NaN]", "1e400", "[01]", "[1.]", "\"a\u{1}b\"",
        #""\ud800""#, #""\udc00x""#, #""\x""#, #""\u12g4""#, #""ok \u00e9 \ud83d\ude00 \n""#, "{1:2}", "[1 2]", "tru",
        #"{"a":[1,{"b":"c"}],"d":null}"#, "\"unterminated", #""é""#,
    ])
    func theOrderedReaderIsAsStrictAsParse(text: String) {
        func outcome(_ body: () throws -> Void) -> String {
            do { try body(); return "ok" } catch { return "\(error)" }
        }
        let parsed = outcome { _ = try JSONParser.parse(text) }
        var bytes = Array(text.utf8)
        let skipped = outcome { try bytes.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.skipValue() } } }
        #expect(skipped == parsed, "\(text)")
        if text.hasPrefix("\"") {
            let string = outcome { try bytes.withUnsafeBufferPointer { buffer in _ = try JSONParser.read(buffer) { try $0.readString("it") } } }
            #expect(string == parsed, "\(text)")
            let unbuilt = outcome { try bytes.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.skipOptionalString("it") } } }
            #expect(unbuilt == parsed, "\(text)")
        }
        // Inside an object, as a member the caller skips.
        bytes = Array(("{\"x\":" + text + "}").utf8)
        let nested = outcome { try bytes.withUnsafeBufferPointer { buffer in _ = try JSONParser.parse(buffer) } }
        let member = outcome {
            try bytes.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.readObject { parser, _ in try parser.skipValue() } } }
        }
        #expect(member == nested, "\(text)")
    }

    /// Keys are compared by their text, escaped or not: an escaped key is
    /// the key it spells, and the same key twice is refused either way.
    @Test func theOrderedReaderComparesKeysByTheirText() throws {
        var seen: [String] = []
        let text = Array(#"{"\u006eode":"a","plain":[1,"x"],"é":true}"#.utf8)
        try text.withUnsafeBufferPointer { buffer in
            try JSONParser.read(buffer) { parser in
                try parser.readObject { parser, key in
                    if key == "node" { seen.append("node=" + (try parser.readString("node"))) }
                    else if key == "plain" { try parser.readArray { try $0.skipValue(); seen.append("item") } }
                    else { seen.append("other"); try parser.skipValue() }
                }
            }
        }
        #expect(seen == ["node=a", "item", "item", "other"])
        let twice = Array(#"{"node":1,"\u006eode":2}"#.utf8)
        #expect(throws: JSONParser.Error(line: 1, column: 11, offset: 10, message: "duplicate key 'node'")) {
            try twice.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.readObject { parser, _ in try parser.skipValue() } } }
        }
        let mistyped = Array(#"{"n":7}"#.utf8)
        #expect(throws: JSONParser.Error(line: 1, column: 6, offset: 5, message: "expected a string for 'n', found '7'")) {
            try mistyped.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.readObject { parser, _ in _ = try parser.readString("'n'") } } }
        }
        let fraction = Array(#"[1.5]"#.utf8)
        #expect(throws: JSONParser.Error.self) {
            try fraction.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.readArray { _ = try $0.readInteger("n") } } }
        }
    }

    @Test func invalidUTF8IsRefusedNotReplaced() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D]] {
            #expect(throws: JSONParser.Error.self) {
                try bytes.withUnsafeBufferPointer { buffer in try JSONParser.parse(buffer) }
            }
            #expect(throws: JSONParser.Error.self) {
                try bytes.withUnsafeBufferPointer { buffer in try JSONParser.read(buffer) { try $0.skipValue() } }
            }
        }
    }

    @Test func deepNestingIsRefusedAtTheLimit() throws {
        let depth = JSONParser.maximumDepth
        #expect(try JSONParser.parse(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)) != .null)
        let tooDeep = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
        #expect(throws: JSONParser.Error(line: 1, column: depth + 1, offset: depth, message: "nested deeper than \(depth) levels")) {
            try JSONParser.parse(tooDeep)
        }
        // A million levels: refused at once, not a stack overflow.
        let hostile = String(repeating: "{\"a\":", count: 1_000_000)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(hostile) }
    }

    @Test func aLongObjectFindsADuplicateKey() {
        let members = (0..<40).map { "\"k\($0)\":\($0)" } + ["\"k7\":0"]
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse("{" + members.joined(separator: ",") + "}") }
    }

    @Test func hugeNumbersAreRefusedOrKeptFinite() throws {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse("-" + String(repeating: "9", count: 400)) }
        #expect(try JSONParser.parse("1e-400") == .double(0))
        #expect(try JSONParser.parse(String(repeating: "9", count: 30)) == .double(1e30))
    }

    private static func offset(_ text: String, _ line: Int, _ column: Int) -> Int {
        var offset = 0, current = 1
        for byte in text.utf8 {
            if current == line { break }
            offset += 1
            if byte == 0x0A { current += 1 }
        }
        return offset + column - 1
    }
}
