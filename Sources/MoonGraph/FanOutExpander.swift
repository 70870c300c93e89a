import MoonDocument
import MoonSystem

/// Turns a node's `for-each` or `matrix` into its instances: the items of
/// a list, the files of a glob (sorted, relative to the graph file's
/// directory), or the combinations of a matrix after `exclude` and
/// `include` (GitHub Actions' rules). Linear in the number of instances.
struct FanOutExpander {
    let vars: Variables
    let files: GraphFileAccess
    /// The directory globs are relative to.
    let directory: String
    private(set) var diagnostics: [Diagnostic] = []

    init(vars: Variables, files: GraphFileAccess, directory: String) {
        self.vars = vars
        self.files = files
        self.directory = directory
    }

    /// The instances of template `name`; nil for a dynamic `for-each` (expanded at run time).
    mutating func instances(of name: String, _ fanOut: FanOutDeclaration) -> [NodeInstance]? {
        switch fanOut {
        case .list(let items, let span):
            guard items.count <= FanOutLimit.instances else {
                diagnostics.append(.error("the list of '\(name)' has \(items.count) items; \(FanOutLimit.beyond)", at: span, notes: [FanOutLimit.help]))
                return []
            }
            return unique(items.map { NodeInstance(template: name, label: $0.item, item: $0.item) }, of: name, at: span,
                          spans: items.map(\.span))
        case .glob(let written, let exclude, let allowEmpty, let span):
            guard let pattern = substitute(written, at: span), let excluded = exclude.map({ substitute($0, at: span) }) as [String?]?,
                  !excluded.contains(nil) else { return [] }
            let matches = files.glob(directory, pattern, excluded.compactMap { $0 })
            let found = matches.files
            if !matches.unnamable.isEmpty {
                // Refused, not dropped: an instance named with a replacement character would name another file.
                let shown = matches.unnamable.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
                    + (matches.unnamable.count > 3 ? " and \(matches.unnamable.count - 3) more" : "")
                diagnostics.append(.error("the glob '\(pattern)' matches \(shown), whose name is not UTF-8; an instance is named after its file, so it must be text",
                                          at: span, notes: ["help: rename the file, or leave it out with 'exclude'"]))
                return []
            }
            if found.isEmpty && !allowEmpty {
                diagnostics.append(.error("the glob '\(pattern)' matches no file (relative to \(directory == "." ? "the graph file's directory" : directory))",
                                          at: span, notes: ["help: fix the pattern, or add 'allow-empty: true' to run no instance when nothing matches"]))
            }
            guard found.count <= FanOutLimit.instances else {
                diagnostics.append(.error("the glob '\(pattern)' matches \(found.count) files; \(FanOutLimit.beyond)", at: span, notes: [FanOutLimit.help]))
                return []
            }
            return unique(found.map { NodeInstance(template: name, label: $0, item: $0) }, of: name, at: span, spans: [])
        case .dynamic:
            return nil
        case .matrix(let matrix):
            let count = Self.combinationCount(matrix)
            guard let count, count <= FanOutLimit.instances else {
                let counted = count.map { "\($0)" } ?? "more than \(FanOutLimit.instances)"
                diagnostics.append(.error("the matrix of '\(name)' has \(counted) combinations; \(FanOutLimit.beyond)", at: matrix.span,
                                          notes: [FanOutLimit.help]))
                return []
            }
            return unique(combinations(matrix).map { values in
                NodeInstance(template: name, label: values.map(\.value).joined(separator: ","), matrix: values)
            }, of: name, at: matrix.span, spans: [])
        }
    }

    /// How many combinations `combinations` makes at most: the product of
    /// the keys' value counts (before `exclude`) and one per `include`
    /// entry; nil when that is past Int's range.
    static func combinationCount(_ matrix: MatrixDeclaration) -> Int? {
        var count = matrix.keys.isEmpty ? 0 : 1
        for values in matrix.values {
            let (product, overflow) = count.multipliedReportingOverflow(by: values.count)
            if overflow { return nil }
            count = product
        }
        let (total, overflow) = count.addingReportingOverflow(matrix.include.count)
        return overflow ? nil : total
    }

    /// `matrix`: the product of the keys' values (the first key varies
    /// slowest), without the combinations an `exclude` entry matches; then
    /// each `include` entry adds its other keys to every combination whose
    /// matrix keys it matches, or is a combination of its own when it matches none.
    func combinations(_ matrix: MatrixDeclaration) -> [Variables] {
        var result: [Variables] = matrix.keys.isEmpty ? [] : [Variables()]
        for (key, values) in zip(matrix.keys, matrix.values) {
            var next: [Variables] = []
            next.reserveCapacity(result.count * values.count)
            for combination in result {
                for value in values {
                    var extended = combination
                    extended[key] = value
                    next.append(extended)
                }
            }
            result = next
        }
        result.removeAll { combination in
            matrix.exclude.contains { entry in entry.allSatisfy { combination[$0.name] == $0.value } }
        }
        for entry in matrix.include {
            var matched = false
            for i in result.indices {
                let fits = entry.allSatisfy { !matrix.keys.contains($0.name) || result[i][$0.name] == $0.value }
                guard fits else { continue }
                for pair in entry where !matrix.keys.contains(pair.name) { result[i][pair.name] = pair.value }
                matched = true
            }
            if !matched { result.append(entry) }
        }
        return result
    }

    /// `vars` in a glob (only vars: the glob is read before anything runs).
    private mutating func substitute(_ text: String, at span: SourceSpan) -> String? {
        guard Template.containsExpression(text) else { return text }
        let (template, problems) = Template.parse(text)
        if let problem = problems.first {
            diagnostics.append(.error(problem.message, at: span))
            return nil
        }
        var out = ""
        for part in template.parts {
            switch part {
            case .literal(let literal): out += literal
            case .expression(let e):
                guard case .variable(let name) = e.reference, let value = vars[name] else {
                    diagnostics.append(.error("a for-each glob can only read declared vars, not \(e.raw)", at: span))
                    return nil
                }
                out += value
            }
        }
        return out
    }

    /// Instances with distinct labels, each label printable: a name must
    /// say which instance it is, on one line.
    private mutating func unique(_ instances: [NodeInstance], of name: String, at span: SourceSpan, spans: [SourceSpan]) -> [NodeInstance] {
        var seen: Set<String> = []
        seen.reserveCapacity(instances.count)
        var result: [NodeInstance] = []
        result.reserveCapacity(instances.count)
        for (i, instance) in instances.enumerated() {
            let at = i < spans.count ? spans[i] : span
            // A name shown in a listing must be the name that selects the instance:
            // no character a terminal drops, acts on or reorders (`FileName.isHidden`).
            if instance.label.isEmpty || instance.label.unicodeScalars.contains(where: FileName.isHidden) {
                diagnostics.append(.error("an instance of '\(name)' would be named '\(name)[\(FileName.shown(instance.label))]'; an item must be non-empty and on one line without control characters (nor bidirectional overrides)", at: at))
                continue
            }
            guard seen.insert(instance.label).inserted else {
                diagnostics.append(.error("'\(name)' has the instance '\(instance.name)' twice; each item or combination must be distinct", at: at))
                continue
            }
            result.append(instance)
        }
        return result
    }
}
