import Foundation
import MoonJSON

/// One part of a node's fingerprint that differs between two sets of
/// parts (`FingerprintParts.changes(since:)`), named for `moon why`.
public enum WhyChange: Sendable, Equatable {
    /// A source file changed (both), appeared (no `old`) or went (no `new`).
    case file(path: String, old: FingerprintParts.File?, new: FingerprintParts.File?)
    /// An environment variable (`env`, `dotenv`) or `cache: key:` part
    /// changed, appeared or went; `value`: its value now, only when its name
    /// does not look secret.
    case environment(kind: String, name: String, change: String, value: String?, secret: Bool)
    /// A var the command reads; each value only when its name does not look secret.
    case variable(name: String, old: String?, new: String?, secret: Bool)
    /// The command's text, as a line diff (`-` old, `+` new, ` ` context).
    case command(diff: [String])
    /// A need's result, or the `$MOON_OUTPUT` outputs or values it left.
    case need(name: String, oldResult: String?, newResult: String?, outputs: [String], values: Bool)
    /// The `sources`, `generates` or `depfile` patterns.
    case patterns(removed: [String], added: [String])

    /// One line (the command's diff follows its line, indented, in `text`).
    public var summary: String {
        switch self {
        case .file(let path, let old?, let new?):
            return "file \(path) changed: \(old.size) bytes, \(old.hash) -> \(new.size) bytes, \(new.hash)"
        case .file(let path, nil, let new?):
            return "file \(path) is new: \(new.size) bytes, \(new.hash)"
        case .file(let path, let old?, nil):
            return "file \(path) is gone (was \(old.size) bytes, \(old.hash))"
        case .file(let path, nil, nil):
            return "file \(path) changed"
        case .environment(let kind, let name, let change, let value, let secret):
            let what = kind == "cache-key" ? "cache key part \(name)" : kind == "dotenv" ? "dotenv variable \(name)" : "environment variable \(name)"
            if change == "removed" { return "\(what) was removed" }
            let shown = secret ? " (value hidden: the name looks secret)" : value.map { " (now \(Self.quoted($0)))" } ?? ""
            return "\(what) \(change == "added" ? "was added" : "changed")\(shown)"
        case .variable(let name, let old, let new, let secret):
            if secret { return "var \(name) changed (value hidden: the name looks secret)" }
            return "var \(name) changed: \(old.map(Self.quoted) ?? "(unset)") -> \(new.map(Self.quoted) ?? "(unset)")"
        case .command:
            return "command changed:"
        case .need(let name, let oldResult, let newResult, let outputs, let values):
            var parts: [String] = []
            if let oldResult, let newResult, oldResult != newResult { parts.append("its result was \(oldResult), now \(newResult)") }
            if !outputs.isEmpty { parts.append("output\(outputs.count == 1 ? "" : "s") \(outputs.joined(separator: ", ")) changed") }
            if values { parts.append("its values changed") }
            if oldResult == nil { return "need '\(name)' is new" }
            if newResult == nil { return "need '\(name)' was removed" }
            return "need '\(name)' ran and changed what it left: " + (parts.isEmpty ? "its outputs changed" : parts.joined(separator: "; "))
        case .patterns(let removed, let added):
            return "patterns changed: " + (removed.map { "-" + $0 } + added.map { "+" + $0 }).joined(separator: ", ")
        }
    }

    /// The lines `moon why` prints for this change.
    public var text: [String] {
        if case .command(let diff) = self { return [summary] + diff.map { "    " + $0 } }
        return [summary]
    }

    /// A short quoted value, one line (a long one cut).
    static func quoted(_ value: String) -> String {
        var shown = value.replacingOccurrences(of: "\n", with: "\\n")
        if shown.count > 80 { shown = String(shown.prefix(77)) + "..." }
        return "'" + shown + "'"
    }

