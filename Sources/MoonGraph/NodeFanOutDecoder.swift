import MoonDocument

/// The keys that make one node many: `for-each` (a list, a glob, or a
/// need's output) and `matrix`, and the node's `params:`. What they expand
/// to is decided by `FanOutExpander` once the vars are known.
extension NodeDecoder {
    func fanOut(of name: String, keys: ValueDecoding.CheckedKeys, _ values: inout ValueDecoding) -> FanOutDeclaration? {
        let forEach = keys["for-each"], matrix = keys["matrix"]
        if forEach != nil, let matrix {
            values.error("node '\(name)' has both 'for-each' and 'matrix'; keep one (a matrix of one key is a for-each over its values)",
                         at: matrix.key.span)
            return nil
        }
        if let forEach, !forEach.value.isNull { return self.forEach(forEach.value, &values) }
        if let matrix, !matrix.value.isNull { return self.matrix(matrix.value, &values) }
        return nil
    }

    private func forEach(_ value: YAMLNode, _ values: inout ValueDecoding) -> FanOutDeclaration? {
        switch value.kind {
        case .sequence(let list):
            var items: [(String, SourceSpan)] = []
            for element in list {
                if let text = values.string(element, expecting: "a string (one item)", allowNull: false) { items.append((text, element.span)) }
            }
            return .list(items, span: value.span)
        case .mapping(let pairs):
            let keys = values.checkKeys(pairs, allowed: GraphKeys.forEach, context: "in for-each")
            guard let g = keys["glob"], let pattern = values.string(g.value, expecting: "a glob such as src/*.c", allowNull: false) else {
                if keys["glob"] == nil { values.error("for-each needs 'glob' (files relative to the graph file), or write a list of items", at: value.span) }
                return nil
            }
            if pattern.isEmpty {
                values.error("an empty glob; write a pattern such as src/*.c", at: g.value.span)
                return nil
            }
            let exclude = keys["exclude"].flatMap { values.strings($0.value, expecting: "a glob or a list of globs", item: "a glob") } ?? []
            let allowEmpty = keys["allow-empty"].flatMap { values.bool($0.value, key: "allow-empty") } ?? false
            return .glob(pattern: pattern, exclude: exclude, allowEmpty: allowEmpty, span: g.value.span)
        case .scalar(let text, _, _):
            let (template, problems) = Template.parse(text)
            if problems.isEmpty, template.parts.count == 1, case .expression(let expression) = template.parts[0],
               case .output(let node, let key) = expression.reference {
                return .dynamic(node: node, key: key, span: value.span)
            }
            let glob = text.contains(where: { "*?[".contains($0) })
            values.error("expected a list, {glob, exclude, allow-empty} or ${{ needs.NODE.outputs.KEY }} for 'for-each', found \(values.describe(value))",
                         at: value.span, notes: [glob ? "help: for one instance per file the glob matches, write for-each: {glob: \"\(text)\"}"
                                                      : "help: write the items as a YAML list, [a, b], even for one item"])
            // Still a fan-out, so that its ${{ item }} is not a second error.
            return .list([], span: value.span)
        }
    }

    private func matrix(_ value: YAMLNode, _ values: inout ValueDecoding) -> FanOutDeclaration? {
        guard let pairs = values.mapping(value, expecting: "a mapping of keys to lists of values ({os: [linux, mac]})") else { return nil }
        var matrix = MatrixDeclaration(span: value.span)
        // A key written with no values has its own error; "no keys" would be wrong then.
        var wroteKey = false
        for pair in pairs {
            guard let key = values.keyName(pair.key) else { continue }
            if key == "include" || key == "exclude" {
                let entries = combinations(pair.value, what: key, &values)
                if key == "include" { matrix.include = entries } else { matrix.exclude = entries }
                continue
            }
            guard ValueDecoding.isIdentifier(key, allowDash: true) else {
                values.error("invalid matrix key '\(key)'; keys start with a letter or '_' and contain only letters, digits, '_' and '-'", at: pair.key.span)
                continue
            }
            if case .sequence(let list) = pair.value.kind, list.isEmpty {
                wroteKey = true
                values.error("matrix key '\(key)' has no values; give it at least one", at: pair.value.span,
                             notes: ["help: write its values as a list, e.g. \(key): [a, b], or remove the key"])
                continue
            }
            guard case .sequence(let list) = pair.value.kind else {
                values.error("expected a non-empty list of values for matrix key '\(key)', found \(values.describe(pair.value))", at: pair.value.span,
                             notes: ["help: write the values as a list, e.g. \(key): [a, b]"])
                continue
            }
            matrix.keys.append(key)
            matrix.values.append(list.compactMap { values.string($0, expecting: "a string, number or boolean", allowNull: false) })
        }
        if matrix.keys.isEmpty && matrix.include.isEmpty && !wroteKey {
            values.error("the matrix has no keys; add KEY: [VALUE, …]", at: value.span)
            return nil
        }
        for entry in matrix.exclude {
            for name in entry.names where !matrix.keys.contains(name) {
                values.error("exclude names matrix key '\(name)', which the matrix does not have\(Suggestion.clause(for: name, in: matrix.keys))", at: value.span)
            }
        }
        return .matrix(matrix)
    }

    /// The entries of `include` or `exclude`: a list of {KEY: VALUE} mappings.
    private func combinations(_ value: YAMLNode, what: String, _ values: inout ValueDecoding) -> [Variables] {
        guard case .sequence(let list) = value.kind else {
            values.error("expected a list of {KEY: VALUE} mappings for '\(what)', found \(values.describe(value))", at: value.span)
            return []
        }
        return list.map { values.variables($0, what: "matrix key", nameRule: .variable) }
    }

    /// `params: {NAME: {default: V} | {required: true, description: D} | V}`.
    func params(_ value: YAMLNode, _ values: inout ValueDecoding) -> [NodeParameter] {
        guard let pairs = values.mapping(value, expecting: "a mapping of parameter names to {default} or {required, description}") else { return [] }
        var result: [NodeParameter] = []
        for pair in pairs {
            guard let name = values.keyName(pair.key) else { continue }
            guard ValueDecoding.isIdentifier(name, allowDash: true) else {
                values.error("invalid parameter name '\(name)'; names start with a letter or '_' and contain only letters, digits, '_' and '-'", at: pair.key.span)
                continue
            }
            var parameter = NodeParameter(name: name, span: pair.key.span)
            if let body = pair.value.pairs {
                let keys = values.checkKeys(body, allowed: GraphKeys.parameter, context: "in parameter '\(name)'")
                parameter.defaultValue = keys["default"].flatMap { values.string($0.value, expecting: "a string, number or boolean") }
                parameter.required = keys["required"].flatMap { values.bool($0.value, key: "required") } ?? false
                parameter.description = keys["description"].flatMap { values.string($0.value, expecting: "a description") }
                if parameter.required, let d = keys["default"] {
                    values.error("parameter '\(name)' is required and has a default; remove one", at: d.key.span)
                } else if !parameter.required, parameter.defaultValue == nil {
                    values.error("parameter '\(name)' has neither a default nor 'required: true'; add 'default: VALUE' or 'required: true'", at: pair.key.span)
                }
            } else if let text = values.string(pair.value, expecting: "{default: VALUE}, {required: true, description: TEXT} or a default value", allowNull: false) {
                parameter.defaultValue = text
            }
            result.append(parameter)
        }
        return result
    }
}
