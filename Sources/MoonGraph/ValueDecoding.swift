import MoonCommand
import MoonDocument

/// Reads typed values (strings, numbers, durations, retry policies, the
/// keys of a mapping) out of YAML nodes, and collects a diagnostic at the
/// node's span for each one that is not what its key expects. Every
/// decoder of the graph file reads through one `ValueDecoding`, so the
/// file's problems are collected in one list.
struct ValueDecoding {
    var diagnostics: [Diagnostic] = []
    /// Suggestions cost a scan of every candidate, so one file's scans are
    /// bounded by the candidates they compare: a hostile file with thousands
    /// of unknown names among thousands of nodes gets the first ones with
    /// suggestions and the rest without, in time linear in its size.
    private var suggestionBudget = 200_000

    var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    // MARK: - Values

    mutating func timeout(_ node: YAMLNode) -> Duration? {
        if node.isNull { return nil }
        if case .scalar("none", .plain, nil) = node.kind { return nil }
        guard let d = duration(node) else { return nil }
        if d <= .zero {
            error("a timeout must be longer than 0s; remove it or write 'none' for no timeout", at: node.span)
            return nil
        }
        return d
    }

    mutating func duration(_ node: YAMLNode) -> Duration? {
        guard let text = string(node, expecting: DurationParser.acceptedForms, allowNull: false) else { return nil }
        do {
            return try DurationParser.parse(text)
        } catch {
            self.error(error.description, at: node.span)
            return nil
        }
    }

    mutating func retry(_ node: YAMLNode) -> RetryPolicy? {
        if node.isNull { return nil }
        switch node.kind {
        case .scalar:
            guard let n = integer(node), n >= 0 else {
                error("invalid retry \(describe(node)); write a number of extra attempts (0 or more) or {times, delay, backoff, max-delay}", at: node.span)
                return nil
            }
            return RetryPolicy(times: n)
        case .sequence:
            error("expected a number of retries or a mapping {times, delay, backoff, max-delay}, found a list", at: node.span)
            return nil
        case .mapping(let pairs):
            let keys = checkKeys(pairs, allowed: GraphKeys.retry, context: "in retry")
            var policy = RetryPolicy()
            var ok = true
            if let t = keys["times"], !t.value.isNull {
                if let n = integer(t.value), n >= 0 { policy.times = n } else {
                    ok = false
                    error("invalid times \(describe(t.value)); write a number of extra attempts (0 or more)", at: t.value.span)
                }
            } else {
                ok = false
                error("retry needs 'times' (the number of extra attempts)", at: node.span)
            }
            if let d = keys["delay"], !d.value.isNull {
                if let delay = duration(d.value) { policy.delay = delay } else { ok = false }
            }
            if let b = keys["backoff"], !b.value.isNull {
                if let factor = number(b.value), factor >= 1, factor.isFinite { policy.backoff = factor } else {
                    ok = false
                    error("invalid backoff \(describe(b.value)); write a number of at least 1 (1 keeps the delay constant, 2 doubles it)", at: b.value.span)
                }
            }
            if let m = keys["max-delay"], !m.value.isNull {
                if let maxDelay = duration(m.value) { policy.maxDelay = maxDelay } else { ok = false }
            }
            return ok ? policy : nil
        }
    }

    /// `success-codes`: a list of exit codes (0–255), or one; an error otherwise.
    mutating func successCodes(_ node: YAMLNode) -> [Int32]? {
        if node.isNull { return nil }
        let items: [YAMLNode]
        switch node.kind {
        case .scalar: items = [node]
        case .sequence(let list): items = Array(list)
        case .mapping:
            error("expected a list of exit codes for 'success-codes', such as [0, 5], found a mapping", at: node.span)
            return nil
        }
        var codes: [Int32] = []
        for item in items {
            guard let code = integer(item), (0...255).contains(code) else {
                error("invalid exit code \(describe(item)) in 'success-codes'; write an integer from 0 to 255", at: item.span,
                      notes: ["help: a process exits with 0 to 255; a signal (a crash, a kill) is never a success"])
                return nil
            }
            if !codes.contains(Int32(code)) { codes.append(Int32(code)) }
        }
        if codes.isEmpty {
            error("'success-codes' is empty; list the exit codes that count as success, such as [0, 5]", at: node.span)
            return nil
        }
        if !codes.contains(0) {
            warning("'success-codes' leaves out 0, so a command that exits 0 fails; add 0 unless that is meant", at: node.span)
        }
        return codes
    }

