import Foundation
import MoonEvents
import Testing

/// A node's fingerprint and cache key hold the vars it reads and no other
/// (docs/incremental.md): a `--set` reruns exactly the nodes that read the
/// var, directly, through another var, or through the graph's `env`; going
/// back restores them from the cache.
@Suite struct VarFingerprintTests {
    static let graph = """
        version: 1
        vars:
          MIN_PAGES: 2
          LABEL: "min=${{ vars.MIN_PAGES }}"
          TOOL: exec
          EXPORTED: e1
          UNUSED: u
        env:
          FROM_VAR: ${{ vars.EXPORTED }}
        nodes:
          expensive:
            sources: [in.txt]
            generates: [expensive.txt]
            run: cp in.txt expensive.txt
          summary:
            sources: [in.txt]
            generates: [summary.txt]
            run: echo "${{ vars.MIN_PAGES }}" > summary.txt
          label:
            sources: [in.txt]
            generates: [label.txt]
            env:
              L: ${{ vars.LABEL }}
            run: echo "$L" > label.txt
          exec:
            sources: [in.txt]
            generates: ["exec*.txt"]
            run: ["cp", "in.txt", "${{ vars.TOOL }}.txt"]
          shadowed:
            sources: [in.txt]
            generates: [shadowed.txt]
            env:
              FROM_VAR: own
            run: echo "$FROM_VAR" > shadowed.txt
        """

    /// The nodes a run ran, sorted.
    func ran(_ result: Moon.Result) -> [String] {
        result.events("complete").compactMap { $0.node }.sorted()
    }

    func restored(_ result: Moon.Result) -> [String] {
        result.events("skip").filter { $0.reason == .cacheHit }.compactMap { $0.node }.sorted()
    }

    @Test(arguments: [
        ("MIN_PAGES=10", ["label", "summary"]),      // read by summary's run, and by label through LABEL
        ("LABEL=x", ["label"]),                      // through label's env
        ("TOOL=exec2", ["exec"]),                      // an exec-form argument
        ("EXPORTED=e2", ["exec", "expensive", "label", "summary"]),  // the graph's env reaches every process but one that replaces it
        ("UNUSED=v", []),
    ])
    func aVarChangeRerunsExactlyTheNodesThatReadIt(_ set: String, _ expected: [String]) throws {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "x\n")
        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        let status = try moon.run(["status", "--set", set])
        for node in expected { #expect(status.stdout.contains("\(node)") && status.stdout.contains("runs: environment changed"), "\(status.stdout)") }
        let changed = try moon.run(["run", "--json", "--set", set])
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(ran(changed) == expected, "--set \(set): \(changed.stdout)")
        let back = try moon.run(["run", "--json"])
        #expect(ran(back).isEmpty, "going back from --set \(set) ran \(ran(back))")
        #expect(restored(back) == expected, "going back from --set \(set): \(back.stdout)")
        let after = try moon.run(["status"])
        #expect(after.stdout.components(separatedBy: "up to date").count == 6, "\(after.stdout)")
    }
}
