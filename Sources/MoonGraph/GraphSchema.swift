import MoonJSON

/// The JSON Schema (draft 2020-12) of the graph file, generated from the same
/// key tables the decoder checks (`GraphKeys`) and from `BuiltinCatalog`, so
/// editors and moon agree. `schema/moon-graph.schema.json` is this text.
public enum GraphSchema {
    /// The schema, pretty-printed with two-space indentation and a final newline.
    public static var text: String { document.pretty() + "\n" }

    /// The same as `text`.
    public static func json() -> String { text }

    static let nodeNamePattern = "^[A-Za-z0-9_][A-Za-z0-9_.+-]*$"
    static let envNamePattern = "^[A-Za-z_][A-Za-z0-9_]*$"
    static let varNamePattern = "^[A-Za-z_][A-Za-z0-9_-]*$"
    static let durationPattern = "^(?:(?:[0-9]+(?:\\.[0-9]+)?(?:ms|s|m|h))+|[0-9]+(?:\\.[0-9]+)?)$"
    static let templatePattern = "\\$\\{\\{"

    static var document: JSONValue {
        .object([
            ("$schema", .string("https://json-schema.org/draft/2020-12/schema")),
            ("title", .string("moon graph file")),
            ("description", .string("A task graph for moon (version 1): nodes, their needs, queues and defaults.")),
            ("type", .string("object")),
            ("required", .strings(["version", "nodes"])),
            ("properties", properties(GraphKeys.top, types: topTypes)),
            ("patternProperties", .object([("^x-", .object([("description", .string("Ignored by moon; a place for YAML anchors."))]))])),
            ("additionalProperties", .bool(false)),
            ("$defs", .object(definitions)),
        ])
    }

    // MARK: - Key types

    private static var topTypes: [String: JSONValue] {
        [
            "version": .object([("const", .int(1))]),
            "name": .object([("type", .string("string"))]),
            "description": .object([("type", .string("string"))]),
            "default": .object([("anyOf", .array([
                ref("target"),
                .object([("type", .string("array")), ("items", ref("target"))]),
            ]))]),
            "includes": map(keyPattern: nodeNamePattern, value: .object([("anyOf", .array([
                .object([("type", .string("string")), ("minLength", .int(1))]),
                closedObject(GraphKeys.include, types: includeTypes, required: ["file"]),
            ]))])),
            "vars": ref("vars"),
            "env": ref("env"),
            "dotenv": .object([("anyOf", .array([
                ref("dotenvFile"),
                .object([("type", .string("array")), ("items", ref("dotenvFile"))]),
            ]))]),
            "queues": map(keyPattern: nodeNamePattern, value: ref("queue")),
            "defaults": ref("defaults"),
            "cache": closedObject(GraphKeys.cache, types: cacheTypes),
            "secrets": map(keyPattern: varNamePattern, value: .object([("oneOf", .array([
                closedObject(GraphKeys.secret, types: secretTypes, required: ["env"]),
                closedObject(GraphKeys.secret, types: secretTypes, required: ["file"]),
            ]))])),
            "nodes": map(keyPattern: nodeNamePattern, value: ref("node")),
        ]
    }

