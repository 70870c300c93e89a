import Foundation
import MoonEvents
import Testing

/// Every node that runs a process reports what its whole process tree used
/// (`usage` on `complete` and `error`): a grandchild's memory counts, and so
/// does a background job whose parent ended before it (re-parented to moon,
/// reaped by moon's periodic sweep). The summary names the heaviest nodes,
/// `moon replay` keeps the figures, and `moon history --node` shows them.
@Suite struct UsageTests {
    static let mib: Int64 = 1 << 20

    /// `python3 alloc.py N` holds N MiB, every byte written (resident).
    static let alloc = "import sys\nb = b'x' * (int(sys.argv[1]) << 20)\n"
    /// `python3 busy.py` spins until it has used half a second of user time.
    static let busy = "import os\nwhile os.times().user < 0.5:\n    pass\n"

    static let graph = """
        version: 1
        name: usage
        nodes:
          big:
            run: python3 alloc.py 200
          grand:
            # moon's sh, then sh, then python: the grandchild's peak counts.
            run: sh -c 'sh -c "python3 alloc.py 150; true"; true'
          background:
            # The subshell ends at once: its background job is re-parented
            # to moon, ends while the node still runs, and is reaped by moon.
            run: |
              (python3 alloc.py 120 && touch done &)
              while [ ! -f done ]; do sleep 0.05; done
              sleep 1
          busy:
            run: python3 busy.py
          all:
            needs: [big, grand, background, busy]
        """

    func moon() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.write("alloc.py", Self.alloc)
        try moon.write("busy.py", Self.busy)
        return moon
    }

    func usage(_ result: Moon.Result, _ node: String) throws -> NodeUsage {
        let end = try #require(result.events.first { ($0.name == "complete" || $0.name == "error") && $0.node == node },
                               "no end of \(node):\n\(result.stdout)\(result.stderr)")
        return try #require(end.usage, "\(node) has no usage:\n\(result.stdout)")
    }

    @Test func theWholeProcessTreeCountsAndReplayAndHistoryKeepIt() throws {
        let moon = try moon()
        let result = try moon.run(["run", "-j", "2", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try usage(result, "big").maxRSSBytes >= 200 * Self.mib)
        #expect(try usage(result, "grand").maxRSSBytes >= 150 * Self.mib)
        #expect(try usage(result, "background").maxRSSBytes >= 120 * Self.mib)
        let busy = try usage(result, "busy")
        #expect(busy.cpuUserMilliseconds >= 300, "\(busy)")
        #expect(busy.maxRSSBytes < 150 * Self.mib, "one node's peak is not another's: \(busy)")
        #expect(try usage(result, "big").source == .rusage)
        // A group runs no process: it has no usage.
        #expect(result.events("complete", node: "all").first?.usage == nil)
        #expect(result.stdout.contains(#""usage":{"cpu_user_ms":"#), "\(result.stdout)")

        // `moon replay` reads the figures back, writes them again, and its summary names the heaviest.
        try moon.write("run.jsonl", result.stdout)
        let again = try moon.run(["replay", "run.jsonl", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        for node in ["big", "grand", "background", "busy"] {
            #expect(try usage(again, node) == usage(result, node), "\(node)")
        }
        let replayed = try moon.run(["replay", "run.jsonl"])
        let heaviest = try #require(replayed.stdout.split(separator: "\n").first { $0.hasPrefix("heaviest: ") }, "\(replayed.stdout)")
        #expect(heaviest.hasPrefix("heaviest: memory big 2"), "\(heaviest)")
        #expect(heaviest.contains("; CPU busy "), "\(heaviest)")

        // The history keeps them: one node over its recent runs, and each node of a run.
        let history = try moon.run(["history", "--node", "big"])
        #expect(history.status == 0, "\(history.stderr)")
        let rows = history.stdout.split(separator: "\n").map(String.init)
        #expect(rows.first?.hasPrefix("RUN ") == true && rows.first?.contains("PEAK RSS") == true, "\(history.stdout)")
        #expect(rows.count == 2, "\(history.stdout)")
        let peak = ByteText.mebibytes(of: try usage(result, "big").maxRSSBytes)
        #expect(rows.last?.contains(peak) == true && rows.last?.hasSuffix("succeeded") == true, "\(peak) in \(history.stdout)")
        let nodes = try moon.run(["history", "--nodes"])
        #expect(nodes.stdout.contains(", peak \(peak)"), "\(nodes.stdout)")
        let unknown = try moon.run(["history", "--node", "nope"])
        #expect(unknown.status == 0 && unknown.stdout.hasPrefix("node nope is in none of the last 1 runs"), "\(unknown.stdout)")
    }

    /// `history --node` of a fan-out's name lists each instance's runs, named.
    @Test func historyOfAFanOutShowsItsInstances() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              x: { for-each: [a, b], run: "true" }
            """)
        #expect(try moon.run(["run"]).status == 0)
        let history = try moon.run(["history", "--node", "x"])
        let rows = history.stdout.split(separator: "\n")
        #expect(rows.count == 3 && rows.first?.hasSuffix("NODE") == true, "\(history.stdout)")
        #expect(rows.contains { $0.hasSuffix("x[a]") } && rows.contains { $0.hasSuffix("x[b]") }, "\(history.stdout)")
    }

    @Test func aFailedNodeCarriesItsUsageAndTheSummaryNamesTheHeaviest() throws {
        let moon = try Moon(graph: """
            version: 1
            name: failing
            nodes:
              heavy:
                run: python3 alloc.py 100; exit 3
              light:
                run: echo light
            """)
        try moon.write("alloc.py", Self.alloc)
        let json = try moon.run(["run", "-j", "1", "-k", "--json"])
        #expect(json.status != 0)
        #expect(try usage(json, "heavy").maxRSSBytes >= 100 * Self.mib)
        #expect(json.error(of: "heavy")?.exitCode == 3)

        let plain = try moon.run(["run", "-j", "1", "-k", "--force"])
        let heaviest = try #require(plain.stdout.split(separator: "\n").first { $0.hasPrefix("heaviest: ") }, "\(plain.stdout)")
        #expect(heaviest.hasPrefix("heaviest: memory heavy 1"), "\(heaviest)")
        // light's peak is the floor every node shares, and its CPU next to none: it is not heavy.
        #expect(!heaviest.contains("light"), "\(heaviest)")

        // A node's attempts add up: the retried attempt's peak stays, its CPU adds.
        try moon.write("graph2.yaml", """
            version: 1
            name: retried
            nodes:
              flaky:
                retry: 1
                run: |
                  if [ -f tried ]; then echo second; exit 0; fi
                  touch tried
                  python3 alloc.py 100; exit 1
            """)
        let retried = try moon.run(["run", "graph2.yaml", "--json"])
        #expect(retried.status == 0, "\(retried.stdout)\(retried.stderr)")
        #expect(retried.events("retry", node: "flaky").count == 1)
        #expect(try usage(retried, "flaky").maxRSSBytes >= 100 * Self.mib)

        // A run of one node names no heaviest: its own line says it all.
        let one = try moon.run(["run", "light", "--force"])
        #expect(one.status == 0 && !one.stdout.contains("heaviest"), "\(one.stdout)")
    }
}

/// How moon writes a count of MiB (`ByteSize.text`): `212.5 MiB`, `200 MiB`.
enum ByteText {
    static func mebibytes(of bytes: Int64) -> String {
        var number = String(format: "%.1f", Double(bytes) / Double(1 << 20))
        if number.hasSuffix(".0") { number.removeLast(2) }
        return number + " MiB"
    }
}
