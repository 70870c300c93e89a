import MoonDocument

/// One entry of the top-level `dotenv:` list: a file of environment
/// variables, relative to the graph file.
public struct DotenvFile: Sendable, Hashable, Codable {
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

    /// Parses `.env` text (see `parse(_:)` for bytes).
    public static func parse(_ text: String) -> (values: Variables, problems: [Problem]) {
        parse(Array(text.utf8))
    }

    /// Parses the bytes of a `.env` file in one pass over them: lines end at
    /// `\n` (a `\r` before it is dropped); keys are ASCII, so columns count
    /// bytes up to them; values are decoded as UTF-8 (invalid bytes become
    /// U+FFFD).
    public static func parse(_ bytes: [UInt8]) -> (values: Variables, problems: [Problem]) {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    // One function over 60 lines: a byte loop whose cases share the line,
    // key and quote state, as Depfile.parse's do.
    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> (values: Variables, problems: [Problem]) {
        var values = Variables()
        var problems: [Problem] = []
        let count = b.count
        let newline = UInt8(ascii: "\n"), hash = UInt8(ascii: "#"), equals = UInt8(ascii: "=")
        let backslash = UInt8(ascii: "\\"), double = UInt8(ascii: "\""), single = UInt8(ascii: "'")
        func isBlank(_ c: UInt8) -> Bool { c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") }
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self) }

        /// One line: its first byte, the end of its text (before `\r\n` or
        /// `\n`), and where the next line starts (past `count`: none).
        struct Line { var start: Int; var stop: Int; var next: Int }
        func line(at start: Int) -> Line {
            var end = start
            while end < count && b[end] != newline { end += 1 }
            let stop = end > start && b[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
            return Line(start: start, stop: stop, next: end + 1)
        }

        var number = 0
        // A byte order mark some editors write is not part of the first key (as in a graph file).
        var position = count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF ? 3 : 0
        while position < count {
            var current = line(at: position)
            number += 1
            let first = number
            position = current.next
            var i = current.start
            while i < current.stop && isBlank(b[i]) { i += 1 }
            if i == current.stop || b[i] == hash { continue }
            if current.stop - i > 6, text(i..<i + 6) == "export", isBlank(b[i + 6]) {
                i += 6
                while i < current.stop && isBlank(b[i]) { i += 1 }
            }
            let column = i - current.start + 1
            guard let eq = (i..<current.stop).first(where: { b[$0] == equals }) else {
                problems.append(Problem(message: "expected KEY=VALUE, found '\(shorten(text(i..<current.stop)))'", line: first, column: column))
                continue
            }
            var keyEnd = eq
            while keyEnd > i && isBlank(b[keyEnd - 1]) { keyEnd -= 1 }
            guard isIdentifier(b[i..<keyEnd]) else {
                problems.append(Problem(message: "invalid variable name '\(shorten(text(i..<keyEnd)))'; names start with a letter or '_' and contain only letters, digits and '_'",
                                        line: first, column: column))
                continue
            }
            let key = text(i..<keyEnd)
            var v = eq + 1
            while v < current.stop && isBlank(b[v]) { v += 1 }
            guard v < current.stop, b[v] == single || b[v] == double else {
                // A bare value ends at a ` #` comment; surrounding blanks are dropped.
                var end = v
                while end < current.stop && !(b[end] == hash && end > v && isBlank(b[end - 1])) { end += 1 }
                while end > v && isBlank(b[end - 1]) { end -= 1 }
                values[key] = text(v..<end)
                continue
            }
            // A quoted value may run over several lines, up to its closing quote.
            let quote = b[v]
            var value: [UInt8] = []
            var closed = false
            var after = 0..<0
            var j = v + 1
            while true {
                var escaped = false
                while j < current.stop {
                    let c = b[j]
                    if escaped {
                        switch c {
                        case UInt8(ascii: "n"): value.append(newline)
                        case UInt8(ascii: "t"): value.append(UInt8(ascii: "\t"))
                        case UInt8(ascii: "r"): value.append(UInt8(ascii: "\r"))
                        case double, backslash, UInt8(ascii: "$"), single: value.append(c)
                        default: value.append(backslash); value.append(c)
                        }
                        escaped = false
                    } else if quote == double && c == backslash {
                        escaped = true
                    } else if c == quote {
                        closed = true
                        after = j + 1..<current.stop
                        break
                    } else {
                        value.append(c)
                    }
                    j += 1
                }
                if closed { break }
                if escaped { value.append(backslash) }
                // The next line, if the file has one (a final `\n` is followed by an empty line).
                guard current.next <= count else { break }
                value.append(newline)
                current = line(at: current.next)
                number += 1
                position = current.next
                j = current.start
            }
            guard closed else {
                problems.append(Problem(message: "unclosed \(quote == single ? "single" : "double") quote in the value of '\(key)'", line: first, column: column))
                continue
            }
            var rest = after.lowerBound
            while rest < after.upperBound && isBlank(b[rest]) { rest += 1 }
            if rest < after.upperBound && b[rest] != hash {
                problems.append(Problem(message: "unexpected text after the closing quote of '\(key)': '\(shorten(text(rest..<after.upperBound)))'",
                                        line: first, column: column))
                continue
            }
            values[key] = String(decoding: value, as: UTF8.self)
        }
        return (values, problems)
    }

    /// A variable name: a letter or `_`, then letters, digits and `_` (ASCII).
    private static func isIdentifier(_ name: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        func letter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") || c == UInt8(ascii: "_") }
        guard let first = name.first, letter(first) else { return false }
        return name.allSatisfy { letter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }

    private static func shorten(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}

/// Why a `dotenv:` file could not be read: `reason` names the file and says
/// what is wrong with it; `missing` when it does not exist (an optional
/// entry is then skipped).
public struct DotenvReadFailure: Error, Sendable {
    public var reason: String
    public var missing: Bool

    public init(reason: String, missing: Bool = false) {
        self.reason = reason
        self.missing = missing
    }
}

extension Graph {
    /// Reads the graph's `dotenv:` files (through `read`) into
    /// `dotenvValues`, later files over earlier ones. Returns the problems:
    /// a file that cannot be read (a missing one only when it is required),
    /// or a malformed line (located in the dotenv file).
    public mutating func loadDotenv(reading read: (String) -> Result<[UInt8], DotenvReadFailure>) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        var values = Variables()
        for file in dotenv {
            let path = file.path.hasPrefix("/") || directory == "." ? file.path
                : (directory.hasSuffix("/") ? directory + file.path : directory + "/" + file.path)
            let bytes: [UInt8]
            switch read(path) {
            case .success(let read):
                bytes = read
            case .failure(let failure) where failure.missing:
                if !file.optional {
                    diagnostics.append(.error("cannot read dotenv file '\(path)': it does not exist", at: file.span,
                                              notes: ["help: create it, or mark it optional: { path: \(file.path), optional: true }"]))
                }
                continue
            case .failure(let failure):
                diagnostics.append(.error("cannot read dotenv file '\(path)': \(failure.reason)", at: file.span))
                continue
            }
            let (parsed, problems) = Dotenv.parse(bytes)
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