    /// `moon why --json`'s object for this change.
    public var json: JSONValue {
        func file(_ f: FingerprintParts.File?) -> JSONValue {
            f.map { .object([("size", .int(Int($0.size))), ("hash", .string($0.hash))]) } ?? .null
        }
        func optional(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        switch self {
        case .file(let path, let old, let new):
            let change = old == nil ? "added" : new == nil ? "removed" : "changed"
            return .object([("kind", .string("file")), ("path", .string(path)), ("change", .string(change)), ("old", file(old)), ("new", file(new))])
        case .environment(let kind, let name, let change, let value, let secret):
            return .object([("kind", .string(kind == "cache-key" ? "cache-key" : "env")), ("source", .string(kind)), ("name", .string(name)),
                            ("change", .string(change)), ("secret", .bool(secret)), ("value", secret ? .null : optional(value))])
        case .variable(let name, let old, let new, let secret):
            return .object([("kind", .string("var")), ("name", .string(name)), ("secret", .bool(secret)),
                            ("old", secret ? .null : optional(old)), ("new", secret ? .null : optional(new))])
        case .command(let diff):
            return .object([("kind", .string("command")), ("diff", .strings(diff))])
        case .need(let name, let oldResult, let newResult, let outputs, let values):
            return .object([("kind", .string("need")), ("name", .string(name)), ("old_result", optional(oldResult)),
                            ("new_result", optional(newResult)), ("outputs", .strings(outputs)), ("values", .bool(values))])
        case .patterns(let removed, let added):
            return .object([("kind", .string("patterns")), ("removed", .strings(removed)), ("added", .strings(added))])
        }
    }
}

extension FingerprintParts {
    /// What differs in these parts from `old`: files, environment, vars,
    /// needs, patterns, then the command (each in a stable order).
    public func changes(since old: FingerprintParts) -> [WhyChange] {
        var changes: [WhyChange] = []
        // Files: changed and new in this order, then the ones gone (sorted).
        var before: [String: File] = [:]
        for file in old.files { before[file.path] = file }
        for file in files {
            if let was = before.removeValue(forKey: file.path) {
                if was.hash != file.hash || was.size != file.size { changes.append(.file(path: file.path, old: was, new: file)) }
            } else {
                changes.append(.file(path: file.path, old: nil, new: file))
            }
        }
        for path in before.keys.sorted() { changes.append(.file(path: path, old: before[path], new: nil)) }
        // Environment.
        var oldEnv: [String: Variable] = [:]
        for v in old.environment { oldEnv[v.kind + "\u{0}" + v.name] = v }
        for v in environment {
            let secret = WhyRedaction.looksSecret(v.name)
            if let was = oldEnv.removeValue(forKey: v.kind + "\u{0}" + v.name) {
                if was.digest != v.digest {
                    changes.append(.environment(kind: v.kind, name: v.name, change: "changed", value: secret ? nil : v.value, secret: secret))
                }
            } else {
                changes.append(.environment(kind: v.kind, name: v.name, change: "added", value: secret ? nil : v.value, secret: secret))
            }
        }
        for v in oldEnv.values.sorted(by: { ($0.kind, $0.name) < ($1.kind, $1.name) }) {
            changes.append(.environment(kind: v.kind, name: v.name, change: "removed", value: nil, secret: WhyRedaction.looksSecret(v.name)))
        }
        // Vars.
        var oldVars: [String: Variable] = [:]
        for v in old.vars { oldVars[v.name] = v }
        for v in vars {
            let secret = WhyRedaction.looksSecret(v.name)
            let was = oldVars.removeValue(forKey: v.name)
            guard was?.digest != v.digest else { continue }
            changes.append(.variable(name: v.name, old: secret ? nil : was?.value, new: secret ? nil : v.value, secret: secret))
        }
        for v in oldVars.values.sorted(by: { $0.name < $1.name }) {
            let secret = WhyRedaction.looksSecret(v.name)
            changes.append(.variable(name: v.name, old: secret ? nil : v.value, new: nil, secret: secret))
        }
        // Needs.
        var oldNeeds: [String: Need] = [:]
        for need in old.needs { oldNeeds[need.name] = need }
        for need in needs {
            guard let was = oldNeeds.removeValue(forKey: need.name) else {
                changes.append(.need(name: need.name, oldResult: nil, newResult: need.result, outputs: [], values: false))
                continue
            }
            var digests: [String: String] = [:]
            for output in was.outputs { digests[output.name] = output.digest }
            var outputs: [String] = []
            for output in need.outputs where digests.removeValue(forKey: output.name) != output.digest { outputs.append(output.name) }
            outputs += digests.keys.sorted()
            let values = was.values != need.values
            if was.result != need.result || !outputs.isEmpty || values {
                changes.append(.need(name: need.name, oldResult: was.result, newResult: need.result, outputs: outputs, values: values))
            }
        }
        for name in oldNeeds.keys.sorted() {
            changes.append(.need(name: name, oldResult: oldNeeds[name]!.result, newResult: nil, outputs: [], values: false))
        }
        if patterns != old.patterns {
            changes.append(.patterns(removed: old.patterns.filter { !patterns.contains($0) }, added: patterns.filter { !old.patterns.contains($0) }))
        }
        if command != old.command {
            changes.append(.command(diff: Self.lineDiff(old.command, command)))
        }
        return changes
    }

    /// A line diff of two texts: common lines with a space, removed ones
    /// with `-`, added ones with `+` (a longest common subsequence; texts
    /// past a few thousand lines are shown whole, old then new).
    static func lineDiff(_ old: String, _ new: String) -> [String] {
        let a = old.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let b = new.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard a.count * b.count <= 4_000_000 else { return a.map { "- " + $0 } + b.map { "+ " + $0 } }
        // lengths[i][j]: the longest common subsequence of a[i...] and b[j...].
        var lengths = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lengths[i][j] = a[i] == b[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
            }
        }
        var out: [String] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                out.append("  " + a[i]); i += 1; j += 1
            } else if i < a.count, j == b.count || lengths[i + 1][j] >= lengths[i][j + 1] {
                out.append("- " + a[i]); i += 1
            } else {
                out.append("+ " + b[j]); j += 1
            }
        }
        return out
    }
}
