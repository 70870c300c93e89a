import MoonGraph

/// Resolves `${{ … }}` for one attempt of one node: `vars` from the graph,
/// `env` from the environment being built, `needs` from what the runner
/// passed in `NodeInputs`, `item`/`matrix` from the node's instance, and
/// `params`/`args` from the arguments the command line bound to it.
/// Substitution happens once: a value that itself contains `${{` is
/// inserted as it is, never read again.
struct Interpolator {
    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    let vars: Variables
    var env: [String: String]
    let inputs: NodeInputs
    /// The node's instance values, when it is an instance of a template.
    var instance: NodeInstance?
    /// The node's `params:` (for defaults) and what the command line gave it.
    var parameters: [NodeParameter] = []
    var arguments = NodeArguments()

    /// The namespace of an included node: its `needs.NAME` are `NAMESPACE + NAME` in the graph.
    var namespace = ""
    /// The run's secrets, for `secrets.NAME` (none outside a node).
    var secrets = SecretValues()

    init(vars: Variables, env: [String: String], inputs: NodeInputs, node: Node? = nil) {
        self.vars = node?.vars ?? vars
        self.env = env
        self.inputs = inputs
        if let node {
            instance = node.instance
            parameters = node.params
            arguments = node.arguments
            namespace = node.namespace
        }
    }

    func value(of expression: Expression) throws -> String {
        switch expression.reference {
        case .variable(let name):
            guard let value = vars[name] else { throw Failure(message: "\(expression.raw): no var '\(name)'") }
            return value
        case .environment(let name):
            guard let value = env[name] else {
                throw Failure(message: "\(expression.raw): the environment variable '\(name)' is not set")
            }
            return value
        case .result(let written):
            let node = namespace + written
            guard let result = inputs.results[node] else { throw Failure(message: "\(expression.raw): '\(node)' is not a need of this node") }
            return result.rawValue
        case .output(let written, let key):
            let node = namespace + written
            guard let result = inputs.results[node] else { throw Failure(message: "\(expression.raw): '\(node)' is not a need of this node") }
            if let value = inputs.outputs[node]?[key] { return value }
            // A need that did not succeed has no outputs: an `if: always` node reads "".
            guard result == .success else { return "" }
            throw Failure(message: "\(expression.raw): '\(node)' set no output '\(key)'; it must write \(key)=VALUE to $MOON_OUTPUT (an empty value is fine)")
        case .item(let part):
            guard let item = instance?.item else { throw Failure(message: "\(expression.raw): this node is not an instance of a for-each") }
            return part.of(item)
        case .matrix(let key):
            guard let value = instance?.matrix[key] else { throw Failure(message: "\(expression.raw): this node has no matrix value '\(key)'") }
            return value
        case .parameter(let name):
            if let value = arguments.params[name] { return value }
            guard let parameter = parameters.first(where: { $0.name == name }) else {
                throw Failure(message: "\(expression.raw): no parameter '\(name)'")
            }
            guard let value = parameter.defaultValue else {
                let what = parameter.description.map { " (\($0))" } ?? ""
                throw Failure(message: "\(expression.raw): the required parameter '\(name)'\(what) was not given; pass \(name)=VALUE after the node's name")
            }
            return value
        case .arguments:
            return arguments.args.joined(separator: " ")
        case .secret(let name):
            return try secrets.value(name)
        }
    }

    /// The words of a list value (`${{ args }}`, a list var), nil for a
    /// scalar: where such an expression is a whole word, each item is one word.
    func words(of expression: Expression) throws -> [String]? {
        switch expression.reference {
        case .arguments: return arguments.args
        case .variable(let name): return vars.items(name)
        default: return nil
        }
    }

    /// Plain substitution: `env` values, `with`, `dir`. A list value is
    /// its items joined by spaces.
    func string(_ text: String) throws -> String {
        guard Template.containsExpression(text) else { return text }
        let (template, problems) = Template.parse(text)
        if let problem = problems.first { throw Failure(message: problem.message) }
        var out = ""
        for part in template.parts {
            switch part {
            case .literal(let literal): out += literal
            case .expression(let expression):
                let value = try value(of: expression)
                if value.unicodeScalars.contains("\0") { throw Failure(message: "the value of \(expression.raw) contains a NUL byte") }
                guard out.utf8.count + value.utf8.count <= ExpansionLimit.substitutedBytes else {
                    throw Failure(message: "'\(ShellTemplate.preview(text))' would be longer than \(ByteSize.text(Int64(ExpansionLimit.substitutedBytes))) with its values put in")
                }
                out += value
            }
        }
        return out
    }

    /// Exec-form arguments: an argument that is exactly one list-valued
    /// expression becomes one argument per item (none for an empty list);
    /// any other argument is one argument, as `string` makes it.
    func arguments(_ written: [String]) throws -> [String] {
        var argv: [String] = []
        argv.reserveCapacity(written.count)
        for text in written {
            guard Template.containsExpression(text) else { argv.append(text); continue }
            let (template, problems) = Template.parse(text)
            if let problem = problems.first { throw Failure(message: problem.message) }
            if template.parts.count == 1, case .expression(let expression) = template.parts[0], let items = try words(of: expression) {
                if let bad = items.first(where: { $0.unicodeScalars.contains("\0") }) {
                    throw Failure(message: "an item of \(expression.raw) contains a NUL byte ('\(ShellTemplate.preview(bad))')")
                }
                argv += items
            } else {
                argv.append(try string(text))
            }
        }
        return argv
    }

    /// A shell-form script: each expression becomes a reference to an
    /// environment variable that holds its value (`ShellTemplate`); the
    /// caller sets the bindings in the process's environment.
    func script(_ text: String, shell: Shell) throws -> ShellTemplate.Rendered {
        guard Template.containsExpression(text) else { return ShellTemplate.Rendered(script: text, bindings: []) }
        let (template, problems) = Template.parse(text)
        if let problem = problems.first { throw Failure(message: problem.message) }
        do {
            return try ShellTemplate.render(template, shell: shell, value: value(of:), words: words(of:))
        } catch let failure as ShellTemplate.Failure {
            throw Failure(message: failure.message)
        }
    }
}
