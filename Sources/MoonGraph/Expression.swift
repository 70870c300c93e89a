import Foundation

/// What one `${{ … }}` refers to. Expressions are paths, not a language:
/// there are no operators or functions, so a value can never be evaluated,
/// only looked up and inserted (docs/dataflow.md).
public enum ExpressionReference: Sendable, Hashable {
    /// `needs.NODE.outputs.KEY`: an output of a need, written to its `$MOON_OUTPUT`.
    case output(node: String, key: String)
    /// `needs.NODE.result`: `success`, `failure`, `canceled` or `skipped`.
    case result(node: String)
    /// `vars.NAME`: a top-level var, after `--set`.
    case variable(String)
    /// `env.NAME`: an environment variable (see docs/dataflow.md for which).
    case environment(String)
    /// `item` or `item.name|stem|ext|dir`: the item of a `for-each` instance.
    case item(ItemPart)
    /// `matrix.KEY`: a value of a `matrix` instance.
    case matrix(String)
    /// `params.NAME`: a parameter declared under the node's `params:`.
    case parameter(String)
    /// `args`: the words after `--` on the command line, each one word.
    case arguments
    /// `secrets.NAME`: a secret declared under `secrets:`, read by the run (docs/secrets.md).
    case secret(String)

    /// The need this reference reads, if any.
    public var node: String? {
        switch self {
        case .output(let node, _), .result(let node): return node
        case .variable, .environment, .item, .matrix, .parameter, .arguments, .secret: return nil
        }
    }
}

/// Which part of a `for-each` item an expression reads. For a path
/// `src/lib/a.tar.gz`: `name` is `a.tar.gz`, `stem` `a.tar`, `ext` `.gz`,
/// `dir` `src/lib` (`.` when the item has no directory).
public enum ItemPart: String, Sendable, Hashable, CaseIterable {
    case whole = ""
    case name, stem, ext, dir

    /// The part of `item`. `/` and `.` are found in its UTF-8 bytes, as
    /// the file system splits paths: every instance of a glob renders its paths with it.
    public func of(_ item: String) -> String {
        // (An ASCII byte's index is a scalar boundary, so it slices the string itself.)
        let bytes = item.utf8
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let start = slash.map(bytes.index(after:)) ?? bytes.startIndex
        switch self {
        case .whole: return item
        case .name: return String(item[start...])
        case .dir:
            guard let slash else { return "." }
            return slash == bytes.startIndex ? "/" : String(item[..<slash])
        case .stem, .ext:
            // A leading dot is a hidden file's name, not an extension.
            guard let dot = bytes[start...].lastIndex(of: UInt8(ascii: ".")), dot != start else {
                return self == .stem ? String(item[start...]) : ""
            }
            return self == .stem ? String(item[start..<dot]) : String(item[dot...])
        }
    }
}

/// One `${{ … }}` of a template, where it is: `offset` and `length` count
/// characters (Unicode scalars) of the template text, as source columns do.
public struct Expression: Sendable, Hashable {
    public var reference: ExpressionReference
    /// The whole `${{ … }}` as written.
    public var raw: String
    public var offset: Int
    public var length: Int
}

/// A string with `${{ … }}` in it, split into literal text and expressions.
public struct Template: Sendable, Hashable {
    public enum Part: Sendable, Hashable {
        case literal(String)
        case expression(Expression)
    }

    /// A problem in the text, at a character offset of it.
    public struct Problem: Error, Sendable, Hashable {
        public var message: String
        public var offset: Int
        public var length: Int
    }

    public var parts: [Part]

    public var expressions: [Expression] {
        parts.compactMap { if case .expression(let e) = $0 { return e } else { return nil } }
    }

    /// Whether `text` holds an expression at all (the cheap test before parsing).
    public static func containsExpression(_ text: String) -> Bool {
        // Over the contiguous bytes, `$` found by memchr: every node's
        // command is asked on every run, the no-op's included.
        var text = text
        return text.withUTF8 { bytes -> Bool in
            guard var at = bytes.baseAddress else { return false }
            var left = bytes.count
            while left >= 3, let found = memchr(at, Int32(UInt8(ascii: "$")), left) {
                let dollar = UnsafePointer(found.assumingMemoryBound(to: UInt8.self))
                let offset = dollar - at
                if offset + 2 < left, dollar[1] == UInt8(ascii: "{"), dollar[2] == UInt8(ascii: "{") { return true }
                at = dollar + 1
                left -= offset + 1
            }
            return false
        }
    }