    mutating func condition(_ node: YAMLNode) -> RunCondition? {
        if node.isNull { return nil }
        return word(node, choices: RunCondition.allCases.map(\.rawValue), what: "condition").flatMap(RunCondition.init(rawValue:))
    }

    mutating func shell(_ node: YAMLNode) -> Shell? {
        if node.isNull { return nil }
        return word(node, choices: Shell.allCases.map(\.rawValue), what: "shell").flatMap(Shell.init(rawValue:))
    }

    /// One of a few words; otherwise an error naming them, with a suggestion.
    mutating func word(_ node: YAMLNode, choices: [String], what: String) -> String? {
        guard let text = string(node, expecting: "one of " + choices.joined(separator: ", ")) else { return nil }
        if choices.contains(text) { return text }
        let list = choices.map { "'\($0)'" }.joined(separator: ", ")
        error("unknown \(what) '\(text)'\(suggestion(for: text, in: choices)); write one of \(list)", at: node.span)
        return nil
    }

    enum NameRule { case variable, environment }

    /// `allowLists`: a value may be a list of scalars (`vars:`); see `Variables.Entry.items`.
    mutating func variables(_ node: YAMLNode, what: String, nameRule: NameRule, allowLists: Bool = false) -> Variables {
        var result = Variables()
        if node.isNull { return result }
        guard let pairs = mapping(node, expecting: "a mapping of \(what) names to values") else { return result }
        for pair in pairs {
            guard let name = keyName(pair.key) else { continue }
            if !Self.isIdentifier(name, allowDash: nameRule == .variable) {
                let rule = nameRule == .variable
                    ? "names start with a letter or '_' and contain only letters, digits, '_' and '-'"
                    : "names start with a letter or '_' and contain only letters, digits and '_'"
                error("invalid \(what) name '\(name)'; \(rule)", at: pair.key.span)
                continue
            }
            switch pair.value.kind {
            case .scalar(let text, _, _):
                if pair.value.isNull {
                    error("\(what) '\(name)' has no value; write '' for an empty string", at: pair.value.span)
                } else {
                    result[name] = text
                }
            case .sequence(let list) where allowLists:
                var items: [String] = []
                for item in list {
                    if let text = string(item, expecting: "a string, number or boolean (one item of the list)", allowNull: false) { items.append(text) }
                }
                result.setList(name, items)
            case .sequence, .mapping:
                let lists = allowLists ? ", or a list of them" : ""
                error("expected a string, number or boolean\(lists) for \(what) '\(name)', found \(describe(pair.value))", at: pair.value.span)
            }
        }
        return result
    }

    /// A list of strings, or one string taken as a list of one.
    mutating func strings(_ node: YAMLNode, expecting: String, item: String) -> [String]? {
        switch node.kind {
        case .scalar: return string(node, expecting: item).map { [$0] }
        case .sequence(let items):
            var result: [String] = []
            for element in items {
                if let text = string(element, expecting: item, allowNull: false) { result.append(text) }
            }
            return result
        case .mapping:
            error("expected \(expecting), found a mapping", at: node.span)
            return nil
        }
    }

    /// A scalar's text. Null is "not set" (nil, no error) unless `allowNull` is false.
    mutating func string(_ node: YAMLNode, expecting: @autoclosure () -> String, allowNull: Bool = true) -> String? {
        if let text = node.scalar {
            if node.isNull {
                if !allowNull { error("expected \(expecting()), found null", at: node.span) }
                return nil
            }
            return text
        }
        error("expected \(expecting()), found \(describe(node))", at: node.span)
        return nil
    }

    /// A plain (unquoted) decimal integer, as YAML's core schema reads it.
    func integer(_ node: YAMLNode) -> Int? {
        guard case .scalar(let text, let style, let tag) = node.kind, Self.isResolvable(style, tag, "int") else { return nil }
        let digits = text.hasPrefix("+") ? String(text.dropFirst()) : text
        return Int(digits)
    }

    func number(_ node: YAMLNode) -> Double? {
        guard case .scalar(let text, let style, let tag) = node.kind,
              Self.isResolvable(style, tag, "float") || Self.isResolvable(style, tag, "int") else { return nil }
        guard let first = text.first, first.isNumber || first == "." || first == "+" || first == "-" else { return nil }
        return Double(text)
    }

    mutating func bool(_ node: YAMLNode, key: String) -> Bool? {
        if node.isNull { return nil }
        if case .scalar(let text, let style, let tag) = node.kind, Self.isResolvable(style, tag, "bool") {
            switch text {
            case "true", "True", "TRUE": return true
            case "false", "False", "FALSE": return false
            default: break
            }
        }
        error("expected true or false for '\(key)', found \(describe(node))", at: node.span)
        return nil
    }

