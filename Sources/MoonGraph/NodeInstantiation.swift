extension Node {
    /// This template as the instance `instance` (`template[label]`), or
    /// (with nil) as the one node it is: `vars`, `item` and `matrix` are
    /// put into `sources`, `generates` and `depfile`, which are read before
    /// the node runs and are paths, never shell. `run`, `env`, `with` and
    /// `dir` keep their expressions: the Interpolator reads the instance's
    /// values when the node runs. Used by the loader for static fan-out
    /// and at run time for a dynamic one.
    public func instantiated(_ instance: NodeInstance?, vars: Variables) -> Node {
        NodeTemplate(self).instantiated(instance, vars: vars)
    }

    /// Whether `sources`, `generates` or `depfile` hold `${{ … }}`: a node
    /// without any is its own instance, with nothing to put in.
    var hasPathExpressions: Bool {
        sources.contains(where: Template.containsExpression) || generates.contains(where: Template.containsExpression)
            || depfile.map(Template.containsExpression) == true
    }
}

extension Graph {
    /// The instances of node `index`, a `for-each` over a need's output,
    /// one per item, as the run makes them once the need has completed
    /// (the launcher runs them, the up-to-date check fingerprints them).
    public func instances(ofDynamic index: Int, items: [String]) -> [Node] {
        let node = nodes[index]
        let template = NodeTemplate(node)
        let vars = node.vars ?? self.vars
        return items.map { template.instantiated(NodeInstance(template: node.name, label: $0, item: $0), vars: vars) }
    }
}

/// A node's `sources`, `generates` and `depfile` parsed once, for making
/// many instances of it: each instance then only joins text.
public struct NodeTemplate: Sendable {
    public let node: Node
    private let sources: [Template?]
    private let generates: [Template?]
    private let depfile: Template?

    public init(_ node: Node) {
        self.node = node
        sources = node.sources.map(Self.parse)
        generates = node.generates.map(Self.parse)
        depfile = node.depfile.flatMap(Self.parse)
    }

    /// See `Node.instantiated`.
    public func instantiated(_ instance: NodeInstance?, vars: Variables) -> Node {
        var result = node
        if let instance {
            result.name = instance.name
            result.instance = instance
            // (A template's own `for-each` is rarely dynamic: leave the shared fields alone then.)
            if result.fanOut != nil { result.fanOut = nil }
        }
        for (i, template) in sources.enumerated() {
            if let template { result.sources[i] = Self.render(template, instance: instance, vars: vars) }
        }
        for (i, template) in generates.enumerated() {
            if let template { result.generates[i] = Self.render(template, instance: instance, vars: vars) }
        }
        // A depfile is a path, not a pattern: nothing to escape.
        if let depfile { result.depfile = Self.render(depfile, instance: instance, vars: vars, pattern: false) }
        return result
    }

    /// The length in bytes of the longest of this instance's `sources`,
    /// `generates` and `depfile`, counted without making them: a path that
    /// repeats a long var is refused before it exists.
    public func longestPath(_ instance: NodeInstance?, vars: Variables) -> Int {
        var longest = 0
        for template in sources + generates + [depfile] {
            guard let template else { continue }
            var length = 0
            for part in template.parts {
                switch part {
                case .literal(let literal): length += literal.utf8.count
                case .expression(let e):
                    switch e.reference {
                    case .variable(let name): length += (vars[name] ?? e.raw).utf8.count
                    case .item(let part): length += (instance?.item.map(part.of) ?? e.raw).utf8.count
                    case .matrix(let key): length += instance.map { $0.matrix[key] ?? "" }?.utf8.count ?? e.raw.utf8.count
                    default: length += e.raw.utf8.count
                    }
                }
            }
            longest = max(longest, length)
        }
        return longest
    }

    /// nil for text without expressions (kept as it is).
    private static func parse(_ text: String) -> Template? {
        Template.containsExpression(text) ? Template.parse(text).template : nil
    }

    /// The text with each `${{ vars.NAME }}`, `${{ item… }}` and
    /// `${{ matrix.KEY }}` replaced by its value; any other expression is
    /// left as written. An item or a matrix value is a file name, never a
    /// pattern (`pages/[id].tsx`): its glob characters are escaped. A var
    /// is put in as written, so a var may hold a pattern (`src/**/*.c`).
    static func render(_ template: Template, instance: NodeInstance?, vars: Variables, pattern: Bool = true) -> String {
        let insert: (String) -> String = pattern ? literalPattern : { $0 }
        var out = ""
        for part in template.parts {
            switch part {
            case .literal(let literal): out += literal
            case .expression(let e):
                switch e.reference {
                case .variable(let name): out += vars[name] ?? e.raw
                case .item(let part): out += instance?.item.map { insert(part.of($0)) } ?? e.raw
                case .matrix(let key): out += instance.map { insert($0.matrix[key] ?? "") } ?? e.raw
                default: out += e.raw
                }
            }
        }
        return out
    }

    /// `text` as a `sources`/`generates` pattern that matches only itself:
    /// `\` before each character the pattern syntax reads (`*`, `?`, `[`,
    /// `]`, `\`, and `!`, which starts an exclusion).
    public static func literalPattern(_ text: String) -> String {
        guard text.utf8.contains(where: { Self.special.contains($0) }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if special.contains(byte) { out.append(UInt8(ascii: "\\")) }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let special: Set<UInt8> = Set("*?[]\\!".utf8)
}
