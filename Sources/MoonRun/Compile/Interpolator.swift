import MoonGraph

/// Resolves `${{ … }}` for one attempt of one node: `vars` from the graph,
/// `env` from the environment being built, `needs` from what the runner
/// passed in `NodeInputs`. Substitution is textual and happens once: a value
/// that itself contains `${{` is inserted as it is, never read again.
struct Interpolator {
    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    let vars: Variables
    var env: [String: String]
    let inputs: NodeInputs

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
        case .result(let node):
            guard let result = inputs.results[node] else { throw Failure(message: "\(expression.raw): '\(node)' is not a need of this node") }
            return result.rawValue
        case .output(let node, let key):
            guard let result = inputs.results[node] else { throw Failure(message: "\(expression.raw): '\(node)' is not a need of this node") }
            if let value = inputs.outputs[node]?[key] { return value }
            // A need that did not succeed has no outputs: an `if: always` node reads "".
            guard result == .success else { return "" }
            throw Failure(message: "\(expression.raw): '\(node)' set no output '\(key)'; it must write \(key)=VALUE to $MOON_OUTPUT (an empty value is fine)")
        }
    }

    /// Plain substitution: exec-form arguments, `env` values, `with`, `dir`.
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
                out += value
            }
        }
        return out
    }

    /// A shell-form script: each expression becomes a reference to an
    /// environment variable that holds its value (`ShellTemplate`); the
    /// caller sets the bindings in the process's environment.
    func script(_ text: String, shell: Shell) throws -> ShellTemplate.Rendered {
        guard Template.containsExpression(text) else { return ShellTemplate.Rendered(script: text, bindings: []) }
        let (template, problems) = Template.parse(text)
        if let problem = problems.first { throw Failure(message: problem.message) }
        do {
            return try ShellTemplate.render(template, shell: shell, value: value(of:))
        } catch let failure as ShellTemplate.Failure {
            throw Failure(message: failure.message)
        }
    }
}