    static func isResolvable(_ style: YAMLNode.ScalarStyle, _ tag: String?, _ type: String) -> Bool {
        if let tag { return tag == "tag:yaml.org,2002:\(type)" || tag == "!!\(type)" }
        return style == .plain
    }

    // MARK: - Mappings and keys

    mutating func mapping(_ node: YAMLNode, expecting: @autoclosure () -> String) -> YAMLNode.Pairs? {
        if let pairs = node.pairs { return pairs }
        error("expected \(expecting()), found \(describe(node))", at: node.span)
        return nil
    }

    /// A mapping key's text; an error for a key that is a list or a mapping.
    mutating func keyName(_ key: YAMLNode) -> String? {
        if case .scalar(let text, _, _) = key.kind { return text }
        error("expected a name as key, found \(describe(key))", at: key.span)
        return nil
    }

    /// The pairs of `pairs` by key, reporting unknown keys (with a suggestion
    /// and the list of valid ones) and duplicates. Null values are kept: each
    /// key decides whether null means "not set".
    mutating func checkKeys(_ pairs: YAMLNode.Pairs, allowed: [GraphKeys.Key], context: @autoclosure () -> String,
                                    ignoringPrefix: String? = nil, noun: String = "key",
                                    synonyms: [String: GraphKeys.Synonym] = [:]) -> CheckedKeys {
        var result = CheckedKeys()
        result.pairs.reserveCapacity(pairs.count)
        for pair in pairs {
            guard let key = keyName(pair.key) else { continue }
            if let ignoringPrefix, key.hasPrefix(ignoringPrefix) { continue }
            guard allowed.contains(where: { $0.name == key }) else {
                let names = allowed.map(\.name)
                if let synonym = synonyms[key] {
                    let clause = synonym.suggestion.map { " (did you mean '\($0)'?)" } ?? ""
                    error("unknown \(noun) '\(key)' \(context())\(clause)", at: pair.key.span,
                          notes: [synonym.help, "valid \(noun)s: " + names.joined(separator: ", ")])
                    continue
                }
                error("unknown \(noun) '\(key)' \(context())\(suggestion(for: key, in: names))", at: pair.key.span,
                      notes: ["valid \(noun)s: " + names.joined(separator: ", ")])
                continue
            }
            if result[key] != nil {
                error("duplicate \(noun) '\(key)' \(context()); remove one", at: pair.key.span)
                continue
            }
            result.pairs.append((key, pair))
        }
        return result
    }

    /// The pairs of a mapping whose keys passed `checkKeys`, by key. A
    /// mapping has a few keys: a list searched in order costs less than a
    /// dictionary built per node (hashing each key twice).
    struct CheckedKeys {
        var pairs: [(key: String, pair: YAMLNode.Pair)] = []

        subscript(_ key: String) -> YAMLNode.Pair? {
            // Most keys asked for are absent; their length tells most of them apart.
            let length = key.utf8.count
            return pairs.first(where: { $0.key.utf8.count == length && $0.key == key })?.pair
        }
    }

    // MARK: - Names and messages

    /// A var name (`allowDash`) or an environment variable name: a letter or
    /// `_`, then letters, digits and `_` (and `-` for vars).
    static func isIdentifier(_ name: String, allowDash: Bool) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || (allowDash && $0 == "-"))
        }
    }

    mutating func suggestion(for word: String, in candidates: [String]) -> String {
        guard suggestionBudget > 0 else { return "" }
        suggestionBudget -= max(candidates.count, 1)
        return Suggestion.clause(for: word, in: candidates)
    }

    /// How a value is named in "found …": `a mapping`, `a list`, `null`, `the string "4"`, `'yes'`.
    func describe(_ node: YAMLNode) -> String {
        switch node.kind {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .scalar(let text, let style, _):
            if node.isNull { return "null" }
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            return style == .plain ? "'\(shown)'" : "the string \"\(shown)\""
        }
    }

    /// Names `node` in the diagnostics found since `start`: the renderer
    /// shows a problem in text merged into many nodes once.
    mutating func tag(from start: Int, node: String) {
        for i in start..<diagnostics.count { diagnostics[i].node = node }
    }

    mutating func error(_ message: String, at span: SourceSpan?, notes: [String] = []) {
        diagnostics.append(Diagnostic(.error, message, at: span, notes: notes))
    }

    mutating func warning(_ message: String, at span: SourceSpan?, notes: [String] = []) {
        diagnostics.append(Diagnostic(.warning, message, at: span, notes: notes))
    }
}