    private static var nodeTypes: [String: JSONValue] {
        [
            "description": .object([("type", .string("string"))]),
            "needs": .object([("anyOf", .array([
                ref("target"),
                .object([("type", .string("array")), ("items", ref("target"))]),
            ]))]),
            "run": .object([("anyOf", .array([
                .object([("type", .string("string")), ("minLength", .int(1))]),
                .object([("type", .string("array")), ("items", ref("scalar")), ("minItems", .int(1))]),
            ]))]),
            "uses": .object([("enum", .strings(BuiltinCatalog.names))]),
            "with": .object([("type", .string("object"))]),
            "env": ref("env"),
            "dir": .object([("type", .string("string"))]),
            "queue": .object([("type", .string("string"))]),
            "timeout": ref("timeout"),
            "retry": ref("retry"),
            "if": ref("condition"),
            "continue-on-error": .object([("type", .string("boolean"))]),
            "success-codes": ref("successCodes"),
            "priority": .object([("type", .string("integer")), ("minimum", .int(Plan.priorities.lowerBound)),
                                 ("maximum", .int(Plan.priorities.upperBound))]),
            "shell": ref("shell"),
            "slurm": ref("slurm"),
            "resources": ref("resources"),
            "sources": globList,
            "generates": globList,
            "depfile": .object([("type", .string("string")), ("minLength", .int(1))]),
            "cache": .object([("type", .string("boolean"))]),
            "service": .object([("type", .string("boolean"))]),
            "restart": .object([("enum", .strings(["on-change", "never"]))]),
            "interactive": .object([("type", .string("boolean"))]),
            "confirm": .object([("type", .string("string")), ("minLength", .int(1)), ("maxLength", .int(NodeInteraction.maxQuestionLength))]),
            "for-each": .object([("anyOf", .array([
                .object([("type", .string("array")), ("items", ref("scalar"))]),
                closedObject(GraphKeys.forEach, types: forEachTypes, required: ["glob"]),
                ref("template"),
            ]))]),
            "matrix": .object([
                ("type", .string("object")),
                ("properties", .object([
                    ("include", .object([("type", .string("array")), ("items", map(keyPattern: varNamePattern, value: ref("scalar")))])),
                    ("exclude", .object([("type", .string("array")), ("items", map(keyPattern: varNamePattern, value: ref("scalar")))])),
                ])),
                ("propertyNames", .object([("pattern", .string(varNamePattern))])),
                ("additionalProperties", .object([("type", .string("array")), ("items", ref("scalar")), ("minItems", .int(1))])),
            ]),
            "params": map(keyPattern: varNamePattern, value: .object([("anyOf", .array([
                ref("scalar"),
                closedObject(GraphKeys.parameter, types: parameterTypes),
            ]))])),
            "internal": .object([("type", .string("boolean"))]),
        ]
    }

    private static var forEachTypes: [String: JSONValue] {
        [
            "glob": .object([("type", .string("string")), ("minLength", .int(1))]),
            "exclude": globList,
            "allow-empty": .object([("type", .string("boolean"))]),
        ]
    }

    private static var parameterTypes: [String: JSONValue] {
        [
            "default": ref("scalar"),
            "required": .object([("type", .string("boolean"))]),
            "description": .object([("type", .string("string"))]),
        ]
    }

    private static var includeTypes: [String: JSONValue] {
        [
            "file": .object([("type", .string("string")), ("minLength", .int(1))]),
            "vars": ref("vars"),
        ]
    }

    private static var cacheTypes: [String: JSONValue] {
        [
            "dir": .object([("type", .string("string")), ("minLength", .int(1))]),
            "remote": .object([("type", .string("string")), ("pattern", .string("^https?://"))]),
            "key": .object([("anyOf", .array([
                .object([("type", .string("string"))]),
                .object([("type", .string("array")), ("items", .object([("type", .string("string"))]))]),
            ]))]),
        ]
    }

    /// A glob or a list of globs (`sources:`, `generates:`).
    private static var globList: JSONValue {
        .object([("anyOf", .array([
            .object([("type", .string("string")), ("minLength", .int(1))]),
            .object([("type", .string("array")), ("items", .object([("type", .string("string")), ("minLength", .int(1))]))]),
        ]))])
    }

    private static var queueTypes: [String: JSONValue] {
        [
            "concurrency": .object([("anyOf", .array([
                .object([("type", .string("integer")), ("minimum", .int(1))]),
                .object([("const", .string("auto"))]),
            ]))]),
            "executor": .object([("enum", .strings(["local", "slurm"]))]),
            "slurm": ref("slurm"),
        ]
    }

    private static var slurmTypes: [String: JSONValue] {
        [
            "partition": .object([("type", .string("string"))]),
            "cpus-per-task": .object([("type", .string("integer")), ("minimum", .int(1))]),
            "mem": .object([("type", .array([.string("string"), .string("integer")])), ("pattern", .string("^[0-9]+[KMGTkmgt]?$"))]),
            "time": .object([("type", .array([.string("string"), .string("integer")])),
                             ("anyOf", .array([
                                 .object([("pattern", .string("^(?:[0-9]+(?::[0-9]+){0,2}|[0-9]+-[0-9]+(?::[0-9]+){0,2}|UNLIMITED|INFINITE|unlimited|infinite)$"))]),
                                 .object([("pattern", .string(durationPattern))]),
                             ]))]),
            "account": .object([("type", .string("string"))]),
            "args": .object([("anyOf", .array([
                .object([("type", .string("string"))]),
                .object([("type", .string("array")), ("items", ref("scalar"))]),
            ]))]),
        ]
    }

    private static var retryTypes: [String: JSONValue] {
        [
            "times": .object([("type", .string("integer")), ("minimum", .int(0))]),
            "delay": ref("duration"),
            "backoff": .object([("type", .string("number")), ("minimum", .int(1))]),
            "max-delay": ref("duration"),
        ]
    }

