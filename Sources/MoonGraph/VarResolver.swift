import MoonDocument

/// Resolves vars that use other vars (`OUT: build/${{ vars.MODE }}`), in
/// any order, once, before anything reads them: a var's value is data, so
/// its text is substituted. A list var read inside a longer string reads
/// as its items joined by spaces; an item that is exactly one list var
/// becomes that list's items. A cycle is an error at the first var of it,
/// naming the cycle.
struct VarResolver {
    private(set) var diagnostics: [Diagnostic] = []
    private var vars: Variables
    /// Vars taken as they are (`--set` values and an includer's values).
    private let literal: Set<String>
    /// Where each var's value is written, for messages.
    private let spans: [String: SourceSpan]
    private var state: [String: Bool] = [:]  // false: being resolved, true: done
    private var path: [String] = []

    init(vars: Variables, literal: Set<String>, declaration: YAMLNode?) {
        self.vars = vars
        self.literal = literal
        var spans: [String: SourceSpan] = [:]
        if let pairs = declaration?.pairs {
            for pair in pairs { if let name = pair.key.scalar { spans[name] = pair.key.span } }
        }
        self.spans = spans
    }

    mutating func resolve() -> Variables {
        for name in vars.names { resolve(name) }
        return vars
    }

    private mutating func resolve(_ name: String) {
        if state[name] != nil || literal.contains(name) { return }
        guard let entry = vars.entries.first(where: { $0.name == name }) else { return }
        let texts = entry.items ?? [entry.value]
        guard texts.contains(where: Template.containsExpression) else { state[name] = true; return }
        state[name] = false
        path.append(name)
        defer { path.removeLast(); state[name] = true }
        var items: [String] = []
        for text in texts {
            guard let (template, whole) = parse(text, of: name) else { return }
            if entry.items != nil, let whole, let list = vars.items(whole) {
                items += list
                continue
            }
            var out = ""
            for part in template.parts {
                switch part {
                case .literal(let literal): out += literal
                case .expression(let expression):
                    guard case .variable(let other) = expression.reference else { continue }
                    out += vars[other] ?? ""
                }
            }
            items.append(out)
        }
        if entry.items != nil { vars.setList(name, items) } else { vars[name] = items.first ?? "" }
    }

    /// The template of one value, its vars resolved first; with the name of
    /// the var it consists of alone, if it does. nil after an error.
    private mutating func parse(_ text: String, of name: String) -> (Template, String?)? {
        let (template, problems) = Template.parse(text)
        let span = spans[name]
        if let problem = problems.first {
            diagnostics.append(.error("in var '\(name)': \(problem.message)", at: span))
            return nil
        }
        for expression in template.expressions {
            guard case .variable(let other) = expression.reference else {
                diagnostics.append(.error("var '\(name)' reads \(expression.raw); a var can only read other vars",
                                          at: span, notes: ["help: read it where the var is used, in run, env, with or dir"]))
                return nil
            }
            guard vars[other] != nil else {
                diagnostics.append(.error("var '\(name)' reads undeclared var '\(other)'\(Suggestion.clause(for: other, in: vars.names))", at: span))
                return nil
            }
            if state[other] == false {
                let start = path.firstIndex(of: other) ?? 0
                let cycle = Array(path[start...]) + [other]
                diagnostics.append(.error("vars use each other in a cycle: \(cycle.joined(separator: " -> "))", at: spans[other] ?? span,
                                          notes: ["help: one of these vars must be written without the others"]))
                return nil
            }
            resolve(other)
        }
        let whole: String?
        if template.parts.count == 1, case .expression(let e) = template.parts[0], case .variable(let other) = e.reference { whole = other } else { whole = nil }
        return (template, whole)
    }
}
