import MoonDocument

/// One entry of the top-level `dotenv:` list: a file of environment
/// variables, relative to the graph file.
public struct DotenvFile: Sendable, Hashable {
    public var path: String
    /// When true, a missing file is skipped; otherwise it is an error.
    public var optional: Bool
    /// Where the entry is written, for "cannot read" errors.
    public var span: SourceSpan?

    public init(path: String, optional: Bool = false, span: SourceSpan? = nil) {
        self.path = path
        self.optional = optional
        self.span = span
    }
}

/// The `.env` format, as docker compose, just and python-dotenv read it:
/// `KEY=VALUE` lines, an optional `export ` in front, `#` comments, blank
/// lines, and values that are bare (trimmed; ` #` starts a comment), in
/// single quotes (literal, may span lines) or in double quotes (`\n`, `\t`,
/// `\r`, `\"`, `\\` escapes; may span lines). Nothing is expanded: `$X` in a
/// value is the two characters `$X`.
public enum Dotenv {
    public struct Problem: Error, Sendable, Hashable {
        public var message: String
        public var line: Int
        public var column: Int
    }

    public static func parse(_ text: String) -> (values: Variables, problems: [Problem]) {
        var values = Variables()
        var problems: [Problem] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
        }
        var n = 0
        while n < lines.count {
            let number = n + 1
            var rest = Substring(lines[n])
            n += 1
            rest = rest.drop { $0 == " " || $0 == "\t" }
            if rest.isEmpty || rest.hasPrefix("#") { continue }
            if rest.hasPrefix("export ") || rest.hasPrefix("export\t") {
                rest = rest.dropFirst("export".count).drop { $0 == " " || $0 == "\t" }
            }
            let column = lines[n - 1].count - rest.count + 1
            guard let eq = rest.firstIndex(of: "=") else {
                problems.append(Problem(message: "expected KEY=VALUE, found '\(shorten(rest))'", line: number, column: column))
                continue
            }
            let key = String(rest[..<eq].reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            guard GraphDecoder.isIdentifier(key, allowDash: false) else {
                problems.append(Problem(message: "invalid variable name '\(shorten(Substring(key)))'; names start with a letter or '_' and contain only letters, digits and '_'",
                                        line: number, column: column))
                continue
            }
            var value = rest[rest.index(after: eq)...].drop { $0 == " " || $0 == "\t" }
            if let quote = value.first, quote == "'" || quote == "\"" {
                // A quoted value may run over several lines, up to its closing quote.
                value = value.dropFirst()
                var text = ""
                var closed = false
                var trailing = Substring("")
                var current = value
                while true {
                    var escaped = false
                    var index = current.startIndex
                    while index < current.endIndex {
                        let c = current[index]
                        if quote == "\"" && escaped {
                            switch c {
                            case "n": text.append("\n")
                            case "t": text.append("\t")
                            case "r": text.append("\r")
                            case "\"", "\\", "$", "'": text.append(c)
                            default: text.append("\\"); text.append(c)
                            }
                            escaped = false
                        } else if quote == "\"" && c == "\\" {
                            escaped = true
                        } else if c == quote {
                            closed = true
                            trailing = current[current.index(after: index)...]
                            break
                        } else {
                            text.append(c)
                        }
                        index = current.index(after: index)
                    }
                    if closed { break }
                    if escaped { text.append("\\") }
                    guard n < lines.count else { break }
                    text.append("\n")
                    current = Substring(lines[n])
                    n += 1
                }
                guard closed else {
                    problems.append(Problem(message: "unclosed \(quote == "'" ? "single" : "double") quote in the value of '\(key)'", line: number, column: column))
                    continue
                }
                let after = trailing.drop { $0 == " " || $0 == "\t" }
                if !after.isEmpty && !after.hasPrefix("#") {
                    problems.append(Problem(message: "unexpected text after the closing quote of '\(key)': '\(shorten(after))'", line: number, column: column))
                    continue
                }
                values[key] = text
            } else {
                // A bare value ends at a ` #` comment; surrounding blanks are dropped.
                var bare = value
                if let hash = bare.indices.first(where: { bare[$0] == "#" && $0 > bare.startIndex && (bare[bare.index(before: $0)] == " " || bare[bare.index(before: $0)] == "\t") }) {
                    bare = bare[..<hash]
                }
                values[key] = String(bare.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            }
        }
        return (values, problems)
    }

    private static func shorten(_ text: Substring) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : String(text)
    }
}

extension Graph {
    /// Reads the graph's `dotenv:` files (through `read`, which returns nil
    /// for a file that cannot be read) into `dotenvValues`, later files over
    /// earlier ones. Returns the problems: a missing required file, or a
    /// malformed line (located in the dotenv file).
    public mutating func loadDotenv(reading read: (String) -> [UInt8]?) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        var values = Variables()
        for file in dotenv {
            let path = file.path.hasPrefix("/") || directory == "." ? file.path
                : (directory.hasSuffix("/") ? directory + file.path : directory + "/" + file.path)
            guard let bytes = read(path) else {
                if !file.optional {
                    diagnostics.append(.error("cannot read dotenv file '\(path)'", at: file.span,
                                              notes: ["help: create it, or mark it optional: { path: \(file.path), optional: true }"]))
                }
                continue
            }
            let (parsed, problems) = Dotenv.parse(String(decoding: bytes, as: UTF8.self))
            for problem in problems {
                let location = SourceLocation(line: problem.line, column: problem.column, offset: 0)
                diagnostics.append(.error(problem.message, at: SourceSpan(file: path, start: location, end: location)))
            }
            values = values.merging(parsed)
        }
        dotenvValues = values
        return diagnostics
    }
}
