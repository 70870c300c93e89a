import MoonDocument

/// What `moon check` can know of `${{ … }}` before anything runs: the
/// expression is well formed, the node it reads is a direct need, the var is
/// declared, and in a shell script it sits where moon can quote it. Each
/// problem points at the expression inside its string (`file:line:col`).
struct ExpressionChecker {
    /// Where expressions are checked: which needs they may read.
    struct Scope {
        /// The node's direct needs, as positions in `names`; nil where
        /// `needs` is not available (graph `env`, `defaults`). Kept as
        /// positions so that a scope costs nothing to make for the many
        /// nodes without an expression.
        var needs: [Int]?
        /// The graph's node names, which `needs` index.
        var names: [String] = []
        /// The node, or what else holds the value ("the graph's env") — for messages.
        var ownerNode: String?
        var ownerText: String = ""

        init(needs: [Int]?, names: [String] = [], owner: String) {
            self.needs = needs
            self.names = names
            self.ownerText = owner
        }

        init(needs: [Int], names: [String], node: String) {
            self.needs = needs
            self.names = names
            self.ownerNode = node
        }

        /// "node 'deploy'", "the graph's env".
        var owner: String { ownerNode.map { "node '\($0)'" } ?? ownerText }
        /// Whether `item` may be read: the node has a `for-each`.
        var forEach = false
        /// The keys `matrix.KEY` may read; nil when the node has no `matrix`.
        var matrixKeys: [String]? = nil
        /// The names `params.NAME` may read; nil outside a node.
        var params: [String]? = nil
        /// The key of a value read before the node runs (`sources`,
        /// `generates`, `depfile`), which only vars, item and matrix can fill.
        var staticKey: String? = nil
    }

    let source: SourceFile?
    let vars: Set<String>
    let nodes: [String]
    /// The names under `secrets:`.
    var secrets: [String] = []
    /// Every var an expression reads, declared or not: a `--set` of a var
    /// that is neither declared nor read is most likely a typo.
    private(set) var usedVars: Set<String> = []

    /// Diagnostics for one scalar (nothing unless it holds `${{`); `shell`
    /// is set for a shell-form `run`, whose quoting contexts are checked too.
    /// `refusal`, when set, is why any expression in this scalar would be
    /// code (the script of an exec-form `sh -c`, an `env:` PS4).
    mutating func check(_ node: YAMLNode, scope: Scope, shell: Shell? = nil, refusal: String? = nil) -> [Diagnostic] {
        guard case .scalar(let text, let style, _) = node.kind, Template.containsExpression(text) else { return [] }
        let (template, problems) = Template.parse(text)
        // Every expression is an item, with or without a problem, so the
        // locator steps over the valid ones on its way to the next problem.
        var found: [(offset: Int, length: Int, problems: [(String, [String])])] = problems.map { ($0.offset, $0.length, [($0.message, [])]) }
        let expressions = template.expressions
        // A malformed expression stays as literal `${{…` text, which would
        // mislead the shell lexer: lex a copy with each one replaced by `_`
        // (its valid expressions are the same, in the same order).
        let contexts = shell.map { shell -> [ShellContext] in
            guard !problems.isEmpty else { return ShellTemplate.contexts(of: template, shell: shell) }
            var scalars = Array(text.unicodeScalars)
            for problem in problems.sorted(by: { $0.offset > $1.offset }) {
                scalars.replaceSubrange(problem.offset..<min(problem.offset + problem.length, scalars.count), with: ["_"])
            }
            return ShellTemplate.contexts(of: Template.parse(String(String.UnicodeScalarView(scalars))).template, shell: shell)
        }
        var any = !problems.isEmpty
        for (k, expression) in expressions.enumerated() {
            if case .variable(let name) = expression.reference { usedVars.insert(name) }
            var messages: [(String, [String])] = []
            if let problem = problem(expression.reference, scope: scope) { messages.append(problem) }
            if let contexts, case .unsafe(let reason) = contexts[k] { messages.append((reason, [])) }
            if let refusal { messages.append((refusal, [])) }
            any = any || !messages.isEmpty
            found.append((expression.offset, expression.length, messages))
        }
        guard any else { return [] }
        found.sort { $0.offset < $1.offset }
        var locator = Locator(node: node, text: text, style: style, source: source)
        return found.flatMap { item in
            let span = locator.span(offset: item.offset, length: item.length)
            return item.problems.map { Diagnostic(.error, $0.0, at: span, notes: $0.1) }
        }
    }

    /// An `env:` mapping: a value is data, except in a variable that a
    /// shell reads as code (`PS4`, `BASH_ENV`, `BASH_FUNC_…`).
    mutating func check(env: YAMLNode, scope: Scope) -> [Diagnostic] {
        guard case .mapping(let pairs) = env.kind else { return [] }
        return pairs.flatMap { pair -> [Diagnostic] in
            guard case .scalar(let text, _, _) = pair.value.kind, Template.containsExpression(text) else { return [] }
            var refusal: String?
            if case .scalar(let key, _, _) = pair.key.kind, ShellCommands.evaluatesVariable(key) {
                refusal = ShellCommands.variableReason(key)
            }
            return check(pair.value, scope: scope, refusal: refusal)
        }
    }

    /// An exec-form `run`: each argument is data, except where the
    /// arguments before it make it code (`[sh, -c, …]`, `[flock, l, -c, …]`).
    mutating func check(exec run: YAMLNode, scope: Scope) -> [Diagnostic] {
        guard case .sequence(let items) = run.kind else { return [] }
        var words: [String] = []
        var diagnostics: [Diagnostic] = []
        for item in items {
            guard case .scalar(let text, _, _) = item.kind else { words.append(""); continue }
            if Template.containsExpression(text) { diagnostics += check(item, scope: scope, refusal: ShellCommands.codeReason(words)) }
            words.append(text)
        }
        return diagnostics
    }

