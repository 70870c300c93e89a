import Foundation
import Testing
@testable import MoonDocument

@Suite struct YAMLLoaderSpanTests {
    @Test func spansAreOneBasedWithByteOffsets() throws {
        let root = try load("version: 1\nnodes:\n  build:\n    run: make\n")
        let version = try #require(root["version"])
        #expect(lc(version.span.start) == "1:10")
        #expect(lc(version.span.end) == "1:11")
        #expect(version.span.start.offset == 9)
        let key = try #require(root.pairs?[1].key)
        #expect(lc(key.span.start) == "2:1")
        #expect(key.span.start.offset == 11)
        let run = try #require(root["nodes"]?["build"]?["run"])
        #expect(lc(run.span.start) == "4:10")
        #expect(run.span.start.offset == 36)
        #expect(run.span.file == "t.yaml")
        #expect(lc(root.span.start) == "1:1")
    }

    @Test func columnsCountCharactersAndOffsetsCountBytes() throws {
        // é is 2 bytes, € is 3 bytes, 😀 is 4 bytes.
        let root = try load("é: [ab, \"çç\", x]\n€€: 😀y\n")
        let list = try #require(root["é"]?.items)
        #expect(lc(list[0].span.start) == "1:5")
        #expect(list[0].span.start.offset == 5)
        #expect(lc(list[1].span.start) == "1:9")
        #expect(list[1].span.start.offset == 9)
        #expect(lc(list[1].span.end) == "1:13")
        #expect(list[1].span.end.offset == 15)
        #expect(list[1].scalar == "çç")
        #expect(list[1].kindDescription == "a scalar")
        let value = try #require(root["€€"])
        #expect(lc(value.span.start) == "2:5")
        #expect(value.span.start.offset == 20 + 6 + 2)
        #expect(value.scalar == "😀y")
        #expect(lc(value.span.end) == "2:7")
    }

    @Test func byteOrderMarkAndCRLF() throws {
        let root = try load("\u{FEFF}a: b\r\nc: d\r\n")
        let b = try #require(root["a"])
        #expect(lc(b.span.start) == "1:4")
        #expect(b.span.start.offset == 6)
        let d = try #require(root["c"])
        #expect(lc(d.span.start) == "2:4")
        #expect(d.span.start.offset == 12)
    }

    @Test func scalarStylesAndTags() throws {
        let root = try load("a: plain\nb: 'single'\nc: \"double\"\nd: |\n  literal\ne: >\n  folded\nf: !!str 12\n")
        func style(_ key: String) -> YAMLNode.ScalarStyle? {
            if case .scalar(_, let style, _)? = root[key]?.kind { return style }
            return nil
        }
        #expect(style("a") == .plain)
        #expect(style("b") == .singleQuoted)
        #expect(style("c") == .doubleQuoted)
        #expect(style("d") == .literal)
        #expect(root["d"]?.scalar == "literal\n")
        #expect(style("e") == .folded)
        if case .scalar(let text, _, let tag)? = root["f"]?.kind {
            #expect(text == "12")
            #expect(tag == "tag:yaml.org,2002:str")
        } else {
            Issue.record("f is not a scalar")
        }
        #expect(root["f"]?.resolvedScalar == .string("12"))
    }

    @Test func rootNeedNotBeAMapping() throws {
        #expect(try load("- a\n- b\n").items?.count == 2)
        #expect(try load("just text\n").scalar == "just text")
        #expect(try load("---\n").isNull)
    }
}

@Suite struct YAMLLoaderAliasTests {
    @Test func aliasYieldsTheAnchoredNode() throws {
        let root = try load("base: &b {x: 1}\ncopy: *b\nlist: [&s str, *s]\n")
        let base = try #require(root["base"])
        let copy = try #require(root["copy"])
        #expect(copy === base)
        // Where the alias is written, so that an error about it points there.
        #expect(lc(copy.span.start) == "2:7")
        #expect(lc(base.span.start) == "1:7")
        #expect(root["list"]?.items?.map { $0.scalar } == ["str", "str"])
    }

    @Test func unknownAliasIsAnErrorAtTheAlias() {
        let found = problems("a: 1\nb: *nowhere\nc: *other\n")
        #expect(found.count == 2)
        #expect(found.first?.message.contains("unknown alias '*nowhere'") == true)
        #expect(found.first.map { lc($0.span!.start) } == "2:4")
        #expect(found.last.map { lc($0.span!.start) } == "3:4")
    }

    @Test func recursiveAliasIsAnError() {
        let found = problems("a: &x [1, *x]\n")
        #expect(found.count == 1)
        #expect(found.first?.message.contains("contains it") == true)
    }

