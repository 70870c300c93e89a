import Foundation
import MoonTestSupport
import Testing

/// Watch mode's decisions on virtual time (`WatchHarness`): which nodes
/// rerun, how often, in which order and what each rerun reports. The
/// end-to-end WatchTests keep what only the binary shows (inotify, real
/// processes, the terminal).
@Suite struct WatchSessionTests {
    static let buildAndTest = """
        version: 1
        nodes:
          build:
            run: make
            sources: ["src/*.c"]
          test:
            run: ./test
            needs: [build]
            sources: ["tests/*.t"]
        """

    static let one = """
        version: 1
        nodes:
          build:
            run: make
            sources: ["src/*.c"]
        """

    /// Runs `scenario` at virtual second `time`.
    static func at(_ time: TimeInterval, _ h: WatchHarness, _ action: @escaping () -> Void) {
        h.clock.schedule(after: .milliseconds(Int64(((time - h.now) * 1000).rounded()))) { action() }
    }

    @Test("a burst of changes within the debounce gives one rerun, of the changed node and what needs it, once it is quiet")
    func debouncedBurst() throws {
        let h = try WatchHarness(graph: Self.buildAndTest)
        let code = try h.run { h in
            h.advance(3)
            h.change("src/a.c")
            h.advance(0.05)
            h.change("src/b.c")
            h.advance(0.05)
            h.change("src/c.c", "notes.txt")
            h.advance(5)
            h.stop()
        }
        #expect(code == 130)
        #expect(h.scenarioError == nil)
        #expect(h.reruns.count == 1)
        #expect(h.reruns.first?.changed == ["src/a.c", "src/b.c", "src/c.c"])
        #expect(h.reruns.first?.nodes == ["build", "test"])
        #expect(h.startedPerRun == [["build", "test"], ["build", "test"]])
        // The rerun waits for 100 ms without a change after the last one.
        #expect(h.starts(of: "build").count == 2)
        #expect(abs((h.starts(of: "build").last ?? 0) - 3.2) < 0.01)
    }

    @Test("a change that touches no input (not a source, not the graph file) starts nothing")
    func unrelatedChange() throws {
        let h = try WatchHarness(graph: Self.buildAndTest)
        try h.run { h in
            h.advance(3)
            h.change("notes.txt", "src/a.h")
            h.advance(5)
            h.stop()
        }
        #expect(h.reruns.isEmpty)
        #expect(h.starts(of: "build").count == 1)
    }

    @Test("a write of what a node generates, inside its sources' glob, starts nothing; an edit of a source after it does")
    func generatesNeverTrigger() throws {
        let h = try WatchHarness(graph: """
            version: 1
            nodes:
              gen:
                run: ./gen
                sources: ["src/*.txt"]
                generates: [src/out.txt]
            """)
        try h.run { h in
            h.advance(3)
            h.change("src/out.txt")
            h.advance(3)
            h.change("src/a.txt")
            h.advance(3)
            h.stop()
        }
        #expect(h.reruns.map(\.changed) == [["src/a.txt"]])
        #expect(h.starts(of: "gen") == [0, 6.1])
    }

    @Test("a change to a later node's sources reruns only it, not what it needs")
    func changeOfTheLastNode() throws {
        let h = try WatchHarness(graph: Self.buildAndTest)
        try h.run { h in
            h.advance(3)
            h.change("tests/a.t")
            h.advance(5)
            h.stop()
        }
        #expect(h.reruns.map(\.nodes) == [["test"]])
        #expect(h.startedPerRun == [["build", "test"], ["test"]])
    }

    @Test("a change during a run: the running node it affects is cancelled at once and started again; its dependent runs once, after it")
    func changeDuringARun() throws {
        let h = try WatchHarness(graph: Self.buildAndTest)
        try h.run(script: ["build": .init(duration: 3)]) { h in
            h.advance(1)
            h.change("src/a.c")
            h.advance(10)
            h.stop()
        }
        let starts = h.starts(of: "build")
        #expect(starts.count == 2)
        #expect(abs(starts[1] - 1.1) < 0.01, "restarted once the debounce ends, not after the first attempt's 3 s")
        #expect(abs((h.exits(of: "build").first ?? 0) - 1.1) < 0.01, "the first attempt is killed, not awaited")
        #expect(h.starts(of: "test").count == 1)
        #expect((h.starts(of: "test").first ?? 0) >= starts[1] + 3 - 0.01)
        #expect(h.reruns.count == 1)
    }