    private func problem(_ reference: ExpressionReference, scope: Scope) -> (String, [String])? {
        if let key = scope.staticKey {
            switch reference {
            case .variable, .item, .matrix: break
            default:
                return ("'\(key)' is read before the node runs, so it can only use vars, item and matrix",
                        ["help: write the \(key == "needs" ? "node's name" : "path"), or build it from ${{ vars.NAME }}, ${{ item }} or ${{ matrix.KEY }}"])
            }
        }
        switch reference {
        case .output(let name, _), .result(let name):
            guard let needs = scope.needs.map({ $0.map { scope.names[$0] } }) else {
                return ("'needs' is not available in \(scope.owner); only a node's run, env, with and dir can read its needs", [])
            }
            if needs.contains(name) { return nil }
            if nodes.contains(name) {
                return ("\(scope.owner) reads '\(name)', which is not one of its needs",
                        ["help: add '\(name)' to its 'needs' (only direct needs can be read)"])
            }
            let hint = Suggestion.clause(for: name, in: needs.isEmpty ? nodes : needs)
            return ("\(scope.owner) reads unknown node '\(name)'\(hint)", [])
        case .variable(let name):
            if vars.contains(name) { return nil }
            return ("undeclared var '\(name)'\(Suggestion.clause(for: name, in: vars.sorted()))",
                    ["help: declare it under 'vars:', or pass --set \(name)=VALUE"])
        case .environment:
            return nil
        case .item:
            if scope.forEach { return nil }
            let help = scope.matrixKeys != nil ? "help: this node has a 'matrix'; read its values as ${{ matrix.KEY }}" : "help: add 'for-each:' to the node (a list, {glob: …} or ${{ needs.X.outputs.KEY }}) to run it once per item"
            return ("'item' is only available in a node with 'for-each'; \(scope.owner) has none", [help])
        case .matrix(let key):
            guard let keys = scope.matrixKeys else {
                return ("'matrix' is only available in a node with 'matrix'; \(scope.owner) has none",
                        ["help: add 'matrix:' to the node ({KEY: [VALUE, …]}) to run it once per combination"])
            }
            if keys.contains(key) { return nil }
            return ("unknown matrix key '\(key)'\(Suggestion.clause(for: key, in: keys))",
                    ["help: the keys of this matrix are \(keys.joined(separator: ", "))"])
        case .parameter(let name):
            guard let params = scope.params else {
                return ("'params' is only available in a node; \(scope.owner) has none", [])
            }
            if params.contains(name) { return nil }
            return ("undeclared parameter '\(name)'\(Suggestion.clause(for: name, in: params))",
                    ["help: declare it under the node's 'params:' ({default: VALUE} or {required: true, description: …})"])
        case .arguments:
            if scope.params != nil { return nil }
            return ("'args' is only available in a node; \(scope.owner) has none", [])
        case .secret(let name):
            // Only a node's own values: the run reads a secret for the nodes that use it, and no other node sees it.
            guard scope.ownerNode != nil else {
                return ("secrets are only available in a node's run, env, with and dir; \(scope.owner) cannot read them",
                        ["help: read ${{ secrets.\(name) }} in the env of each node that needs it"])
            }
            if secrets.contains(name) { return nil }
            return ("undeclared secret '\(name)'\(Suggestion.clause(for: name, in: secrets))",
                    ["help: declare it under 'secrets:' as \(name): {env: VARIABLE} or \(name): {file: PATH}"])
        }
    }

    /// Turns character offsets of a scalar's value into source spans. The
    /// expression's text is searched for in the file, inside the scalar's
    /// span, in order; this finds it in plain, quoted and block scalars alike
    /// (escapes in double quotes aside, where a single-line scalar falls back
    /// to counting columns and anything else to the scalar's start).
    struct Locator {
        let node: YAMLNode
        let scalars: [Unicode.Scalar]
        let style: YAMLNode.ScalarStyle
        let source: SourceFile?
        var cursor: Int

        init(node: YAMLNode, text: String, style: YAMLNode.ScalarStyle, source: SourceFile?) {
            self.node = node
            self.scalars = Array(text.unicodeScalars)
            self.style = style
            self.source = source
            self.cursor = node.span.start.offset
        }

        mutating func span(offset: Int, length: Int) -> SourceSpan {
            let span = node.span
            let lower = min(offset, scalars.count), upper = min(offset + length, scalars.count)
            let needle = Array(String(String.UnicodeScalarView(scalars[lower..<upper])).utf8)
            if let source, source.path == span.file, !needle.isEmpty,
               let at = Self.find(needle, in: source.bytes, from: cursor, to: min(span.end.offset, source.bytes.count)) {
                cursor = at + needle.count
                return SourceSpan(file: span.file, start: source.location(ofByte: at), end: source.location(ofByte: at + needle.count))
            }
            if span.start.line == span.end.line, !scalars[..<lower].contains("\n") {
                let quoteWidth = style == .singleQuoted || style == .doubleQuoted ? 1 : 0
                let start = SourceLocation(line: span.start.line, column: span.start.column + quoteWidth + lower, offset: span.start.offset)
                var end = start
                end.column += upper - lower
                return SourceSpan(file: span.file, start: start, end: end)
            }
            return SourceSpan(file: span.file, start: span.start, end: span.start)
        }

        static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int, to: Int) -> Int? {
            guard from >= 0, to - from >= needle.count else { return nil }
            var i = from
            while i + needle.count <= to {
                if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
                i += 1
            }
            return nil
        }
    }
}