    /// Parses `text`. Every problem is reported; a malformed expression is
    /// kept as literal text so the rest can still be checked.
    public static func parse(_ text: String) -> (template: Template, problems: [Problem]) {
        var parts: [Part] = []
        var problems: [Problem] = []
        let scalars = Array(text.unicodeScalars)
        var literal = String.UnicodeScalarView()
        var i = 0
        func flush() {
            if !literal.isEmpty { parts.append(.literal(String(literal))) }
            literal = String.UnicodeScalarView()
        }
        // Scalar by scalar: appending a slice goes through generic code whose
        // first use looks up conformances at run time, on every run's check.
        func keep(_ range: Range<Int>) { for k in range { literal.append(scalars[k]) } }
        func string(_ range: Range<Int>) -> String {
            var view = String.UnicodeScalarView()
            for k in range { view.append(scalars[k]) }
            return String(view)
        }
        while i < scalars.count {
            guard scalars[i] == "$", i + 2 < scalars.count, scalars[i + 1] == "{", scalars[i + 2] == "{" else {
                literal.append(scalars[i])
                i += 1
                continue
            }
            // Find the closing `}}`; an expression never spans a line.
            var j = i + 3
            var close: Int?
            while j + 1 < scalars.count {
                if scalars[j] == "\n" { break }
                if scalars[j] == "}" && scalars[j + 1] == "}" { close = j; break }
                j += 1
            }
            guard let end = close else {
                problems.append(Problem(message: "unclosed '${{'; close the expression with '}}' on the same line", offset: i, length: 3))
                keep(i..<(i + 3))
                i += 3
                continue
            }
            let inner = string((i + 3)..<end)
            let raw = string(i..<(end + 2))
            let length = end + 2 - i
            switch reference(inner) {
            case .success(let ref):
                flush()
                parts.append(.expression(Expression(reference: ref, raw: raw, offset: i, length: length)))
            case .failure(let message):
                problems.append(Problem(message: message.text, offset: i, length: length))
                keep(i..<(end + 2))
            }
            i = end + 2
        }
        flush()
        return (Template(parts: parts), problems)
    }

    public static let contexts = ["needs", "vars", "env", "item", "matrix", "params", "args", "secrets"]

    /// `text` without the spaces and tabs around it (bytes: both are ASCII).
    static func trimmingBlanks(_ text: String) -> String {
        let utf8 = text.utf8
        var start = utf8.startIndex, end = utf8.endIndex
        while start < end, utf8[start] == UInt8(ascii: " ") || utf8[start] == UInt8(ascii: "\t") { start = utf8.index(after: start) }
        while start < end {
            let last = utf8.index(before: end)
            guard utf8[last] == UInt8(ascii: " ") || utf8[last] == UInt8(ascii: "\t") else { break }
            end = last
        }
        return String(text[start..<end])
    }

    /// `needs.NODE.outputs.KEY`, `needs.NODE.result`, `vars.NAME`, `env.NAME`.
    /// Node names may contain dots, so a `needs` path is read from its end.
    static func reference(_ inner: String) -> Result<ExpressionReference, Message> {
        let path = trimmingBlanks(inner)
        if path.isEmpty {
            return .failure(Message("empty expression; write needs.NODE.outputs.KEY, needs.NODE.result, vars.NAME or env.NAME"))
        }
        if path == "item" { return .success(.item(.whole)) }
        if path == "args" { return .success(.arguments) }
        guard let dot = path.firstIndex(of: ".") else {
            if let whole = wholeContext[path] {
                return .failure(Message("'\(path)' alone is not a value; write \(whole)"))
            }
            return .failure(unknownContext(path))
        }
        let context = String(path[..<dot])
        let rest = String(path[path.index(after: dot)...])
        switch context {
        case "vars", "env":
            let isVar = context == "vars"
            guard ValueDecoding.isIdentifier(rest, allowDash: isVar) else {
                let what = isVar ? "var" : "environment variable"
                return .failure(Message("invalid \(what) name '\(rest)' in '\(path)'; write \(context).NAME"))
            }
            return .success(isVar ? .variable(rest) : .environment(rest))
        case "item":
            guard let part = ItemPart(rawValue: rest), part != .whole else {
                return .failure(Message("unknown part '\(rest)' of item\(Suggestion.clause(for: rest, in: ["name", "stem", "ext", "dir"])); write item, item.name, item.stem, item.ext or item.dir"))
            }
            return .success(.item(part))
        case "matrix", "params", "secrets":
            guard ValueDecoding.isIdentifier(rest, allowDash: true) else {
                return .failure(Message("invalid name '\(rest)' in '\(path)'; write \(context).NAME"))
            }
            if context == "secrets" { return .success(.secret(rest)) }
            return .success(context == "matrix" ? .matrix(rest) : .parameter(rest))
        case "needs":
            if rest.hasSuffix(".result") {
                let node = String(rest.dropLast(".result".count))
                if Node.isValidReference(node) { return .success(.result(node: node)) }
            } else if let range = rest.ranges(of: ".outputs.").last {
                let node = String(rest[..<range.lowerBound])
                let key = String(rest[range.upperBound...])
                if Node.isValidReference(node), OutputKey.isValid(key) { return .success(.output(node: node, key: key)) }
            }
            return .failure(Message("malformed expression '\(path)'; write needs.NODE.outputs.KEY or needs.NODE.result"))
        default:
            return .failure(unknownContext(context))
        }
    }

    /// What to write for a context named without the part it needs.
    private static let wholeContext = ["needs": "needs.NODE.outputs.KEY or needs.NODE.result", "vars": "vars.NAME",
                                       "env": "env.NAME", "matrix": "matrix.KEY", "params": "params.NAME", "secrets": "secrets.NAME"]

    private static func unknownContext(_ word: String) -> Message {
        var hint = Suggestion.clause(for: word, in: contexts)
        if hint.isEmpty, ["steps", "inputs", "github"].contains(word) { hint = " (moon has no '\(word)')" }
        return Message("unknown context '\(word)'\(hint) in an expression; use needs, vars, env, item, matrix, params, args or secrets")
    }

    public struct Message: Error, Sendable, Hashable {
        public var text: String
        init(_ text: String) { self.text = text }
    }
}

/// Names of outputs (`KEY` in `KEY=VALUE` lines of `$MOON_OUTPUT`).
public enum OutputKey {
    /// `[A-Za-z_][A-Za-z0-9_-]*`, as var names.
    public static func isValid(_ key: String) -> Bool { ValueDecoding.isIdentifier(key, allowDash: true) }
}
