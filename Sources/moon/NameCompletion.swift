import Foundation
import MoonGraph

/// Shell completion of `[FILE] [NODE...]`: the scripts that
/// `moon --generate-completion-script bash|zsh|fish` writes call moon back
/// on TAB (argument-parser's `---completion`), and moon answers from the
/// graph it would read: node names, instance names, and after a node its
/// parameters as `NAME=`. It prints nothing when there is no valid graph:
/// a completion never writes an error over the user's command line.
enum NameCompletion {
    /// `words` is the command line up to the cursor, `index` the word being completed, `prefix` its start.
    @Sendable static func complete(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let before = words.prefix(min(max(index, 0), words.count))
        if before.contains("--") { return [] }
        // The graph named on the command line, else the one moon would find.
        let named = before.dropFirst(2).first { !$0.hasPrefix("-") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) }
        guard let path = named ?? GraphFileLocator.discovered(),
              let parsed = try? GraphFile.parse(path), !parsed.result.hasErrors, let graph = parsed.result.graph else { return [] }
        var candidates = names(in: graph)
        // After a node (not after its `=` words), its parameters.
        if let last = before.dropFirst(2).last(where: { !$0.contains("=") && !$0.hasPrefix("-") }),
           let node = graph.targets(named: last)?.first.map({ graph.nodes[$0] }) {
            candidates += node.params.map { $0.name + "=" }
        }
        return candidates.filter { $0.hasPrefix(prefix) }
    }

    /// What `moon list --names` prints: every name the command line can
    /// select, in file order, a fan-out's name before its instances.
    static func names(in graph: Graph) -> [String] {
        NodeSelection.selectableNames(in: graph)
    }
}
