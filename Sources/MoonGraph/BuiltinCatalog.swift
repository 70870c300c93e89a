/// The built-in commands (`uses:`) and the parameters each takes (`with:`).
/// Each built-in declares its parameters once, here; the decoder validates
/// `with:` against it and `GraphSchema` describes it to editors.
public enum BuiltinCatalog {
    public struct Parameter: Sendable, Hashable {
        public enum Kind: Sendable, Hashable {
            case string
            case duration
            case integer
            /// One of these words.
            case choice([String])
            /// A file system path (relative to the node's directory).
            case path
            /// `host:port`.
            case hostPort

            /// How a value of this kind is written, for error messages.
            public var expectation: String {
                switch self {
                case .string: return "a string"
                case .duration: return DurationParser.acceptedForms
                case .integer: return "an integer"
                case .choice(let values): return "one of " + values.joined(separator: ", ")
                case .path: return "a path"
                case .hostPort: return "host:port, e.g. localhost:8080"
                }
            }
        }

        public var name: String
        public var kind: Kind
        public var required: Bool
        public var description: String

        public init(_ name: String, _ kind: Kind, required: Bool = true, _ description: String) {
            self.name = name
            self.kind = kind
            self.required = required
            self.description = description
        }
    }

    public struct Builtin: Sendable, Hashable {
        public var name: String
        public var description: String
        public var parameters: [Parameter]
        /// Groups of parameters of which exactly one must be given (e.g. `tcp` or `path`).
        public var exactlyOneOf: [[String]]

        public init(_ name: String, _ description: String, parameters: [Parameter], exactlyOneOf: [[String]] = []) {
            self.name = name
            self.description = description
            self.parameters = parameters
            self.exactlyOneOf = exactlyOneOf
        }

        public func parameter(_ name: String) -> Parameter? { parameters.first { $0.name == name } }
    }

    /// Every built-in, in the order the documentation lists them.
    public static let all: [Builtin] = [
        Builtin("sleep", "Waits for a duration, cancellably.", parameters: [
            Parameter("duration", .duration, "How long to wait."),
        ]),
        Builtin("echo", "Emits a message as a value.", parameters: [
            Parameter("message", .string, "The value to emit."),
        ]),
        Builtin("fail", "Fails with a message (for tests and demos).", parameters: [
            Parameter("message", .string, "The error message."),
            Parameter("code", .integer, required: false, "The exit code to report (default 1)."),
        ]),
        Builtin("write-file", "Writes a file atomically.", parameters: [
            Parameter("path", .path, "The file to write, relative to the node's directory."),
            Parameter("content", .string, "The text to write."),
        ]),
        Builtin("exists", "Fails unless a path exists.", parameters: [
            Parameter("path", .path, "The path to check, relative to the node's directory."),
        ]),
        Builtin("wait-for", "Waits until a TCP port accepts connections or a path exists.", parameters: [
            Parameter("tcp", .hostPort, required: false, "host:port to connect to."),
            Parameter("path", .path, required: false, "A path that must exist."),
            Parameter("timeout", .duration, required: false, "How long to wait before failing."),
        ], exactlyOneOf: [["tcp", "path"]]),
        Builtin("reduce", "Combines the values its needs emitted.", parameters: [
            Parameter("op", .choice(["sum", "concat", "list"]), "sum: add numbers; concat: join text; list: a JSON list."),
        ]),
    ]

    private static let byName: [String: Builtin] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    public static func builtin(named name: String) -> Builtin? { byName[name] }

    public static var names: [String] { all.map(\.name) }

    /// Checks one scalar value against a parameter's kind. Values containing
    /// `${{` are kept as templates, to be checked after interpolation.
    public static func argument(_ text: String, for parameter: Parameter) -> Result<BuiltinArgument, ArgumentError> {
        if text.contains("${{") { return .success(.template(text)) }
        switch parameter.kind {
        case .string:
            return .success(.string(text))
        case .path:
            return text.isEmpty ? .failure(ArgumentError(parameter: parameter, text: text)) : .success(.path(text))
        case .integer:
            guard let n = Int(text) else { return .failure(ArgumentError(parameter: parameter, text: text)) }
            return .success(.integer(n))
        case .duration:
            guard let d = try? DurationParser.parse(text) else { return .failure(ArgumentError(parameter: parameter, text: text)) }
            return .success(.duration(d))
        case .choice(let values):
            return values.contains(text) ? .success(.choice(text)) : .failure(ArgumentError(parameter: parameter, text: text))
        case .hostPort:
            guard let colon = text.lastIndex(of: ":"), colon != text.startIndex,
                  let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port)
            else { return .failure(ArgumentError(parameter: parameter, text: text)) }
            return .success(.string(text))
        }
    }

    public struct ArgumentError: Error, Sendable, Hashable {
        public var parameter: Parameter
        public var text: String
    }
}
