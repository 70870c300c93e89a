import MoonDocument

/// One entry of a node's `params:`: `NAME: { default: VALUE }` or
/// `NAME: { required: true, description: TEXT }`; read as `${{ params.NAME }}`.
public struct NodeParameter: Sendable, Hashable, Codable {
    public var name: String
    /// The value when none is given; nil for a required parameter.
    public var defaultValue: String?
    public var required: Bool
    public var description: String?
    public var span: SourceSpan

    public init(name: String, defaultValue: String? = nil, required: Bool = false, description: String? = nil, span: SourceSpan) {
        self.name = name
        self.defaultValue = defaultValue
        self.required = required
        self.description = description
        self.span = span
    }
}

/// What the command line gives one node: `NAME=VALUE` parameters and the
/// words after `--` (`${{ args }}`, one word each). `Graph.bind` checks and
/// completes them; they are part of the node's fingerprint.
public struct NodeArguments: Sendable, Hashable, Codable {
    /// Every declared parameter's value once bound (given, or its default).
    public var params: [String: String]
    public var args: [String]

    public init(params: [String: String] = [:], args: [String] = []) {
        self.params = params
        self.args = args
    }

    public var isEmpty: Bool { params.isEmpty && args.isEmpty }
}

/// Why the arguments given to a node do not fit its `params:`: the message
/// says what to write instead (moon exits 2).
public struct ArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension Graph {
    /// Checks `given` against the `params:` of node `index` and stores the
    /// result (defaults filled in) as the node's `arguments`, which the
    /// Interpolator reads. An unknown parameter gets "did you mean"; a
    /// missing required one names its description. A node without params
    /// takes no `NAME=VALUE`.
    public mutating func bind(node index: Int, params given: [String: String], args: [String] = []) throws(ArgumentError) {
        let node = nodes[index]
        let declared = node.params.map(\.name)
        for name in given.keys.sorted() where !declared.contains(name) {
            if declared.isEmpty {
                throw ArgumentError("node '\(node.name)' takes no parameters, but \(name)=… was given; declare it under the node's 'params:', or remove it")
            }
            let hint = Suggestion.clause(for: name, in: declared)
            throw ArgumentError("node '\(node.name)' has no parameter '\(name)'\(hint); its parameters are \(declared.joined(separator: ", "))")
        }
        var bound: [String: String] = [:]
        for parameter in node.params {
            if let value = given[parameter.name] {
                bound[parameter.name] = value
            } else if let value = parameter.defaultValue {
                bound[parameter.name] = value
            } else {
                let what = parameter.description.map { " (\($0))" } ?? ""
                throw ArgumentError("node '\(node.name)' needs the parameter '\(parameter.name)'\(what); run it as: moon run \(node.name) \(parameter.name)=VALUE")
            }
        }
        nodes[index].arguments = NodeArguments(params: bound, args: args)
    }
}
