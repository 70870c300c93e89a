import MoonDocument
@testable import MoonGraph

/// A YAML document written in Swift, for tests that must not depend on the
/// real loader: `YAMLLayout` prints it as block-style YAML text and builds
/// the `YAMLNode` tree with the spans libyaml would report for that text
/// (1-based line and column of each scalar, `[`, `{` or first key), so span
/// assertions hold for both, and the text can be fed to the real loader once it works.
indirect enum Y: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
                 ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// A scalar printed plain when that is safe, double-quoted otherwise.
    case scalar(String, YAMLNode.ScalarStyle?)
    case seq([Y])
    case map([(String, Y)])

    init(stringLiteral value: String) { self = .scalar(value, nil) }
    init(integerLiteral value: Int) { self = .scalar(String(value), .plain) }
    init(floatLiteral value: Double) { self = .scalar(String(value), .plain) }
    init(booleanLiteral value: Bool) { self = .scalar(value ? "true" : "false", .plain) }
    init(arrayLiteral elements: Y...) { self = .seq(elements) }
    init(dictionaryLiteral elements: (String, Y)...) { self = .map(elements) }

    static func quoted(_ text: String) -> Y { .scalar(text, .doubleQuoted) }
    static func plain(_ text: String) -> Y { .scalar(text, .plain) }
    static let null: Y = .scalar("~", .plain)
}

struct YAMLLayout {
    let file: String
    private(set) var text = ""
    private var line = 1, column = 1, offset = 0

    /// The YAML text of `document` and the tree the loader should build from it.
    static func render(_ document: Y, file: String = "graph.yaml") -> (text: String, root: YAMLNode) {
        var layout = YAMLLayout(file: file)
        let root: YAMLNode
        switch document {
        case .map(let pairs) where !pairs.isEmpty: root = layout.blockMap(pairs, indent: 0)
        case .seq(let items) where !items.isEmpty && !Self.isFlowable(document): root = layout.blockSeq(items, indent: 0)
        default: root = layout.inline(document)
        }
        layout.emit("\n")
        return (layout.text, root)
    }

    private var location: SourceLocation { SourceLocation(line: line, column: column, offset: offset) }

    private mutating func emit(_ s: String) {
        for scalar in s.unicodeScalars {
            text.unicodeScalars.append(scalar)
            offset += String(scalar).utf8.count
            if scalar == "\n" { line += 1; column = 1 } else { column += 1 }
        }
    }

    private func span(_ start: SourceLocation, _ end: SourceLocation) -> SourceSpan {
        SourceSpan(file: file, start: start, end: end)
    }

    private static func isFlowable(_ y: Y) -> Bool {
        switch y {
        case .scalar: return true
        case .seq(let items): return items.allSatisfy(isFlowable)
        case .map(let pairs): return pairs.isEmpty
        }
    }

    private mutating func blockMap(_ pairs: [(String, Y)], indent: Int) -> YAMLNode {
        let start = location
        var result: [YAMLNode.Pair] = []
        var end = start
        for (i, (key, value)) in pairs.enumerated() {
            if i > 0 { emit("\n" + String(repeating: " ", count: indent)) }
            let keyNode = scalar(key, nil)
            emit(":")
            let valueNode: YAMLNode
            switch value {
            case .map(let inner) where !inner.isEmpty:
                emit("\n" + String(repeating: " ", count: indent + 2))
                valueNode = blockMap(inner, indent: indent + 2)
            case .seq(let items) where !Self.isFlowable(value):
                emit("\n" + String(repeating: " ", count: indent + 2))
                valueNode = blockSeq(items, indent: indent + 2)
            default:
                emit(" ")
                valueNode = inline(value)
            }
            end = valueNode.span.end
            result.append(YAMLNode.Pair(key: keyNode, value: valueNode))
        }
        return YAMLNode.mapping(result, span: span(start, end))
    }

    private mutating func blockSeq(_ items: [Y], indent: Int) -> YAMLNode {
        let start = location
        var nodes: [YAMLNode] = []
        for (i, item) in items.enumerated() {
            if i > 0 { emit("\n" + String(repeating: " ", count: indent)) }
            emit("- ")
            if case .map(let pairs) = item, !pairs.isEmpty {
                nodes.append(blockMap(pairs, indent: indent + 2))
            } else {
                nodes.append(inline(item))
            }
        }
        return YAMLNode.sequence(nodes, span: span(start, nodes.last?.span.end ?? location))
    }

    private mutating func inline(_ y: Y) -> YAMLNode {
        switch y {
        case .scalar(let text, let style): return scalar(text, style)
        case .seq(let items):
            let start = location
            emit("[")
            var nodes: [YAMLNode] = []
            for (i, item) in items.enumerated() {
                if i > 0 { emit(", ") }
                nodes.append(inline(item))
            }
            emit("]")
            return YAMLNode.sequence(nodes, span: span(start, location))
        case .map(let pairs):
            let start = location
            emit("{")
            var result: [YAMLNode.Pair] = []
            for (i, (key, value)) in pairs.enumerated() {
                if i > 0 { emit(", ") }
                let keyNode = scalar(key, nil)
                emit(": ")
                result.append(YAMLNode.Pair(key: keyNode, value: inline(value)))
            }
            emit("}")
            return YAMLNode.mapping(result, span: span(start, location))
        }
    }

    private mutating func scalar(_ text: String, _ style: YAMLNode.ScalarStyle?) -> YAMLNode {
        let style = style ?? (Self.isSafePlain(text) ? .plain : .doubleQuoted)
        let start = location
        if style == .plain {
            emit(text)
        } else {
            var quoted = "\""
            for c in text.unicodeScalars {
                switch c {
                case "\"": quoted += "\\\""
                case "\\": quoted += "\\\\"
                case "\n": quoted += "\\n"
                case "\t": quoted += "\\t"
                default: quoted.unicodeScalars.append(c)
                }
            }
            emit(quoted + "\"")
        }
        return YAMLNode.scalar(text, style: style, span: span(start, location))
    }

    private static func isSafePlain(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
              first != " ", last != " ", !"-?:,[]{}#&*!|>'\"%@`".unicodeScalars.contains(first) else { return false }
        if text.contains(": ") || text.contains(" #") || text.hasSuffix(":") { return false }
        return !text.unicodeScalars.contains { "\n\t,[]{}".unicodeScalars.contains($0) }
    }
}
