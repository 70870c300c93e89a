import MoonDocument

/// One need written `:NAME` (go-task's `:task`): a node of the root graph,
/// the file `moon` was given, whichever file writes it. An included file
/// cannot see the root's nodes while it is analyzed on its own, so the need
/// waits, carried up through every includer, until the root resolves it.
public struct RootNeed: Sendable, Codable {
    /// The nodes that need it (a template's instances), as indices of the
    /// graph that carries it; shifted as includes are merged.
    public var nodes: Range<Int>
    /// NAME, without the leading `:`.
    public var name: String
    public var span: SourceSpan
}

/// Collects the `:NAME` needs of a graph being analyzed (its includes' and
/// its own), then either resolves them (the root graph) or hands them to
/// the includer (`Graph.rootNeeds`).
struct RootNeeds {
    private(set) var pending: [RootNeed] = []

    /// The included graphs' unresolved root needs, at their merged positions
    /// (`IncludeMerger` puts each include's nodes after the previous one's).
    init(included: [IncludedGraph]) {
        var offset = 0
        for include in included {
            for var need in include.graph.rootNeeds {
                need.nodes = (need.nodes.lowerBound + offset)..<(need.nodes.upperBound + offset)
                pending.append(need)
            }
            offset += include.graph.nodes.count
        }
    }

    /// This file's own `:NAME` needs, at the positions `index` and `ranges`
    /// give its nodes (a template: all its instances).
    mutating func add(_ templates: [Node], _ references: [NodeReferences], index: [String: Int], ranges: [String: Range<Int>]) {
        // By position: most nodes have none, and a copy of each reference would cost on large graphs.
        for t in references.indices where !references[t].rootNeeds.isEmpty {
            let name = templates[t].name
            guard let nodes = ranges[name] ?? index[name].map({ $0..<$0 + 1 }) else { continue }
            for need in references[t].rootNeeds { pending.append(RootNeed(nodes: nodes, name: String(need.name.dropFirst()), span: need.span)) }
        }
    }

    /// In the root graph: adds each need to the needs of its nodes; an
    /// unknown name is an error with a suggestion among the root's nodes.
    func resolve(into nodes: inout [Node], names: [String], index: [String: Int], ranges: [String: Range<Int>],
                 failedIncludes: Set<String>, diagnostics: inout [Diagnostic]) {
        for need in pending {
            // A node of an include that could not be read: that error says it.
            if let colon = need.name.firstIndex(of: ":"), failedIncludes.contains(String(need.name[..<colon])) { continue }
            let targets: Range<Int>
            if let range = ranges[need.name] {
                targets = range
            } else if let target = index[need.name] {
                targets = target..<target + 1
            } else {
                let hint = Suggestion.closest(to: need.name, in: ranges.keys.sorted() + names).map { " (did you mean ':\($0)'?)" } ?? ""
                let owner = nodes[need.nodes.lowerBound]
                // Read as the root itself (moon run in the included file's directory), its ':NAME' finds nothing.
                let help = owner.namespace.isEmpty
                    ? "help: this file is the root graph of this run, so ':\(need.name)' names one of its own nodes; to run it as an include, give moon the file that includes it (moon run ../moon.yaml …)"
                    : "help: ':NAME' names a node of the root graph file (the one moon reads first), from any included file"
                diagnostics.append(Diagnostic(.error, "node '\(owner.name)' needs unknown root node ':\(need.name)'\(hint)",
                                              at: need.span, notes: [help]))
                continue
            }
            if targets.overlaps(need.nodes) {
                diagnostics.append(Diagnostic(.error, "node '\(nodes[need.nodes.lowerBound].name)' needs itself; remove ':\(need.name)' from its needs",
                                              at: need.span))
                continue
            }
            for node in need.nodes where !nodes[node].needs.contains(where: targets.contains) {
                nodes[node].needs += targets
            }
        }
    }
}
