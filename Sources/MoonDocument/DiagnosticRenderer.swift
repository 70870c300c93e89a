/// Renders diagnostics compiler-style, quoting the source line with a caret
/// under the span:
///
/// ```
/// graph.yaml:12:13: error: node 'deploy' needs unknown node 'biuld' (did you mean 'build'?)
///    12 |     needs: [biuld]
///       |             ^~~~~
///       = help: ...
/// ```
///
/// Notes follow the excerpt as `= note: ...` lines. A note that does not
/// start with `note:` or `help:` gets `note: ` in front, so every note line
/// reads the same way. Text taken from the file (the quoted line and any
/// names in the message) has its control characters replaced, so a hostile
/// file cannot move the cursor or change colours, and with `color: false`
/// the output holds no escape sequence at all.
public struct DiagnosticRenderer: Sendable {
    /// Adds ANSI bold and colour (red errors, yellow warnings) when true.
    public var color: Bool

    public init(color: Bool = false) {
        self.color = color
    }

    /// One diagnostic, ending with a line break. `source` supplies the quoted
    /// line; without it, or when the span is in another file, only the header
    /// and notes are printed.
    public func render(_ diagnostic: Diagnostic, source: SourceFile?) -> String {
        var out = ""
        let severity = diagnostic.severity.rawValue + ":"
        let message = Self.sanitize(diagnostic.message)
        var gutterWidth = 5
        if let span = diagnostic.span {
            out += style(bold, "\(Self.sanitize(span.file)):\(span.start.line):\(span.start.column):") + " "
            out += style(severityColor(diagnostic.severity), severity) + " " + style(bold, message) + "\n"
            if let source, source.path == span.file, let line = source.line(span.start.line) {
                gutterWidth = max(gutterWidth, String(span.start.line).count)
                out += excerpt(line: line, span: span, gutterWidth: gutterWidth, severity: diagnostic.severity)
            }
        } else {
            let path = Self.sanitize(source?.path ?? "")
            out += (path.isEmpty ? "" : style(bold, path + ":") + " ")
            out += style(severityColor(diagnostic.severity), severity) + " " + style(bold, message) + "\n"
        }
        for note in diagnostic.notes {
            out += String(repeating: " ", count: gutterWidth + 1) + "= " + renderNote(note) + "\n"
        }
        return out
    }

    /// Every diagnostic in source order (those without a position first),
    /// keeping the given order among equal positions.
    public func render(_ diagnostics: [Diagnostic], source: SourceFile?) -> String {
        Self.sorted(Self.merged(diagnostics)).map { render($0, source: source) }.joined()
    }

    /// Every diagnostic, each quoting the file of its span among `source`
    /// and `others` (the files it includes), in the order given: the main
    /// file's first, each included file's after.
    public func render(_ diagnostics: [Diagnostic], source: SourceFile?, others: [SourceFile]) -> String {
        guard !others.isEmpty else { return render(diagnostics, source: source) }
        return Self.merged(diagnostics).map { diagnostic in
            let file = diagnostic.span.flatMap { span in others.first { $0.path == span.file } } ?? source
            return render(diagnostic, source: file)
        }.joined()
    }

    /// The names listed in a merged diagnostic at most.
    static let mergedNamesShown = 8

    /// One diagnostic for each problem found at the same place in several
    /// nodes (text a YAML anchor merges into them, read once per node): the
    /// first, its node's name taken out of the message, and `(in 22 nodes:
    /// a, b, …)` after it. Copies are those with the same span, severity, and
    /// message and notes once the node's own name is set aside.
    public static func merged(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        struct Key: Hashable {
            var span: SourceSpan
            var severity: Diagnostic.Severity
            var message: String
            var notes: [String]
        }
        func key(_ d: Diagnostic) -> Key? {
            guard let node = d.node, let span = d.span else { return nil }
            let name = "'\(node)'"
            return Key(span: span, severity: d.severity, message: d.message.replacing(name, with: "'\u{1}'"),
                       notes: d.notes.map { $0.replacing(name, with: "'\u{1}'") })
        }
        var groups: [Key: [String]] = [:]
        for d in diagnostics {
            if let k = key(d), let node = d.node { groups[k, default: []].append(node) }
        }
        guard groups.values.contains(where: { $0.count > 1 }) else { return diagnostics }
        var out: [Diagnostic] = []
        var shown = Set<Key>()
        for d in diagnostics {
            guard let k = key(d), let nodes = groups[k], nodes.count > 1 else {
                out.append(d)
                continue
            }
            guard shown.insert(k).inserted else { continue }
            var merged = d
            var names = nodes.prefix(mergedNamesShown).joined(separator: ", ")
            if nodes.count > mergedNamesShown { names += ", …" }
            let first = "'\(nodes[0])'"
            merged.message = k.message.replacing(" in node '\u{1}'", with: "")
                .replacing("'\u{1}'", with: first) + " (in \(nodes.count) nodes: \(names))"
            merged.notes = k.notes.map { $0.replacing("'\u{1}'", with: first) }
            out.append(merged)
        }
        return out
    }

