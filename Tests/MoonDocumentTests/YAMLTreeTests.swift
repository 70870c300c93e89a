import Testing
@testable import MoonDocument

/// A document is one table of nodes (`YAMLTree`); these hold what its users
/// rely on besides the loader's own tests: which scalars are null, nodes
/// built in code, and nodes that outlive everything but themselves.
@Suite struct YAMLTreeTests {
    @Test func nullIsDecidedOnceAsYAMLsCoreSchemaSaysIt() throws {
        let root = try load("""
            a: ~
            b: null
            c: Null
            d: NULL
            e:
            f: nul
            g: nULL
            h: "null"
            i: '~'
            j: !!null x
            k: !!str null
            l: nulls
            m: ~~
            n: [null, ~, x]
            """)
        let nulls = root.pairs?.filter { $0.value.isNull }.compactMap(\.key.scalar)
        #expect(nulls == ["a", "b", "c", "d", "e", "j"])
        #expect(root["n"]?.items?.map(\.isNull) == [true, true, false])
        #expect(root["n"]?.isNull == false)
        #expect(root["e"]?.kindDescription == "null")
        #expect(root["f"]?.kindDescription == "a scalar")
    }

    @Test func nodesOutliveTheDocumentsRoot() throws {
        var root: YAMLNode? = try load("x: {y: [1, 2]}\n")
        let list = try #require(root?["x"]?["y"]?.items)
        root = nil
        #expect(list.map(\.scalar) == ["1", "2"])
        #expect(lc(list[1].span.start) == "1:12")
    }

    @Test func nodesBuiltInCodeKeepTheirSpansAndSharing() throws {
        let span = { (line: Int) in SourceSpan(file: "c.yaml", start: SourceLocation(line: line, column: 1, offset: 0),
                                               end: SourceLocation(line: line, column: 2, offset: 1)) }
        let shared = YAMLNode.scalar("s", span: span(1))
        let list = YAMLNode.sequence([shared, shared, YAMLNode.scalar("~", span: span(2))], span: span(3))
        let key = YAMLNode.scalar("k", style: .doubleQuoted, span: span(4))
        let map = YAMLNode.mapping([YAMLNode.Pair(key: key, value: list)], span: span(5))
        let items = try #require(map.pairs?.first?.value.items)
        #expect(items.count == 3)
        #expect(items[0] === items[1])
        #expect(!(items[0] === items[2]))
        #expect(items[2].isNull)
        #expect(items[1].span.start.line == 1)
        #expect(map.span.start.line == 5)
        #expect(map.nodeCount == 6)
        if case .scalar("k", .doubleQuoted, nil) = map.pairs?.first?.key.kind {} else { Issue.record("the key lost its style") }
    }

    @Test func mergedAndAliasedNodesCountEveryRepetition() throws {
        let root = try load("base: &b {x: 1, y: 2}\nuse: {<<: *b, z: 3}\nagain: *b\n")
        #expect(root["use"]?.keys == ["x", "y", "z"])
        #expect(root["again"] === root["base"])
        // base: 5, use: 1 + 3 pairs = 7, again: 5 through the alias, the keys 3, the root 1.
        #expect(root.nodeCount == 21)
    }
}

extension Optional where Wrapped == YAMLNode {
    static func === (a: YAMLNode?, b: YAMLNode?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a === b
    }
}
