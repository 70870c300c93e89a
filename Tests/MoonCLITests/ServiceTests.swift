import Foundation
import MoonEvents
import Testing

/// `service: true` in a plain run: a node not expected to end. Its
/// dependents start once it has started (a `wait-for` need says when it is
/// ready), and when everything else is done moon stops it, which is not a
/// failure; a service that exits on its own is reported as its exit says.
@Suite("services")
struct ServiceTests {
    static let graph = """
        version: 1
        nodes:
          serve:
            service: true
            run: echo $$ > serve.tmp; mv serve.tmp serve.pid; exec sleep 600
          ready:
            needs: [serve]
            uses: wait-for
            with: {path: serve.pid}
          test:
            needs: [ready]
            run: cat serve.pid
        """

    @Test("a service's dependents run while it runs; it is stopped at the end, and the run succeeds")
    func stoppedAtTheEnd() throws {
        let moon = try Moon(graph: Self.graph)
        let result = try moon.run(["run", "--json", "--grace", "2s"])
        #expect(result.status == 0, "\(result.stderr)")
        let pid = try #require(Int32((moon.read("serve.pid") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(result.events("next", node: "test").first?.text == "\(pid)")
        let end = try #require(result.events("complete", node: "serve").first)
        #expect(end.stopped == true)
        #expect(result.events("graph-complete").first?.ok == true)
        #expect(!isAlive(pid, of: moon), "nothing is left running")
        // The service ends after the nodes that needed it.
        let order = result.events.compactMap { $0.name == "complete" ? $0.node : nil }
        #expect(order.last == "serve")
        try moon.write("events.jsonl", result.stdout)
        let check = try shell("python3 \(Moon.root.path)/schema/validate-events.py events.jsonl --complete", in: moon)
        #expect(check.status == 0 || check.status == 3, "\(check.stderr)")
    }

    @Test("a service that fails on its own while others run fails the run")
    func exitsOnItsOwn() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              serve:
                service: true
                run: exit 3
              slow:
                run: sleep 1
            """)
        let result = try moon.run(["run", "--json", "-k"])
        #expect(result.status == 1)
        let error = try #require(result.events("error", node: "serve").first)
        #expect(error.error?.exitCode == 3)
    }

    @Test("Ctrl-C during a run with a service stops it too: exit 130, nothing left running")
    func interrupted() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              serve:
                service: true
                run: echo $$ > serve.pid; exec sleep 600
              long:
                needs: [serve]
                run: echo $$ > long.pid; exec sleep 600
            """)
        let running = try moon.start(["run", "--json"])
        // The shell creates the file before `echo` writes the pid: wait for the pid.
        func pidIn(_ file: String) -> Int32? { Int32((moon.read(file) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(eventually(60) { pidIn("serve.pid") != nil && pidIn("long.pid") != nil })
        running.signal(SIGINT)
        let result = try running.wait(limit: 30)
        #expect(result.status == 130)
        for file in ["serve.pid", "long.pid"] {
            let pid = try #require(pidIn(file))
            #expect(!isAlive(pid, of: moon), "\(file)")
        }
        #expect(result.error(of: "serve")?.kind == .canceled)
    }

    @Test("misused service and restart keys are errors with file:line:col")
    func misuse() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: echo a
                restart: sometimes
              b:
                run: echo b
                restart: never
              g:
                needs: [a]
                service: true
            """)
        let result = try moon.run(["check"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("moon.yaml:5:"), "\(result.stderr)")
        #expect(result.stderr.contains("on-change"))
        #expect(result.stderr.contains("moon.yaml:8:"))
        #expect(result.stderr.contains("moon.yaml:11:"))
    }
}
