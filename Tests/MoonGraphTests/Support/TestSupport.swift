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
