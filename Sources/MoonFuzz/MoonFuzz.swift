import CFuzzDriver
import MoonDocument
import MoonGraph
import MoonReport

/// The libFuzzer target of moon's front end: arbitrary bytes go through
/// everything `moon check` and `moon graph` do with a file — the libyaml
/// loader, the graph decoder and validator, the diagnostic renderer (which
/// quotes source lines under a caret), planning and every graph format.
/// Any trap, crash, hang or sanitizer report is a bug: DESIGN.md §4 promises
/// that no input makes moon crash.
///
/// Built only with `MOON_FUZZ=1` (see `fuzz/run.sh`), so ordinary builds
/// never link libFuzzer.
enum MoonFuzz {
    static func testOneInput(_ bytes: UnsafeBufferPointer<UInt8>) {
        let source = SourceFile(path: "fuzz.yaml", bytes: Array(bytes))
        let result = GraphLoader.load(source, overrides: ["fuzz": "1"])
        _ = DiagnosticRenderer(color: true).render(result.diagnostics, source: source)
        guard let graph = result.graph else { return }
        guard let plan = try? Plan.make(graph: graph) else { return }
        for format in GraphRenderer.Format.allCases {
            _ = GraphRenderer.render(plan, format: format)
        }
        _ = GraphRenderer.dryRun(plan)
        if let first = graph.nodes.first, let subset = try? Plan.make(graph: graph, targets: [first.name]) {
            _ = subset.criticalPath
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    MoonFuzz.testOneInput(UnsafeBufferPointer(start: data, count: size))
    return 0
}

/// The executable's `main`: hands control to libFuzzer's driver, which
/// parses the usual libFuzzer flags (`-max_total_time=60 corpus/`).
@_cdecl("MoonFuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        fuzzTestOneInput(data, size)
    }
}