    @Test func laterAnchorReplacesEarlier() throws {
        let root = try load("a: &x 1\nb: *x\nc: &x 2\nd: *x\n")
        #expect(root["b"]?.scalar == "1")
        #expect(root["d"]?.scalar == "2")
    }
}

@Suite struct YAMLLoaderMergeTests {
    @Test func mergeOneMappingExplicitKeysWin() throws {
        let root = try load("""
            x-common: &common {queue: net, retry: 3, timeout: 5s}
            node:
              retry: 1
              <<: *common
              dir: app
            """)
        let node = try #require(root["node"])
        #expect(node.keys == ["retry", "queue", "timeout", "dir"])
        #expect(node["retry"]?.scalar == "1")
        #expect(node["queue"]?.scalar == "net")
        #expect(node["<<"] == nil)
    }

    @Test func mergeListEarlierMappingsWin() throws {
        let root = try load("""
            a: &a {k: from-a, only-a: 1}
            b: &b {k: from-b, only-b: 2}
            m:
              <<: [*a, *b]
              own: 3
            """)
        let m = try #require(root["m"])
        #expect(m.keys == ["k", "only-a", "only-b", "own"])
        #expect(m["k"]?.scalar == "from-a")
    }

    @Test func mergeInlineMappingAndExplicitKeyAfter() throws {
        let root = try load("m: {<<: {a: 1, b: 2}, b: 3}\n")
        #expect(root["m"]?.keys == ["a", "b"])
        #expect(root["m"]?["b"]?.scalar == "3")
    }

    @Test func quotedMergeKeyIsAnOrdinaryKey() throws {
        let root = try load("m: {'<<': x}\n")
        #expect(root["m"]?.keys == ["<<"])
    }

    @Test func mergeOfAScalarIsAnError() {
        let found = problems("m:\n  <<: text\n  <<: [{a: 1}, 2]\n")
        let messages = found.map(\.message)
        #expect(messages.contains { $0.contains("must be a mapping or a list of mappings") })
        #expect(messages.contains { $0.contains("can only merge mappings") })
        #expect(messages.contains { $0.contains("duplicate merge key") })
    }

    @Test func mergedAnchorsNestedMerge() throws {
        let root = try load("""
            base: &base {a: 1}
            mid: &mid {<<: *base, b: 2}
            top: {<<: *mid, c: 3}
            """)
        #expect(root["top"]?.keys == ["a", "b", "c"])
    }
}

@Suite struct YAMLLoaderErrorTests {
    /// libyaml says what it expected; the help line says how to fix the file.
    @Test(arguments: [
        ("a: [b, c\n", "help: a flow list `[a, b]` separates its items with ',' and ends with ']'"),
        ("a: { b: c d: e }\n", "help: a flow mapping"),
        ("a:\n  run: echo a: b\n", "help: a plain value cannot hold ': '"),
        ("a: `ls`\n", "help: '`' cannot start a plain value in YAML; quote the value"),
        ("a: @x\n", "help: '@' cannot start a plain value"),
        ("a: \"open\n", "help: a quoted value is not closed"),
        ("a:\n  b: 1\n c: 2\n", "help: the keys of one mapping start in the same column"),
        ("n:\n  a:\n      d: x\n    r: y\n", "help: the keys of one mapping start in the same column: this key is at column 5, line 3 above it at column 7, and the mapping at line 2 has its keys at column 3; move line 3 to column 5, or this line to column 7"),
        ("a: [b, c]]\n", "help: unexpected text after a value on this line: an extra ']'"),
        ("a: \"x\" y\n", "help: unexpected text after a value on this line"),
        ("a: 'it's'\n", "help: unexpected text after a value on this line"),
        ("- a\nb: 1\n", "help: the items of a list each start with '- '"),
        ("a:\n\tb: 1\n", "help: YAML does not allow tabs for indentation; indent with spaces"),
    ])
    func syntaxErrorsSayHowToFixThem(text: String, help: String) {
        let found = problems(text)
        #expect(found.count == 1)
        #expect(found.first?.notes.count == 1, "\(found.first?.message ?? "no error")")
        #expect(found.first?.notes.first?.hasPrefix(help) == true, "\(found.first?.message ?? "") \(found.first?.notes ?? [])")
    }