    /// "2 errors in graph.yaml", "1 error and 1 warning in graph.yaml",
    /// or "no problems in graph.yaml". Notes are not counted.
    public static func summary(of diagnostics: [Diagnostic], path: String) -> String {
        let diagnostics = merged(diagnostics)
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.filter { $0.severity == .warning }.count
        func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        var parts: [String] = []
        if errors > 0 { parts.append(plural(errors, "error")) }
        if warnings > 0 { parts.append(plural(warnings, "warning")) }
        return (parts.isEmpty ? "no problems" : parts.joined(separator: " and ")) + " in \(sanitize(path))"
    }

    /// Source order: no span first, then by file, line and column; stable.
    public static func sorted(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        diagnostics.enumerated().sorted { a, b in
            switch (a.element.span, b.element.span) {
            case (nil, nil): return a.offset < b.offset
            case (nil, .some): return true
            case (.some, nil): return false
            case (.some(let x), .some(let y)):
                if x.file != y.file { return x.file < y.file }
                if x.start != y.start { return x.start < y.start }
                return a.offset < b.offset
            }
        }.map(\.element)
    }

    // MARK: Pieces

    /// Terminal cells of a quoted line shown at most (a tab counted as 8, a
    /// wide character as 2). A longer line (a minified file, a line of
    /// 100,000 brackets) is cut to a window around the span, with `…` where
    /// it was cut: one diagnostic stays a few short lines.
    public static let excerptWidth = 120

    private func excerpt(line: String, span: SourceSpan, gutterWidth: Int, severity: Diagnostic.Severity) -> String {
        let scalars = Array(Self.sanitize(line).unicodeScalars)
        let startIndex = min(max(span.start.column - 1, 0), scalars.count)
        let endIndex: Int
        if span.end.line == span.start.line {
            endIndex = min(max(span.end.column - 1, startIndex), scalars.count)
        } else if span.end.line > span.start.line {
            endIndex = scalars.count  // the rest of this line
        } else {
            endIndex = startIndex
        }
        // The window: all of a usual line; of a long one, from a third of
        // the width before the span, as far as the width allows.
        func cells(_ s: Unicode.Scalar) -> Int { s == "\t" ? 8 : (Self.isWide(s) ? 2 : 1) }
        var from = 0, to = scalars.count
        if scalars.reduce(0, { $0 + cells($1) }) > Self.excerptWidth {
            var before = 0
            from = startIndex
            while from > 0, before + cells(scalars[from - 1]) <= Self.excerptWidth / 3 {
                from -= 1
                before += cells(scalars[from])
            }
            var used = 0
            to = from
            while to < scalars.count, used + cells(scalars[to]) <= Self.excerptWidth {
                used += cells(scalars[to])
                to += 1
            }
            // Near the end, the window reaches back instead.
            while to == scalars.count, from > 0, used + cells(scalars[from - 1]) <= Self.excerptWidth {
                from -= 1
                used += cells(scalars[from])
            }
        }
        let cutBefore = from > 0, cutAfter = to < scalars.count
        let number = String(span.start.line)
        var out = String(repeating: " ", count: gutterWidth - number.count) + number + " | "
        out += (cutBefore ? "…" : "") + String(String.UnicodeScalarView(scalars[from..<to])) + (cutAfter ? "…" : "") + "\n"

        // Everything before the caret mirrors the line's tabs and wide characters,
        // so the caret lands under the right character whatever the tab width.
        var lead = cutBefore ? " " : ""
        for scalar in scalars[from..<startIndex] {
            lead += scalar == "\t" ? "\t" : (Self.isWide(scalar) ? "  " : " ")
        }
        var width = 0
        for scalar in scalars[startIndex..<max(startIndex, min(endIndex, to))] { width += Self.isWide(scalar) ? 2 : 1 }
        let marker = "^" + String(repeating: "~", count: max(width - 1, 0))
        out += String(repeating: " ", count: gutterWidth + 1) + "| " + lead + style(severityColor(severity), marker) + "\n"
        return out
    }

    private func renderNote(_ note: String) -> String {
        let text = Self.sanitize(note)
        for prefix in ["note:", "help:"] where text.hasPrefix(prefix) {
            return style(bold, prefix) + text.dropFirst(prefix.count)
        }
        return style(bold, "note:") + " " + text
    }

    private let bold = "\u{1B}[1m"
    private let reset = "\u{1B}[0m"

    private func severityColor(_ severity: Diagnostic.Severity) -> String {
        switch severity {
        case .error: return "\u{1B}[1;31m"
        case .warning: return "\u{1B}[1;33m"
        case .note: return "\u{1B}[1;36m"
        }
    }

    private func style(_ code: String, _ text: String) -> String {
        color ? code + text + reset : text
    }

    /// Replaces control characters (except tab) and bidirectional overrides
    /// one for one, so columns still line up.
    static func sanitize(_ text: String) -> String {
        var needed = false
        for scalar in text.unicodeScalars where isUnsafe(scalar) { needed = true; break }
        guard needed else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            out.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }

    private static func isUnsafe(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        return (v < 0x20 && v != 0x09) || (v >= 0x7F && v <= 0x9F)
            || (v >= 0x202A && v <= 0x202E) || (v >= 0x2066 && v <= 0x2069)
    }

    /// East Asian wide and emoji ranges, which terminals draw two cells wide.
    static func isWide(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
