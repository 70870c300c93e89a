import MoonDocument

/// One entry of the top-level `secrets:` mapping: where the value of
/// `${{ secrets.NAME }}` comes from. Only the declaration is part of the
/// graph (and of the compiled-graph cache); the value is read by each run
/// (`SecretValues`) and never written anywhere (docs/secrets.md).
public struct SecretDeclaration: Sendable, Hashable, Codable {
    public enum Source: Sendable, Hashable, Codable {
        /// `env: VAR`: moon's environment variable (not a `dotenv:` file's).
        case environment(String)
        /// `file: PATH`: a file, relative to the graph file's directory.
        case file(String)
    }

    public var name: String
    public var source: Source
    /// `required: false`: a missing value is the empty string, not an error.
    public var required: Bool
    /// Where the entry is written, for "missing secret" errors.
    public var span: SourceSpan?

    public init(name: String, source: Source, required: Bool = true, span: SourceSpan? = nil) {
        self.name = name
        self.source = source
        self.required = required
        self.span = span
    }

    /// What to do to provide it, for the error about a missing one.
    public var howToProvide: String {
        switch source {
        case .environment(let variable): return "set the environment variable \(variable)"
        case .file(let path): return "write it to the file \(path) (relative to the graph file)"
        }
    }
}

extension Graph {
    /// The secret called `name`.
    public func secret(named name: String) -> SecretDeclaration? {
        secrets.first { $0.name == name }
    }
}

extension Node {
    /// The secrets the node's command, `env:`, `with:` or `dir` read, in
    /// the order written. Parsed on each call: ask only when the graph
    /// declares secrets.
    public var secretNames: [String] {
        var texts: [String] = env.map(\.value)
        if let dir { texts.append(dir) }
        switch action {
        case .shell(let script): texts.append(script)
        case .exec(let arguments): texts += arguments
        case .builtin(_, let with):
            for argument in with.values { if case .template(let text) = argument { texts.append(text) } }
        case .group: break
        }
        var names: [String] = []
        for text in texts where Template.containsExpression(text) {
            for expression in Template.parse(text).template.expressions {
                if case .secret(let name) = expression.reference, !names.contains(name) { names.append(name) }
            }
        }
        return names
    }
}

extension ValueDecoding {
    /// `secrets: {NAME: {env: VAR} | {file: PATH}, required: false}`.
    mutating func secrets(_ node: YAMLNode) -> [SecretDeclaration] {
        if node.isNull { return [] }
        guard let pairs = mapping(node, expecting: "a mapping of secret names to {env: VAR} or {file: PATH}") else { return [] }
        var result: [SecretDeclaration] = []
        for pair in pairs {
            guard let name = keyName(pair.key) else { continue }
            guard Self.isIdentifier(name, allowDash: true) else {
                error("invalid secret name '\(name)'; a secret's name is a letter or '_', then letters, digits, '_' and '-'", at: pair.key.span)
                continue
            }
            if result.contains(where: { $0.name == name }) {
                error("secret '\(name)' is declared twice; remove one", at: pair.key.span)
                continue
            }
            guard let entry = mapping(pair.value, expecting: "{env: VAR} or {file: PATH} for secret '\(name)'") else { continue }
            let keys = checkKeys(entry, allowed: GraphKeys.secret, context: "in secret '\(name)'")
            let required = keys["required"].flatMap { bool($0.value, key: "required") } ?? true
            let env = keys["env"], file = keys["file"]
            if env != nil && file != nil {
                error("secret '\(name)' has both 'env' and 'file'; keep one", at: pair.key.span)
                continue
            }
            var source: SecretDeclaration.Source?
            if let env, let variable = string(env.value, expecting: "an environment variable name", allowNull: false) {
                if Self.isIdentifier(variable, allowDash: false) {
                    source = .environment(variable)
                } else {
                    error("invalid environment variable name '\(variable)' for secret '\(name)'", at: env.value.span)
                }
            } else if let file, let path = string(file.value, expecting: "a file path", allowNull: false) {
                if path.isEmpty || path.contains("${{") {
                    error("'file' of secret '\(name)' must be a path written as it is, relative to the graph file", at: file.value.span)
                } else {
                    source = .file(path)
                }
            } else if env == nil && file == nil {
                error("secret '\(name)' needs 'env: VAR' or 'file: PATH' to say where its value comes from", at: pair.key.span)
            }
            guard let source else { continue }
            result.append(SecretDeclaration(name: name, source: source, required: required, span: pair.key.span))
        }
        return result
    }
}