    @Test func duplicateKeysAreReportedAtTheSecondWithANote() {
        let found = problems("nodes:\n  build: {run: a}\n  test: {run: b}\n  build: {run: c}\nversion: 1\nversion: 2\n")
        #expect(found.count == 2)
        #expect(found.first?.message == "duplicate key 'build' in this mapping")
        #expect(found.first.map { lc($0.span!.start) } == "4:3")
        #expect(found.first?.notes == ["note: first defined at line 2, column 3", "help: keys of one mapping must differ (YAML readers disagree on which one wins): remove or rename one"])
        #expect(found.last.map { lc($0.span!.start) } == "6:1")
    }

    @Test func quotedAndPlainKeysAreTheSameKey() {
        #expect(problems("a: 1\n\"a\": 2\n").count == 1)
    }

    @Test func collectionKeysCompareByValue() {
        #expect(problems("? [a, b]\n: 1\n? [a, b]\n: 2\n").count == 1)
        #expect(problems("? [a, b]\n: 1\n? [a, c]\n: 2\n").isEmpty)
    }

    @Test func aSecondDocumentIsAnError() {
        let found = problems("a: 1\n---\nb: 2\n")
        #expect(found.count == 1)
        #expect(found.first?.message == "a graph file holds one YAML document; found a second one here")
        #expect(found.first.map { lc($0.span!.start) } == "2:1")
    }

    @Test(arguments: ["", "\n\n", "# only a comment\n  # and another\n", "\u{FEFF}"])
    func emptyFilesAreAnError(text: String) {
        let found = problems(text)
        #expect(found.count == 1)
        #expect(found.first?.message == "the file is empty; a graph file starts with `version: 1`")
    }

    @Test func invalidUTF8IsReportedAtTheByte() {
        let bytes = Array("a: 1\nbé: x".utf8) + [0xFF] + Array("\n".utf8)
        let found = problems(bytes)
        #expect(found.count == 1)
        #expect(found.first?.message == "the file is not valid UTF-8 (byte 0xFF here)")
        #expect(found.first.map { lc($0.span!.start) } == "2:6")
        #expect(found.first?.span?.start.offset == 11)
    }

    @Test(arguments: [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82]] as [[UInt8]])
    func overlongSurrogateAndTruncatedSequencesAreInvalid(sequence: [UInt8]) {
        let found = problems(Array("k: ".utf8) + sequence)
        #expect(found.first?.message.hasPrefix("the file is not valid UTF-8") == true)
        #expect(found.first.map { lc($0.span!.start) } == "1:4")
    }

    @Test func binaryInputIsAnError() {
        let found = problems([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D])
        #expect(found.count == 1)
        #expect(found.first?.message.contains("binary") == true)
        let nul = problems(Array("a: b\nc: d".utf8) + [0] + Array("e".utf8))
        #expect(nul.first.map { lc($0.span!.start) } == "2:5")
    }

    @Test func utf16IsRecognised() {
        let found = problems([0xFF, 0xFE, 0x61, 0x00, 0x3A, 0x00])
        #expect(found.first?.message.contains("UTF-16") == true)
    }

    @Test func syntaxErrorHasPositionAndContext() {
        let found = problems("version: 1\nnodes:\n  a: 1\n b: 2\n")
        #expect(found.count == 1)
        let error = found.first
        #expect(error?.message == "did not find expected key (while parsing a block mapping at line 1, column 1)")
        #expect(error.map { lc($0.span!.start) } == "4:2")
    }

    @Test func tabIndentationGetsAHint() {
        let found = problems("a:\n\tb: 1\n")
        #expect(found.count == 1)
        #expect(found.first?.notes == ["help: YAML does not allow tabs for indentation; indent with spaces"])
        #expect(found.first?.message.hasSuffix("(while scanning for the next token)") == true)
    }

    @Test func syntaxErrorColumnsCountCharacters() {
        let found = problems("ééé: [a, b\n")
        #expect(found.count == 1)
        #expect(found.first?.message.contains("while parsing a flow sequence at line 1, column 6") == true)
        #expect(found.first?.span?.start.line == 2)
    }

    @Test func controlCharactersAreASyntaxErrorWithAPosition() {
        let found = problems("a: b\nc: \u{1B}x\n")
        #expect(found.count == 1)
        #expect(found.first.map { lc($0.span!.start) } == "2:4")
        #expect(found.first?.message.contains("control characters") == true)
    }

    @Test func errorsBeforeASyntaxErrorAreKept() {
        let found = problems("a: 1\na: 2\nb: [\n")
        #expect(found.count == 2)
        #expect(found.map { $0.span!.start.line } == [2, 4])
    }
}

