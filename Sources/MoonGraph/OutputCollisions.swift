import MoonDocument

/// Each output has one writer: two nodes, or two instances of a fan-out,
/// that declare the same `generates` path are an error at load (the second
/// one, at its pattern), since they would overwrite each other and share a
/// cache entry's files. The usual cause is an instance path without its
/// item (`out/all.txt`, or Snakemake's `{item}`, which moon takes as text).
/// A `for-each` node that never reads `${{ item }}` runs one command N
/// times: a warning.
struct OutputCollisions {
    /// The problems of this file's nodes, `made` (laid out per template as
    /// `instances` says: nil for a template that is one node), against each
    /// other and the included files' nodes, `included`.
    static func check(made: [Node], templates: [Node], instances: [[NodeInstance]?], references: [NodeReferences],
                      included: [Node]) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for (t, reference) in references.enumerated() {
            if let warning = unusedItem(reference, name: templates[t].name) { diagnostics.append(warning) }
        }
        guard made.count == instances.reduce(0, { $0 + ($1?.count ?? 1) }) else { return diagnostics }
        // Output path -> the node that declared it first, and its template (-1: an included node).
        var writers: [String: (name: String, template: Int)] = [:]
        for node in included {
            for pattern in node.generates where !pattern.hasPrefix("!") {
                if let key = key(pattern), writers[key] == nil { writers[key] = (node.name, -1) }
            }
        }
        var position = 0
        for (t, laid) in instances.enumerated() {
            let count = laid?.count ?? 1
            var reported = false
            for node in made[position..<position + count] {
                for (k, pattern) in node.generates.enumerated() where !pattern.hasPrefix("!") {
                    guard let key = key(pattern) else { continue }
                    guard let other = writers[key] else { writers[key] = (node.name, t); continue }
                    guard other.name != node.name, !reported else { continue }
                    reported = true
                    var diagnostic = collision(node: node, other: other.name, pattern: pattern,
                                               written: span(of: k, in: references[t].generates), sameTemplate: other.template == t)
                    diagnostic.node = templates[t].name
                    diagnostics.append(diagnostic)
                }
            }
            position += count
        }
        return diagnostics
    }

    private static func collision(node: Node, other: String, pattern: String, written: (span: SourceSpan, text: String)?,
                                  sameTemplate: Bool) -> Diagnostic {
        var notes: [String] = []
        if sameTemplate {
            if let fixed = fixedPlaceholders(written?.text ?? pattern) {
                notes.append("help: moon reads an item as ${{ item }}, not {item}: write '\(fixed)'")
            } else {
                notes.append("help: each instance must write its own files: put its item in the path (${{ item }}, ${{ item.stem }}, …; ${{ matrix.KEY }} in a matrix)")
            }
        } else {
            notes.append("help: give each node its own output; if '\(node.name)' reads what '\(other)' writes, list that in its sources and need '\(other)'")
        }
        return Diagnostic(.error, "node '\(node.name)' generates '\(pattern)', which node '\(other)' generates too; an output has one writer",
                          at: written?.span ?? node.nameSpan, notes: notes)
    }

    /// The `k`th pattern of `generates` as written, with its place.
    private static func span(of k: Int, in generates: YAMLNode?) -> (span: SourceSpan, text: String)? {
        guard let generates else { return nil }
        switch generates.kind {
        case .sequence(let items) where k < items.count:
            if case .scalar(let text, _, _) = items[k].kind { return (items[k].span, text) }
            return (items[k].span, "")
        case .scalar(let text, _, _): return (generates.span, text)
        default: return nil
        }
    }

    /// Snakemake's `{item}`/`{item.stem}` rewritten as moon's `${{ item }}`; nil when there is none.
    static func fixedPlaceholders(_ text: String) -> String? {
        var out = ""
        var rest = Substring(text)
        var found = false
        while let open = rest.firstIndex(of: "{") {
            let before = rest[..<open]
            let after = rest[rest.index(after: open)...]
            if !before.hasSuffix("$"), !before.hasSuffix("{"), let close = after.firstIndex(of: "}") {
                let inner = after[..<close]
                if inner == "item" || inner.hasPrefix("item.") || inner.hasPrefix("matrix.") {
                    out += before + "${{ " + inner + " }}"
                    rest = after[after.index(after: close)...]
                    found = true
                    continue
                }
            }
            out += rest[...open]
            rest = after
        }
        return found ? out + rest : nil
    }

    /// The path a pattern names, normalized (`./out//a` is `out/a`), or the
    /// pattern itself when it has wildcards; nil for the graph's directory.
    static func key(_ pattern: String) -> String? {
        var parts: [Substring] = []
        for part in pattern.split(separator: "/", omittingEmptySubsequences: true) where part != "." {
            if part == "..", let last = parts.last, last != ".." { parts.removeLast() } else { parts.append(part) }
        }
        guard !parts.isEmpty else { return nil }
        return (pattern.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
    }

    /// A warning for a `for-each` node whose run, env, with, dir, sources,
    /// generates and depfile never read `${{ item }}`.
    private static func unusedItem(_ reference: NodeReferences, name: String) -> Diagnostic? {
        let span: SourceSpan
        switch reference.fanOut {
        case .list(_, let at)?: span = at
        case .glob(_, _, _, let at)?: span = at
        case .dynamic(_, _, let at)?: span = at
        default: return nil
        }
        var placeholder = false
        for value in [reference.run, reference.env, reference.with, reference.dir, reference.sources, reference.generates, reference.depfile] {
            guard let value else { continue }
            if readsItem(value, placeholder: &placeholder) { return nil }
        }
        let what = "node '\(name)'"
        var notes = ["help: read the item as ${{ item }} (or item.name, item.stem, item.ext, item.dir) in its run and generates, so that each instance does its own work"]
        if placeholder { notes.insert("help: moon reads an item as ${{ item }}, not {item}", at: 0) }
        var diagnostic = Diagnostic(.warning, "\(what) has 'for-each' but never reads ${{ item }}: every instance runs the same command", at: span, notes: notes)
        diagnostic.node = name
        return diagnostic
    }

    private static func readsItem(_ node: YAMLNode, placeholder: inout Bool) -> Bool {
        switch node.kind {
        case .scalar(let text, _, _):
            if !placeholder, fixedPlaceholders(text) != nil { placeholder = true }
            guard Template.containsExpression(text) else { return false }
            return Template.parse(text).template.expressions.contains { if case .item = $0.reference { return true } else { return false } }
        case .sequence(let items):
            return items.contains { readsItem($0, placeholder: &placeholder) }
        case .mapping(let pairs):
            return pairs.contains { readsItem($0.value, placeholder: &placeholder) }
        }
    }
}
