import Testing
@testable import MoonGraph

@Suite struct BuiltinCatalogTests {
    @Test func everyBuiltinDecodes() throws {
        let g = try #require(graph(doc([
            "s": ["uses": "sleep", "with": ["duration": "250ms"]],
            "e": ["uses": "echo", "with": ["message": "hi"]],
            "f": ["uses": "fail", "with": ["message": "boom", "code": 3]],
            "w": ["uses": "write-file", "with": ["path": "out.txt", "content": "data"]],
            "x": ["uses": "exists", "with": ["path": "out.txt"]],
            "t": ["uses": "wait-for", "with": ["tcp": "localhost:8080", "timeout": "5s"]],
            "p": ["uses": "wait-for", "with": ["path": "ready"]],
            "r": ["uses": "reduce", "with": ["op": "sum"]],
        ])))
        #expect(g.nodes.map(\.action) == [
            .builtin("sleep", with: ["duration": .duration(.milliseconds(250))]),
            .builtin("echo", with: ["message": .string("hi")]),
            .builtin("fail", with: ["message": .string("boom"), "code": .integer(3)]),
            .builtin("write-file", with: ["path": .path("out.txt"), "content": .string("data")]),
            .builtin("exists", with: ["path": .path("out.txt")]),
            .builtin("wait-for", with: ["tcp": .string("localhost:8080"), "timeout": .duration(.seconds(5))]),
            .builtin("wait-for", with: ["path": .path("ready")]),
            .builtin("reduce", with: ["op": .choice("sum")]),
        ])
        #expect(BuiltinCatalog.names == ["sleep", "echo", "fail", "write-file", "exists", "wait-for", "reduce"])
    }

    @Test func parameterErrors() {
        #expect(lines(decode(doc(["a": ["uses": "sleep", "with": ["duratoin": "1s"]]]))) == [
            "5:5: error: built-in 'sleep' needs 'duration' (a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds); add it under 'with'",
            "6:7: error: unknown parameter 'duratoin' for built-in 'sleep' (did you mean 'duration'?)",
        ])
        #expect(lines(decode(doc(["a": ["uses": "sleep"]]))) == [
            "4:11: error: built-in 'sleep' needs 'duration' (a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds); add it under 'with'",
        ])
        #expect(lines(decode(doc(["a": ["uses": "reduce", "with": ["op": "avg"]]]))) == [
            "6:11: error: invalid op 'avg' for built-in 'reduce'; write one of sum, concat, list",
        ])
        #expect(lines(decode(doc(["a": ["uses": "fail", "with": ["message": "m", "code": "x"]]]))) == [
            "7:13: error: invalid code 'x' for built-in 'fail'; write an integer",
        ])
        #expect(lines(decode(doc(["a": ["uses": "wait-for", "with": ["tcp": "localhost"]]]))) == [
            "6:12: error: invalid tcp 'localhost' for built-in 'wait-for'; write host:port, e.g. localhost:8080",
        ])
        #expect(lines(decode(doc(["a": ["uses": "echo", "with": ["message": ["a"]]]]))) == [
            "6:16: error: expected a string, found a list",
        ])
        #expect(lines(decode(doc(["a": ["uses": ["sleep"]]]))) == [
            "4:11: error: expected the name of a built-in, found a list",
        ])
    }

    @Test func waitForNeedsExactlyOneTarget() {
        #expect(lines(decode(doc(["a": ["uses": "wait-for", "with": ["timeout": "1s"]]]))) == [
            "5:5: error: built-in 'wait-for' needs exactly one of 'tcp' or 'path' under 'with'",
        ])
        #expect(lines(decode(doc(["a": ["uses": "wait-for", "with": ["tcp": "h:1", "path": "p"]]]))) == [
            "5:5: error: built-in 'wait-for' needs exactly one of 'tcp' or 'path' under 'with'",
        ])
    }

    @Test func templatesAreCheckedLater() throws {
        let g = try #require(graph(doc(["a": ["uses": "sleep", "with": ["duration": "${{ vars.nap }}"]]], extra: [("vars", ["nap": "1s"])])))
        #expect(g.nodes[0].action == .builtin("sleep", with: ["duration": .template("${{ vars.nap }}")]))
    }

    @Test func summaries() {
        #expect(NodeAction.builtin("fail", with: ["message": .string("m"), "code": .integer(2)]).summary == "uses fail (code: 2, message: m)")
        #expect(NodeAction.exec(["echo", "a b", "it's"]).summary == "echo 'a b' 'it'\\''s'")
        #expect(NodeAction.shell("make\nmake install").summary == "make …")
        #expect(NodeAction.shell("make -j4 all").summary == "make -j4 all")
        #expect(NodeAction.shell("\nmake").summary == "make")
        #expect(NodeAction.shell("").summary == "")
        #expect(NodeAction.exec(["cc", "-O2", "a.c", "é", ""]).summary == "cc -O2 a.c 'é' ''")
    }
}