@Suite struct YAMLLoaderLimitTests {
    static let billionLaughs = """
        a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
        b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
        c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
        d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
        e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
        f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
        g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
        h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
        i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
        j: &j [*i,*i,*i,*i,*i,*i,*i,*i,*i]
        k: &k [*j,*j,*j,*j,*j,*j,*j,*j,*j]
        l: &l [*k,*k,*k,*k,*k,*k,*k,*k,*k]
        m: &m [*l,*l,*l,*l,*l,*l,*l,*l,*l]
        """

    @Test func billionLaughsFailsFast() {
        let clock = ContinuousClock()
        var found: [Diagnostic] = []
        let elapsed = clock.measure { found = problems(Self.billionLaughs) }
        #expect(found.count == 1)
        #expect(found.first?.message == "the aliases of this document repeat more than 4000000 nodes")
        #expect(found.first?.span?.start.line == 7)
        #expect(elapsed < .seconds(10), "fails fast, not exponentially")
    }

    @Test func mergeKeyBombFailsFast() {
        var text = "a0: &a0 {k: v}\n"
        for i in 1...40 { text += "a\(i): &a\(i) [*a\(i - 1), *a\(i - 1)]\n" }
        let found = problems(text)
        #expect(found.first?.message.contains("aliases of this document repeat more than") == true)
    }

    @Test func nodeLimitIsConfigurable() {
        let limits = YAMLLoader.Limits(maxDepth: 256, maxNodes: 10)
        #expect(problems("[1, 2, 3, 4]", limits: limits).isEmpty)
        #expect(problems("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", limits: limits).count == 1)
    }

    /// The written-node limit and the alias limit are apart: a file without
    /// aliases is never held to the alias limit, however large; aliases
    /// count what they repeat.
    @Test func aliasesCountApartFromWrittenNodes() {
        let limits = YAMLLoader.Limits(maxDepth: 256, maxNodes: 100, maxAliasNodes: 10)
        let plain = "[" + (1...60).map(String.init).joined(separator: ", ") + "]"
        #expect(problems(plain, limits: limits).isEmpty)
        #expect(problems("{a: &a [1, 2, 3, 4], b: *a}", limits: limits).isEmpty)
        let repeated = problems("{a: &a [1, 2, 3, 4], b: [*a, *a, *a]}", limits: limits)
        #expect(repeated.map(\.message) == ["the aliases of this document repeat more than 10 nodes"])
        #expect(repeated.first.map { lc($0.span!.start) } == "1:34")
        let written = problems("[" + (1...120).map(String.init).joined(separator: ", ") + "]", limits: limits)
        #expect(written.first?.message == "the document has more than 100 nodes (keys, values and list items)")
    }

    @Test func hugeFlowNestingFailsFast() {
        let clock = ContinuousClock()
        var found: [Diagnostic] = []
        let text = String(repeating: "[", count: 200_000)
        let elapsed = clock.measure { found = problems(text) }
        #expect(found.count == 1)
        #expect(found.first?.message == "the document is nested more than 256 levels deep")
        #expect(found.first.map { lc($0.span!.start) } == "1:257")
        #expect(elapsed < .seconds(10), "fails fast, not exponentially")
    }

    @Test func hugeBlockNestingFailsFast() {
        var text = ""
        for depth in 0..<5_000 { text += String(repeating: " ", count: depth) + "- \n" }
        let found = problems(text)
        #expect(found.first?.message.contains("nested more than") == true)
    }

    @Test func deepButLegalNesting() throws {
        let depth = 256
        let text = String(repeating: "[", count: depth) + "x" + String(repeating: "]", count: depth)
        var node = try load(text)
        var levels = 0
        while let items = node.items, let first = items.first {
            node = first
            levels += 1
        }
        #expect(levels == depth)
        #expect(node.scalar == "x")
        #expect(problems("[" + text + "]").count == 1)
    }

    @Test func deepBlockMappings() throws {
        var text = ""
        for depth in 0..<200 { text += String(repeating: " ", count: depth) + "k\(depth):\n" }
        text += String(repeating: " ", count: 200) + "leaf\n"
        var node = try load(text)
        var levels = 0
        while let pair = node.pairs?.first {
            node = pair.value
            levels += 1
        }
        #expect(levels == 200)
        #expect(node.scalar == "leaf")
    }

    @Test func nodeCountCountsExpandedAliases() throws {
        let root = try load("a: &a [1, 2, 3]\nb: [*a, *a]\n")
        #expect(root["a"]?.nodeCount == 4)
        #expect(root["b"]?.nodeCount == 9)
        #expect(root.nodeCount == 1 + 1 + 4 + 1 + 9)
    }
}
