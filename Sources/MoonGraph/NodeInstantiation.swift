extension Node {
    /// This template as the instance `instance` (`template[label]`), or
    /// (with nil) as the one node it is: `vars`, `item` and `matrix` are
    /// put into `sources`, `generates` and `depfile`, which are read before
    /// the node runs and are paths, never shell. `run`, `env`, `with` and
    /// `dir` keep their expressions: the Interpolator reads the instance's
    /// values when the node runs. Used by the loader for static fan-out
    /// and at run time for a dynamic one.
    public func instantiated(_ instance: NodeInstance?, vars: Variables) -> Node {
        var node = self
        if let instance {
            node.name = instance.name
            node.instance = instance
            node.fanOut = nil
        }
        node.sources = sources.map { Self.substitute($0, instance: instance, vars: vars) }
        node.generates = generates.map { Self.substitute($0, instance: instance, vars: vars) }
        node.depfile = depfile.map { Self.substitute($0, instance: instance, vars: vars) }
        return node
    }

    /// `text` with each `${{ vars.NAME }}`, `${{ item… }}` and `${{ matrix.KEY }}`
    /// replaced by its value; any other expression is left as written.
    static func substitute(_ text: String, instance: NodeInstance?, vars: Variables) -> String {
        guard Template.containsExpression(text) else { return text }
        var out = ""
        for part in Template.parse(text).template.parts {
            switch part {
            case .literal(let literal): out += literal
            case .expression(let e):
                switch e.reference {
                case .variable(let name): out += vars[name] ?? e.raw
                case .item(let part): out += instance?.item.map(part.of) ?? e.raw
                case .matrix(let key): out += instance.map { $0.matrix[key] ?? "" } ?? e.raw
                default: out += e.raw
                }
            }
        }
        return out
    }
}