    @Test("a running node a change does not affect carries on into the next run, which adopts it; the stale one restarts")
    func staleRunningNodeRestarted() throws {
        let h = try WatchHarness(graph: """
            version: 1
            nodes:
              a:
                run: ./a
                sources: ["a/*"]
              b:
                run: ./b
                sources: ["b/*"]
            """)
        try h.run(script: ["a": .init(duration: 5), "b": .init(duration: 5)]) { h in
            h.advance(1)
            h.change("b/x")
            h.advance(10)
            h.stop()
        }
        #expect(h.starts(of: "a") == [0], "a carries on, started once")
        #expect(h.exits(of: "a") == [5], "a ends when its own run would have")
        #expect(h.starts(of: "b").count == 2)
        #expect(abs((h.starts(of: "b").last ?? 0) - 1.1) < 0.01)
        #expect(h.reruns.map(\.nodes) == [["b"]])
    }

    @Test("an edit at the instant a run ends, just before it or just after it is never lost: it reruns the node",
          arguments: [-0.001, 0, 0.001])
    func editAsTheRunEnds(offset: Double) throws {
        let h = try WatchHarness(graph: Self.one)
        try h.run(script: ["build": .init(duration: 1)]) { h in
            Self.at(1 + offset, h) { h.change("src/a.c") }
            h.advance(5)
            h.stop()
        }
        #expect(h.starts(of: "build").count == 2, "offset \(offset)")
        #expect(h.reruns.count == 1, "offset \(offset)")
    }

    @Test("a service keeps running across reruns that do not touch it; a change of its sources stops it, then starts it again")
    func serviceRestarted() throws {
        let h = try WatchHarness(graph: """
            version: 1
            nodes:
              server:
                run: ./serve
                service: true
                sources: ["srv/*.c"]
              test:
                run: ./test
                needs: [server]
                sources: ["tests/*.t"]
            """)
        try h.run(script: ["server": .init(duration: 1000, diesAfterTerm: 0.5), "test": .init(duration: 1)]) { h in
            h.advance(3)
            h.change("tests/a.t")
            h.advance(3)
            #expect(h.starts(of: "server") == [0], "a rerun of its dependent adopts the running service")
            #expect(h.starts(of: "test").count == 2)
            h.change("srv/main.c")
            h.advance(5)
            h.stop()
        }
        let starts = h.starts(of: "server")
        let exits = h.exits(of: "server")
        #expect(starts.count == 2)
        #expect(exits.count == 2, "stopped for the restart, and by Ctrl-C")
        #expect(exits[0] >= 6.1 + 0.5 - 0.01 && starts[1] >= exits[0], "the old service is gone before the new one starts")
        #expect(h.starts(of: "test").count == 3, "what needs the service runs again with it")
        #expect(h.reruns.map(\.nodes) == [["test"], ["server", "test"]])
    }

    @Test("a graph file edited into an error: nothing runs, not even for a source's change; fixed, every node runs again")
    func graphEditedIntoAnErrorAndBack() throws {
        let h = try WatchHarness(graph: Self.buildAndTest)
        try h.run { h in
            h.advance(3)
            try h.write("moon.yaml", "version: 1\nnodes:\n  build: [\n")
            h.change("moon.yaml")
            h.advance(2)
            h.change("src/a.c")
            h.advance(2)
            #expect(h.starts(of: "build").count == 1)
            try h.write("moon.yaml", Self.buildAndTest)
            h.change("moon.yaml")
            h.advance(5)
            h.stop()
        }
        #expect(h.scenarioError == nil)
        #expect(h.starts(of: "build").count == 2)
        #expect(h.reruns.count == 1)
        #expect(h.reruns.first?.changed == ["moon.yaml"])
        #expect(h.startedPerRun == [["build", "test"], ["build", "test"]])
    }

    @Test("Ctrl-C while idle ends watch mode with 130 and starts nothing more")
    func ctrlCWhileIdle() throws {
        let h = try WatchHarness(graph: Self.one)
        let code = try h.run { h in
            h.advance(2)
            h.stop()
        }
        #expect(code == 130)
        #expect(h.starts(of: "build").count == 1)
    }
}