    private static var secretTypes: [String: JSONValue] {
        [
            "env": .object([("type", .string("string")), ("pattern", .string(envNamePattern))]),
            "file": .object([("type", .string("string")), ("minLength", .int(1))]),
            "required": .object([("type", .string("boolean"))]),
        ]
    }

    private static var dotenvTypes: [String: JSONValue] {
        [
            "path": .object([("type", .string("string")), ("minLength", .int(1))]),
            "optional": .object([("type", .string("boolean"))]),
        ]
    }

    private static var defaultsTypes: [String: JSONValue] {
        [
            "queue": .object([("type", .string("string"))]),
            "timeout": ref("timeout"),
            "retry": ref("retry"),
            "shell": ref("shell"),
            "dir": .object([("type", .string("string"))]),
            "continue-on-error": .object([("type", .string("boolean"))]),
            "if": ref("condition"),
            "success-codes": ref("successCodes"),
            "resources": ref("resources"),
        ]
    }

    private static var resourcesTypes: [String: JSONValue] {
        [
            "memory": .object([("type", .string("string")), ("pattern", .string("^[0-9]+(\\.[0-9]+)? *[KMGTPEkmgtpe](i?[Bb])?$"))]),
            "cpus": .object([("type", .string("integer")), ("minimum", .int(1)), ("maximum", .int(4096))]),
        ]
    }

    // MARK: - Definitions

    private static var definitions: [(String, JSONValue)] {
        var defs: [(String, JSONValue)] = [
            ("nodeName", .object([("type", .string("string")), ("pattern", .string(nodeNamePattern))])),
            ("target", .object([
                ("description", .string("A node (lib:NODE for an included one, :NODE for one of the root graph from an included file), a for-each or matrix node (all its instances), or one instance NODE[LABEL]; in needs, a name may be made from ${{ item }}, ${{ matrix.KEY }} and ${{ vars.NAME }} (text[${{ item }}]: each instance's own).")),
                ("type", .string("string")), ("minLength", .int(1)),
            ])),
            ("scalar", .object([("type", .strings(["string", "number", "boolean"]))])),
            ("successCodes", .object([("anyOf", .array([
                .object([("type", .string("integer")), ("minimum", .int(0)), ("maximum", .int(255))]),
                .object([("type", .string("array")), ("minItems", .int(1)),
                         ("items", .object([("type", .string("integer")), ("minimum", .int(0)), ("maximum", .int(255))]))]),
            ]))])),
            ("vars", map(keyPattern: varNamePattern, value: .object([("anyOf", .array([
                ref("scalar"),
                .object([("type", .string("array")), ("items", ref("scalar"))]),
            ]))]))),
            ("env", map(keyPattern: envNamePattern, value: ref("scalar"))),
            ("duration", .object([
                ("description", .string("A duration: 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds.")),
                ("anyOf", .array([
                    .object([("type", .string("string")), ("pattern", .string(durationPattern))]),
                    .object([("type", .string("number")), ("minimum", .int(0))]),
                ])),
            ])),
            ("timeout", .object([("anyOf", .array([ref("duration"), .object([("const", .string("none"))])]))])),
            ("template", .object([
                ("description", .string("A value with ${{ … }}, checked after interpolation.")),
                ("type", .string("string")), ("pattern", .string(templatePattern)),
            ])),
            ("dotenvFile", .object([("anyOf", .array([
                .object([("type", .string("string")), ("minLength", .int(1))]),
                closedObject(GraphKeys.dotenv, types: dotenvTypes, required: ["path"]),
            ]))])),
            ("condition", .object([("enum", .strings(RunCondition.allCases.map(\.rawValue)))])),
            ("shell", .object([("enum", .strings(Shell.allCases.map(\.rawValue)))])),
            ("retry", .object([("anyOf", .array([
                .object([("type", .string("integer")), ("minimum", .int(0))]),
                closedObject(GraphKeys.retry, types: retryTypes, required: ["times"]),
            ]))])),
            ("slurm", closedObject(GraphKeys.slurm, types: slurmTypes)),
            ("resources", closedObject(GraphKeys.resources, types: resourcesTypes)),
            ("queue", closedObject(GraphKeys.queue, types: queueTypes)),
            ("defaults", closedObject(GraphKeys.defaults, types: defaultsTypes)),
            ("node", nodeDefinition),
        ]
        for builtin in BuiltinCatalog.all {
            defs.append(("with-\(builtin.name)", withDefinition(builtin)))
        }
        return defs
    }

