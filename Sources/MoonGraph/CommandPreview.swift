/// What a node runs, for people: its whole command (every line of a
/// script) with the values known before the run put in — vars, its
/// instance's item and matrix values, its parameters and args — each
/// shell-quoted for where it stands, as the shell would receive it. What
/// only the run knows (`needs.…`, `env.…`, a required parameter not given)
/// stays as written. The one place a command is shown from: `moon run -n`,
/// `moon graph` (every format), and the `start` event's `command`, which
/// `-v` and the failure summary show. Display only: a run passes values as
/// data (`ShellTemplate`), never as text.
public struct CommandPreview {
    private let vars: Variables
    /// Parsed scripts by text and shell: the instances of a template share theirs.
    private var parsed: [Script: (Template, [ShellContext])] = [:]
    private struct Script: Hashable {
        let text: String
        let shell: Shell
    }

    public init(graph: Graph) {
        vars = graph.vars
    }

    /// The command, a script in full: its lines as written (without the
    /// blank lines around them), values put in.
    public mutating func command(of node: Node) -> String {
        let node = Values(node: node, vars: node.vars ?? vars)
        switch node.node.action {
        case .shell(let script):
            guard Template.containsExpression(script) else { return Self.trimmed(script) }
            return Self.trimmed(shell(script, node: node))
        case .exec(let argv):
            guard argv.contains(where: Template.containsExpression) else { return node.node.action.summary }
            return exec(argv, node: node).map(ShellQuoting.quote).joined(separator: " ")
        case .builtin(let name, let with):
            let resolved = with.mapValues { argument -> BuiltinArgument in
                guard case .template(let text) = argument, Template.containsExpression(text) else { return argument }
                return .template(plain(text, node: node))
            }
            return NodeAction.builtin(name, with: resolved).summary
        case .group:
            return node.node.action.summary
        }
    }

    /// The script without the blank lines before and after it (a YAML `|`
    /// block ends in a newline), and without trailing blanks on its last line.
    static func trimmed(_ script: String) -> String {
        // Most scripts are one line: kept as they are, without splitting.
        guard script.utf8.contains(UInt8(ascii: "\n")) else { return script }
        var lines = script.split(separator: "\n", omittingEmptySubsequences: false)
        while let first = lines.first, first.allSatisfy(\.isWhitespace) { lines.removeFirst() }
        while let last = lines.last, last.allSatisfy(\.isWhitespace) { lines.removeLast() }
        guard let last = lines.last else { return "" }
        lines[lines.count - 1] = last[..<(last.lastIndex(where: { !$0.isWhitespace }).map(last.index(after:)) ?? last.startIndex)]
        return lines.joined(separator: "\n")
    }

    /// A node and the vars its expressions read (an included node's own).
    private struct Values {
        let node: Node
        let vars: Variables
    }

    /// A shell script with each known value quoted for its context.
    private mutating func shell(_ script: String, node: Values) -> String {
        let (template, contexts) = parse(script, shell: node.node.shell)
        var out = ""
        var k = 0
        var vanished = false
        for part in template.parts {
            switch part {
            case .literal(let text):
                // A word that is an empty list leaves no word: and no double space.
                out += vanished && text.first == " " && out.last == " " ? String(text.dropFirst()) : text
                vanished = false
            case .expression(let expression):
                let context = k < contexts.count ? contexts[k] : .unsafe("")
                k += 1
                let text = quoted(expression, context: context, node: node)
                vanished = text.isEmpty
                out += text
            }
        }
        return out
    }

    private func quoted(_ expression: Expression, context: ShellContext, node: Values) -> String {
        switch context {
        case .comment, .unsafe: return expression.raw
        case .word:
            if let items = words(expression, node: node) { return items.map(ShellQuoting.quote).joined(separator: " ") }
            return value(expression, node: node).map(ShellQuoting.quote) ?? expression.raw
        case .singleQuoted:
            // Inside '…': as is, each quote of the value closed and escaped.
            guard let v = value(expression, node: node) else { return expression.raw }
            return ShellQuoting.isPrintable(v) ? v.replacing("'", with: "'\\''") : "'" + ShellQuoting.quote(v) + "'"
        case .doubleQuoted:
            guard let v = value(expression, node: node) else { return expression.raw }
            if !ShellQuoting.isPrintable(v) { return "\"" + ShellQuoting.quote(v) + "\"" }
            var out = ""
            for c in v {
                if c == "\"" || c == "\\" || c == "$" || c == "`" { out.append("\\") }
                out.append(c)
            }
            return out
        case .arithmetic:
            return value(expression, node: node) ?? expression.raw
        }
    }

    /// Exec-form arguments: a list value alone in an argument is one argument per item.
    private func exec(_ argv: [String], node: Values) -> [String] {
        var out: [String] = []
        for text in argv {
            guard Template.containsExpression(text) else { out.append(text); continue }
            let template = Template.parse(text).template
            if template.parts.count == 1, case .expression(let e) = template.parts[0], let items = words(e, node: node) {
                out += items
            } else {
                out.append(plain(text, node: node))
            }
        }
        return out
    }

    /// Plain substitution (exec arguments, `with:`): a list reads as its items joined by spaces.
    private func plain(_ text: String, node: Values) -> String {
        var out = ""
        for part in Template.parse(text).template.parts {
            switch part {
            case .literal(let literal): out += literal
            case .expression(let e): out += value(e, node: node) ?? e.raw
            }
        }
        return out
    }

    private mutating func parse(_ script: String, shell: Shell) -> (Template, [ShellContext]) {
        let key = Script(text: script, shell: shell)
        if let known = parsed[key] { return known }
        let template = Template.parse(script).template
        let result = (template, ShellTemplate.contexts(of: template, shell: shell))
        parsed[key] = result
        return result
    }

    /// The value known before the run, as the run resolves it; nil for what only the run knows.
    private func value(_ expression: Expression, node: Values) -> String? {
        switch expression.reference {
        case .variable(let name): return node.vars[name]
        case .item(let part): return node.node.instance?.item.map(part.of)
        case .matrix(let key): return node.node.instance?.matrix[key]
        case .parameter(let name):
            return node.node.arguments.params[name] ?? node.node.params.first { $0.name == name }?.defaultValue
        case .arguments: return node.node.arguments.args.joined(separator: " ")
        // A secret is never read for a preview: it stays as written.
        case .output, .result, .environment, .secret: return nil
        }
    }

    /// The items of a list value (args, a list var), each one word where the expression is a word.
    private func words(_ expression: Expression, node: Values) -> [String]? {
        switch expression.reference {
        case .arguments: return node.node.arguments.args
        case .variable(let name): return node.vars.items(name)
        default: return nil
        }
    }
}
