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
    /// Vars whose value passed a bound: a var reading one fails without another error.
    private var oversized: Set<String> = []
    private var path: [String] = []
    private let budget: ExpansionBudget

    init(vars: Variables, literal: Set<String>, declaration: YAMLNode?, budget: ExpansionBudget = ExpansionBudget()) {
        self.vars = vars
        self.literal = literal
        self.budget = budget
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
        // The value's size is checked before each piece is added, so that a
        // var doubling its predecessor stops before the huge value exists.
        var size = Size(name: name, span: spans[name])
        for text in texts {
            guard let (template, whole) = parse(text, of: name) else { return }
            if entry.items != nil, let whole, let list = vars.items(whole) {
                guard size.add(items: list.count, bytes: vars[whole]?.utf8.count ?? 0, &diagnostics) else { oversized.insert(name); return }
                items += list
                continue
            }
            guard size.add(items: 1, bytes: 0, &diagnostics) else { oversized.insert(name); return }
            var out = ""
            for part in template.parts {
                let piece: String
                switch part {
                case .literal(let literal): piece = literal
                case .expression(let expression):
                    guard case .variable(let other) = expression.reference else { continue }
                    piece = vars[other] ?? ""
                }
                guard size.add(items: 0, bytes: piece.utf8.count, &diagnostics) else { oversized.insert(name); return }
                out += piece
            }
            items.append(out)
        }
        guard spend(size.bytes, name: name) else { oversized.insert(name); return }
        if entry.items != nil { vars.setList(name, items) } else { vars[name] = items.first ?? "" }
    }

    /// Counts a var's substituted bytes against the whole graph's budget.
    private mutating func spend(_ bytes: Int, name: String) -> Bool {
        guard !budget.varsExhausted else { return false }
        budget.varBytes += bytes
        guard budget.varBytes > ExpansionLimit.allVarBytes else { return true }
        budget.varsExhausted = true
        diagnostics.append(.error("the vars of this graph are longer than \(ByteSize.text(Int64(ExpansionLimit.allVarBytes))) in all once substituted, at var '\(name)'",
                                  at: spans[name], notes: [Size.help]))
        return false
    }

    /// The size of one var's value while it is built.
    private struct Size {
        let name: String
        let span: SourceSpan?
        var items = 0
        var bytes = 0
        static let help = "help: a var that reads another var repeats its whole value; read the long value where it is used (in run or with) instead of building it in vars"

        /// false, with the error at the var, once a bound is passed.
        mutating func add(items more: Int, bytes added: Int, _ diagnostics: inout [Diagnostic]) -> Bool {
            // A list's items are joined by a space where it reads as text.
            bytes += added + (more > 0 && items > 0 ? more : 0)
            items += more
            if items > ExpansionLimit.varItems {
                diagnostics.append(.error("var '\(name)' has more than \(ExpansionLimit.varItems) items once the list vars it reads are spliced in",
                                          at: span, notes: [Self.help]))
                return false
            }
            if bytes > ExpansionLimit.varBytes {
                diagnostics.append(.error("var '\(name)' is longer than \(ByteSize.text(Int64(ExpansionLimit.varBytes))) once the vars it reads are substituted",
                                          at: span, notes: [Self.help]))
                return false
            }
            return true
        }
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
            if oversized.contains(other) {
                oversized.insert(name)
                return nil
            }
        }
        let whole: String?
        if template.parts.count == 1, case .expression(let e) = template.parts[0], case .variable(let other) = e.reference { whole = other } else { whole = nil }
        return (template, whole)
    }
}
