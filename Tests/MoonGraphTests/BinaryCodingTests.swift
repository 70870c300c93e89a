import Foundation
import MoonDocument
import Testing
@testable import MoonGraph

/// `BinaryCoding`, the form of the compiled graph: a value comes back
/// whole, bad input throws (never traps), and the types whose coding is
/// written by hand still code every stored property.
@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct BinaryCodingTests {
    static let rich = """
        version: 1
        name: rich
        description: every kind of field
        vars:
          channel: beta
          list: [a, b]
        env:
          LC_ALL: C
        dotenv: [{ path: .env, optional: true }]
        cache: { dir: /tmp/c, key: [x] }
        queues:
          net: { concurrency: 4 }
          cluster: { executor: slurm, concurrency: 10, slurm: { partition: debug, args: [--x] } }
        defaults:
          timeout: 10m
          retry: { times: 2, delay: 1s, backoff: 2 }
          success-codes: [0, 5]
          resources: { memory: 1G }
        default: [build]
        nodes:
          build:
            description: builds
            run: make ${{ vars.channel }}
            sources: ["src/*.c"]
            generates: [out/]
            depfile: out/deps.d
            env: { A: "1" }
            dir: sub
            priority: 3
            resources: { memory: 2G, cpus: 2 }
          test:
            needs: [build]
            run: [./test, --fast]
            queue: net
            cache: false
            params: { filter: { default: all, description: which } }
          serve:
            run: ./serve
            service: true
            restart: never
            internal: true
          obj:
            for-each: [a.c, b.c]
            run: cc ${{ item }}
          mat:
            matrix: { os: [linux, mac], cc: [gcc] }
            run: echo ${{ matrix.os }}
          wait:
            uses: sleep
            with: { duration: 1s }
          all:
            needs: [test, obj, mat]
        """

    private func graph(_ text: String) throws -> Graph {
        let result = GraphLoader.load(SourceFile(path: "moon.yaml", text: text))
        return try #require(result.graph, "\(result.diagnostics)")
    }

    @Test func aGraphComesBackWholeAndItsIndexesRebuilt() throws {
        let original = try graph(Self.rich)
        let bytes = try BinaryCoding.encode(original)
        let decoded = try bytes.withUnsafeBytes { try BinaryCoding.decode(Graph.self, from: $0) }
        #expect(try BinaryCoding.encode(decoded) == bytes)
        #expect(decoded.nodes.map(\.name) == original.nodes.map(\.name))
        for node in original.nodes where !node.isBarrier {
            #expect(decoded.index(of: node.name) == original.index(of: node.name))
        }
        #expect(decoded.templateNames == original.templateNames)
        for template in original.templateNames { #expect(decoded.instances(of: template) == original.instances(of: template)) }
        #expect(decoded.vars == original.vars && decoded.vars.items("list") == ["a", "b"])
        #expect(decoded.environment(for: decoded.nodes[0]) == original.environment(for: original.nodes[0]))
    }

    /// Equal graphs are equal bytes: dictionaries are written in key order.
    @Test func encodingIsDeterministic() throws {
        let a = try BinaryCoding.encode(try graph(Self.rich))
        let b = try BinaryCoding.encode(try graph(Self.rich))
        #expect(a == b)
    }

    /// The hand-written codings (Graph, Variables) name every stored property
    /// but the derived indexes: a property added later fails here, not silently.
    @Test func handWrittenCodingsNameEveryStoredProperty() throws {
        let original = try graph(Self.rich)
        let graphFields = Set(Mirror(reflecting: original).children.compactMap(\.label))
        #expect(graphFields == Set(Graph.CodingKeys.allCases.map(\.stringValue)).union(Graph.derivedProperties))
        let variableFields = Set(Mirror(reflecting: original.vars).children.compactMap(\.label))
        #expect(variableFields == ["entries", "positions"])
        // Node's rarely set fields sit in a box coded as its synthesized fields.
        let node = original.nodes[0]
        #expect(Set(Mirror(reflecting: node).children.compactMap(\.label)).contains("rare"))
    }

    /// Every prefix of an encoding, and every single-byte change, throws or
    /// decodes; none traps.
    @Test func shortOrCorruptInputThrowsWithoutTrapping() throws {
        let bytes = try BinaryCoding.encode(try graph(Self.rich))
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 400)) {
            #expect(throws: (any Error).self) {
                try Array(bytes.prefix(length)).withUnsafeBytes { try BinaryCoding.decode(Graph.self, from: $0) }
            }
        }
        #expect(throws: (any Error).self) { try (bytes + [0]).withUnsafeBytes { try BinaryCoding.decode(Graph.self, from: $0) } }
        for position in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 300)) {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0xFF] {
                var changed = bytes
                changed[position] = value
                _ = try? changed.withUnsafeBytes { try BinaryCoding.decode(Graph.self, from: $0) }
            }
        }
    }

    @Test func optionalsDictionariesAndEnumsRoundTrip() throws {
        struct Sample: Codable, Equatable {
            var a: Int?
            var b: [String?]
            var c: [String: [Int]]
            var d: Shell
            var e: NodeAction
            var f: Duration?
            var g: UInt32
        }
        let sample = Sample(a: nil, b: ["x", nil, ""], c: ["z": [1], "a": []], d: .bash,
                            e: .builtin("sleep", with: ["duration": .duration(.seconds(2)), "n": .integer(-3)]), f: .milliseconds(5),
                            g: .max)
        let bytes = try BinaryCoding.encode(sample)
        #expect(try bytes.withUnsafeBytes { try BinaryCoding.decode(Sample.self, from: $0) } == sample)
    }

    // MARK: - GraphBinary, the compiled graph's fast form

    @Test func theFastFormGivesTheSameGraph() throws {
        let original = try graph(Self.rich)
        let fast = GraphBinary.encode(original)
        let back = try fast.withUnsafeBytes { try GraphBinary.decode($0) }
        #expect(try BinaryCoding.encode(back) == BinaryCoding.encode(original))
        for node in original.nodes where !node.isBarrier { #expect(back.index(of: node.name) == original.index(of: node.name)) }
        #expect(back.templateNames == original.templateNames)
    }

    /// `GraphBinary.fields` is what each type stores: a property added to
    /// one of them fails here until the fast form writes it too.
    @Test func theFastFormWritesEveryStoredProperty() throws {
        let g = try graph(Self.rich)
        func labels(_ value: Any) -> [String] { Mirror(reflecting: value).children.compactMap(\.label) }
        let span = g.nodes[0].span
        let node = try #require(g.nodes.first { $0.instance != nil })
        let rare = try #require(Mirror(reflecting: node).children.first { $0.label == "rare" }?.value)
        let samples: [String: Any] = [
            "Graph": g, "Node": node, "RareFields": try #require(Mirror(reflecting: rare).children.first?.value),
            "Variables": g.vars, "Entry": g.vars.entries[0], "DotenvFile": g.dotenv[0], "CacheSettings": g.cache,
            "SecretDeclaration": SecretDeclaration(name: "s", source: .environment("S"), span: span),
            "QueueSpec": g.queues[0], "SlurmOptions": SlurmOptions(), "NodeDefaults": g.defaults, "RetryPolicy": g.defaults.retry,
            "RootNeed": RootNeed(nodes: 0..<1, name: "x", span: span), "NodeInstance": node.instance!,
            "DynamicFanOut": DynamicFanOut(need: 0, key: "k"), "NodeParameter": NodeParameter(name: "p", span: span),
            "NodeArguments": NodeArguments(), "SourceSpan": span, "SourceLocation": span.start,
            "ResourceSpec": ResourceSpec(),
        ]
        #expect(Set(samples.keys) == Set(GraphBinary.fields.keys))
        for (type, sample) in samples {
            #expect(labels(sample) == GraphBinary.fields[type], "\(type)")
        }
    }

    @Test func theFastFormRefusesShortOrCorruptInput() throws {
        let bytes = GraphBinary.encode(try graph(Self.rich))
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 400)) {
            #expect(throws: (any Error).self) { try Array(bytes.prefix(length)).withUnsafeBytes { try GraphBinary.decode($0) } }
        }
        for position in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 300)) {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0xFF] {
                var changed = bytes
                changed[position] = value
                _ = try? changed.withUnsafeBytes { try GraphBinary.decode($0) }
            }
        }
    }
}