    private static var nodeDefinition: JSONValue {
        guard case .object(var members) = closedObject(GraphKeys.node, types: nodeTypes) else { return .null }
        // `run` or `uses`, not both; with neither, `needs` makes a group.
        members.append(("anyOf", .array([
            .object([("required", .strings(["run"]))]),
            .object([("required", .strings(["uses"]))]),
            .object([("required", .strings(["needs"]))]),
        ])))
        members.append(("not", .object([("required", .strings(["run", "uses"]))])))
        members.append(("allOf", .array(BuiltinCatalog.all.map { builtin in
            .object([
                ("if", .object([
                    ("properties", .object([("uses", .object([("const", .string(builtin.name))]))])),
                    ("required", .strings(["uses"])),
                ])),
                ("then", .object([("properties", .object([("with", ref("with-\(builtin.name)"))]))])),
            ])
        })))
        return .object(members)
    }

    private static func withDefinition(_ builtin: BuiltinCatalog.Builtin) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("description", .string(builtin.description)),
            ("type", .string("object")),
            ("properties", .object(builtin.parameters.map { ($0.name, parameterSchema($0)) })),
        ]
        let required = builtin.parameters.filter(\.required).map(\.name)
        if !required.isEmpty { members.append(("required", .strings(required))) }
        members.append(("additionalProperties", .bool(false)))
        for group in builtin.exactlyOneOf {
            members.append(("oneOf", .array(group.map { .object([("required", .strings([$0]))]) })))
        }
        return .object(members)
    }

    private static func parameterSchema(_ parameter: BuiltinCatalog.Parameter) -> JSONValue {
        let description: (String, JSONValue) = ("description", .string(parameter.description))
        switch parameter.kind {
        case .string:
            return .object([description, ("type", .strings(["string", "number", "boolean"]))])
        case .path:
            return .object([description, ("type", .string("string")), ("minLength", .int(1))])
        case .integer:
            return .object([description, ("anyOf", .array([.object([("type", .string("integer"))]), ref("template")]))])
        case .duration:
            return .object([description, ("anyOf", .array([ref("duration"), ref("template")]))])
        case .choice(let values):
            return .object([description, ("anyOf", .array([.object([("enum", .strings(values))]), ref("template")]))])
        case .hostPort:
            return .object([description, ("type", .string("string")), ("pattern", .string("^.+:[0-9]+$|\\$\\{\\{"))])
        }
    }

    // MARK: - Helpers

    private static func ref(_ name: String) -> JSONValue { .object([("$ref", .string("#/$defs/\(name)"))]) }

    private static func map(keyPattern: String, value: JSONValue) -> JSONValue {
        .object([
            ("type", .string("object")),
            ("propertyNames", .object([("pattern", .string(keyPattern))])),
            ("additionalProperties", value),
        ])
    }

    private static func properties(_ keys: [GraphKeys.Key], types: [String: JSONValue]) -> JSONValue {
        .object(keys.map { key in
            var members: [(String, JSONValue)] = [("description", .string(key.description))]
            if case .object(let typeMembers)? = types[key.name] { members += typeMembers }
            return (key.name, .object(members))
        })
    }

    private static func closedObject(_ keys: [GraphKeys.Key], types: [String: JSONValue], required: [String] = []) -> JSONValue {
        var members: [(String, JSONValue)] = [("type", .string("object")), ("properties", properties(keys, types: types))]
        if !required.isEmpty { members.append(("required", .strings(required))) }
        members.append(("additionalProperties", .bool(false)))
        return .object(members)
    }

    /// Keys of `GraphKeys` that have no type here (a test keeps this empty).
    static var untypedKeys: [String] {
        let tables: [([GraphKeys.Key], [String: JSONValue])] = [
            (GraphKeys.top, topTypes), (GraphKeys.node, nodeTypes), (GraphKeys.queue, queueTypes),
            (GraphKeys.slurm, slurmTypes), (GraphKeys.retry, retryTypes), (GraphKeys.defaults, defaultsTypes),
            (GraphKeys.dotenv, dotenvTypes), (GraphKeys.forEach, forEachTypes), (GraphKeys.parameter, parameterTypes),
            (GraphKeys.include, includeTypes), (GraphKeys.cache, cacheTypes), (GraphKeys.secret, secretTypes),
            (GraphKeys.resources, resourcesTypes),
        ]
        return tables.flatMap { keys, types in keys.map(\.name).filter { types[$0] == nil } }
    }
}
