import Foundation
import MoonDocument
@testable import MoonGraph

/// Decodes a builder document (through `YAMLLayout`, not the YAML loader).
func decode(_ document: Y, path: String = "graph.yaml", overrides: [String: String] = [:]) -> GraphLoadResult {
    let (_, root) = YAMLLayout.render(document, file: path)
    return GraphLoader.decode(root, path: path, overrides: overrides)
}

/// `line:column: severity: message` for each diagnostic: compact and exact.
func lines(_ result: GraphLoadResult) -> [String] {
    result.diagnostics.map(line)
}

func line(_ d: Diagnostic) -> String {
    let place = d.span.map { "\($0.start.line):\($0.start.column): " } ?? ""
    return "\(place)\(d.severity): \(d.message)"
}

/// A valid graph from a builder document; records an issue otherwise.
func graph(_ document: Y, path: String = "graph.yaml", overrides: [String: String] = [:]) -> Graph? {
    decode(document, path: path, overrides: overrides).graph
}

/// A document with `version: 1` and these nodes.
func doc(_ nodes: Y, extra: [(String, Y)] = []) -> Y {
    .map([("version", 1)] + extra + [("nodes", nodes)])
}

/// Whether the real YAML loader is in this build (the stub always throws).
let loaderWorks: Bool = {
    (try? YAMLLoader.load(SourceFile(path: "probe.yaml", text: "a: 1\n"))) != nil
}()

func load(_ text: String, path: String = "graph.yaml", overrides: [String: String] = [:]) -> GraphLoadResult {
    GraphLoader.load(SourceFile(path: path, text: text), overrides: overrides)
}

/// Runs `body` on a thread of its own with a `stackSize`-byte stack and
/// awaits its result without holding a thread of the test runner.
///
/// Why: the suite's tests run on Swift's cooperative pool, as many threads
/// as CPUs. A heavy synchronous test holds one of them for seconds, and
/// every test that awaits something (a process, a timer) waits behind it,
/// long enough to trip a hang guard elsewhere. On its own thread the work
/// shares the CPUs with the rest instead of blocking it. The small stack makes "no
/// recursion over the nodes" a sharper check: 20,000 frames of a recursive
/// function of a debug build (rarely under 100 bytes) do not fit in 512 KiB.
///
/// Expectations belong outside `body` (on the test's task, where the testing
/// library attributes them), so `body` returns what the test checks.
func onOwnThread<T: Sendable>(stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = stackSize
        thread.start()
    }
}
