/// Where an expression sits in a shell-form `run` script, which decides how
/// its value is quoted so that it is always data, never code.
public enum ShellContext: Sendable, Hashable {
    /// Outside quotes: inserted as one single-quoted word, `'v'`.
    case word
    /// Inside `'…'`: the quote is closed, the word inserted, and reopened: `'…''v''…'`.
    case singleQuoted
    /// Inside `"…"`: the same with double quotes: `"…"'v'"…"`.
    case doubleQuoted
    /// Inside `$(( … ))`, `(( … ))` or `$[ … ]`: the shell evaluates the text
    /// (bash even runs `$(…)` found in array subscripts), so only an integer is inserted.
    case arithmetic
    /// In a `#` comment: left as written.
    case comment
    /// Where no quoting is safe (backticks, here-documents, `${…}`, after `\`
    /// or `$`): `moon check` reports it, with the reason.
    case unsafe(String)
}

/// Renders shell-form `run` scripts with their expressions quoted as their
/// context requires. A small lexer follows the script's quoting (quotes,
/// `$(…)`, backticks, `${…}`, arithmetic, comments, here-documents, `case`
/// patterns) up to each expression. Where it cannot be sure — an unclosed
/// quote or bracket — every expression of the script is `unsafe`, so a
/// mistake of the lexer is a check error, never an injection.
public enum ShellTemplate {
    /// A value that cannot be inserted (a non-integer in arithmetic, a NUL byte).
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The context of each expression of `template`, in order.
    public static func contexts(of template: Template, shell: Shell) -> [ShellContext] {
        var lexer = Lexer(template: template, bash: shell == .bash)
        return lexer.run()
    }

    /// The script with every expression replaced by its quoted value.
    public static func render(_ template: Template, shell: Shell, value: (Expression) throws -> String) throws -> String {
        let contexts = self.contexts(of: template, shell: shell)
        var out = ""
        var k = 0
        for part in template.parts {
            switch part {
            case .literal(let text):
                out += text
            case .expression(let expression):
                let context = contexts[k]
                k += 1
                if case .comment = context {
                    out += expression.raw
                    continue
                }
                if case .unsafe(let reason) = context { throw Failure(reason) }
                let v = try value(expression)
                if v.unicodeScalars.contains("\0") { throw Failure("the value of \(expression.raw) contains a NUL byte") }
                switch context {
                case .word: out += quote(v)
                case .singleQuoted: out += "'" + quote(v) + "'"
                case .doubleQuoted: out += "\"" + quote(v) + "\""
                case .arithmetic:
                    guard isInteger(v) else {
                        throw Failure("\(expression.raw) is inside an arithmetic expression, where only integers are inserted; its value is not one")
                    }
                    out += v
                case .comment, .unsafe: break
                }
            }
        }
        return out
    }

    /// One single-quoted shell word: `it's` -> `'it'\''s'`.
    public static func quote(_ value: String) -> String {
        "'" + value.replacing("'", with: "'\\''") + "'"
    }

    static func isInteger(_ text: String) -> Bool {
        var digits = Substring(text)
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.count <= 18 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    // MARK: - The lexer

    private struct Lexer {
        enum Element { case char(Unicode.Scalar), expression(Int) }
        enum Kind { case top, command, single, ansiC, double, backtick, parameter, arithmetic, bracketArithmetic, comment }
        struct Frame {
            var kind: Kind
            var parens = 0
            var cases = 0
        }
        struct HereDocument {
            var delimiter: String?
            var stripTabs: Bool
        }

        let bash: Bool
        var elements: [Element] = []
        var contexts: [ShellContext] = []
        var stack = [Frame(kind: .top)]
        var pending: [HereDocument] = []
        var atWordStart = true
        var word = ""
        var i = 0

        init(template: Template, bash: Bool) {
            self.bash = bash
            for part in template.parts {
                switch part {
                case .literal(let text): elements.append(contentsOf: text.unicodeScalars.map(Element.char))
                case .expression:
                    elements.append(.expression(contexts.count))
                    // Replaced when the lexer reaches it; an expression it never placed stays unsafe.
                    contexts.append(.unsafe("moon could not tell where this expression sits in the script; pass the value through 'env:' and use \"$NAME\""))
                }
            }
        }

        func char(_ at: Int) -> Unicode.Scalar? {
            guard at < elements.count, case .char(let c) = elements[at] else { return nil }
            return c
        }

        var kind: Kind { stack[stack.count - 1].kind }

        mutating func run() -> [ShellContext] {
            while i < elements.count {
                switch elements[i] {
                case .expression(let k):
                    contexts[k] = context(for: k)
                    atWordStart = false
                    word = ""
                    i += 1
                case .char(let c):
                    step(c)
                }
            }
            if kind == .comment { stack.removeLast() }
            if stack.count != 1 || !pending.isEmpty {
                let reason = "moon cannot follow the quoting of this script (an unclosed quote, bracket or here-document), so it cannot insert this value safely; pass it through 'env:' and use \"$NAME\""
                for k in contexts.indices where !contexts[k].isUnsafe { contexts[k] = .unsafe(reason) }
            }
            return contexts
        }

        /// The context of expression `k` at the current position.
        func context(for k: Int) -> ShellContext {
            let previous = i > 0 ? char(i - 1) : nil
            switch kind {
            case .comment: return .comment
            case .single: return .singleQuoted
            case .ansiC: return .unsafe("an expression inside $'…' cannot be quoted safely; pass the value through 'env:' and use \"$NAME\"")
            case .backtick: return .unsafe("an expression inside backticks cannot be quoted safely; use $(…) instead, or pass the value through 'env:' and use \"$NAME\"")
            case .parameter: return .unsafe("an expression inside ${…} cannot be quoted safely; pass the value through 'env:' and use \"$NAME\"")
            case .arithmetic, .bracketArithmetic: return .arithmetic
            case .top, .command, .double:
                if previous == "\\" && escapeIsActive(before: i - 1) {
                    return .unsafe("a backslash right before ${{ … }} would escape moon's quoting; remove it")
                }
                if previous == "$" {
                    return .unsafe("a '$' right before ${{ … }} would change how the shell reads the value; remove it or put a space between")
                }
                return kind == .double ? .doubleQuoted : .word
            }
        }

        /// Whether the backslash at `at` escapes what follows (an odd run of backslashes).
        func escapeIsActive(before at: Int) -> Bool {
            var n = 0
            var j = at
            while j >= 0, char(j) == "\\" { n += 1; j -= 1 }
            return n % 2 == 1
        }

        /// A backslash escapes the next character; an expression after it is
        /// not skipped, so it is still placed (and found unsafe).
        mutating func skipEscape() {
            i += 1
            if char(i) != nil { i += 1 }
        }

        static let operators: Set<Unicode.Scalar> = [";", "&", "|", "(", ")", "<", ">"]

        mutating func step(_ c: Unicode.Scalar) {
            switch kind {
            case .comment:
                if c == "\n" { stack.removeLast() } else { i += 1 }
            case .single:
                if c == "'" { stack.removeLast() }
                i += 1
            case .ansiC:
                if c == "\\" { skipEscape(); return }
                if c == "'" { stack.removeLast() }
                i += 1
            case .backtick:
                if c == "\\" { skipEscape(); return }
                if c == "`" { stack.removeLast() }
                i += 1
            case .double:
                if c == "\\" { skipEscape(); return }
                if c == "\"" { stack.removeLast(); i += 1; return }
                if c == "`" { stack.append(Frame(kind: .backtick)); i += 1; return }
                if c == "$" { dollar(); return }
                i += 1
            case .parameter:
                if c == "\\" { skipEscape(); return }
                if c == "}" {
                    if stack[stack.count - 1].parens == 0 { stack.removeLast() } else { stack[stack.count - 1].parens -= 1 }
                    i += 1
                    return
                }
                if c == "{" { stack[stack.count - 1].parens += 1; i += 1; return }
                if c == "'" && stack[stack.count - 2].kind != .double { stack.append(Frame(kind: .single)); i += 1; return }
                if c == "\"" { stack.append(Frame(kind: .double)); i += 1; return }
                if c == "`" { stack.append(Frame(kind: .backtick)); i += 1; return }
                if c == "$" { dollar(); return }
                i += 1
            case .arithmetic:
                if c == "(" { stack[stack.count - 1].parens += 1 }
                if c == ")" {
                    stack[stack.count - 1].parens -= 1
                    if stack[stack.count - 1].parens == 0 { stack.removeLast() }
                }
                if c == "$" { dollar(); return }
                i += 1
            case .bracketArithmetic:
                if c == "]" { stack.removeLast() }
                if c == "$" { dollar(); return }
                i += 1
            case .top, .command:
                code(c)
            }
        }

        /// `$` followed by `((`, `(`, `{`, `[` or (bash) `'` opens a construct.
        mutating func dollar() {
            let next = char(i + 1)
            if next == "(" && char(i + 2) == "(" {
                stack.append(Frame(kind: .arithmetic, parens: 2))
                i += 3
            } else if next == "(" {
                stack.append(Frame(kind: .command))
                i += 2
            } else if next == "{" {
                stack.append(Frame(kind: .parameter))
                i += 2
            } else if next == "[" {
                stack.append(Frame(kind: .bracketArithmetic))
                i += 2
            } else if next == "'" && bash && kind != .double {
                stack.append(Frame(kind: .ansiC))
                i += 2
            } else {
                i += 1
            }
            atWordStart = false
        }

        /// Unquoted shell code (the script, or the inside of `$(…)`).
        mutating func code(_ c: Unicode.Scalar) {
            let boundary = c == " " || c == "\t" || c == "\n" || Self.operators.contains(c)
            if boundary {
                if word == "case" { stack[stack.count - 1].cases += 1 }
                if word == "esac" { stack[stack.count - 1].cases = max(0, stack[stack.count - 1].cases - 1) }
                word = ""
            } else if c != "\\" {
                word.unicodeScalars.append(c)
            }
            let wasWordStart = atWordStart
            atWordStart = boundary
            switch c {
            case "\\":
                skipEscape()
            case "'":
                stack.append(Frame(kind: .single)); i += 1
            case "\"":
                stack.append(Frame(kind: .double)); i += 1
            case "`":
                stack.append(Frame(kind: .backtick)); i += 1
            case "$":
                dollar()
            case "#" where wasWordStart:
                stack.append(Frame(kind: .comment)); i += 1
            case "(":
                if wasWordStart && char(i + 1) == "(" {
                    stack.append(Frame(kind: .arithmetic, parens: 2))
                    i += 2
                } else {
                    stack[stack.count - 1].parens += 1
                    i += 1
                }
            case ")":
                if stack[stack.count - 1].parens > 0 {
                    stack[stack.count - 1].parens -= 1
                } else if stack[stack.count - 1].cases > 0 {
                    // A case pattern's `)`.
                } else if kind == .command {
                    stack.removeLast()
                    atWordStart = false
                }
                i += 1
            case "<" where char(i + 1) == "<":
                if char(i + 2) == "<" { i += 3 } else { hereDocumentOperator() }
            case "\n":
                i += 1
                if !pending.isEmpty { hereDocumentBodies() }
            default:
                i += 1
            }
        }

        /// `<<WORD` or `<<-WORD`: remember the delimiter; the body starts after the line.
        mutating func hereDocumentOperator() {
            i += 2
            var strip = false
            if char(i) == "-" { strip = true; i += 1 }
            while char(i) == " " || char(i) == "\t" { i += 1 }
            var delimiter = ""
            var known = true
            loop: while i < elements.count {
                switch elements[i] {
                case .expression(let k):
                    contexts[k] = .unsafe("an expression cannot be a here-document's delimiter")
                    known = false
                    i += 1
                case .char(let c):
                    if c == " " || c == "\t" || c == "\n" || Self.operators.contains(c) { break loop }
                    if c == "\\" {
                        if let next = char(i + 1) { delimiter.unicodeScalars.append(next) }
                        i += 2
                    } else if c == "'" || c == "\"" {
                        i += 1
                        while i < elements.count, char(i) != c {
                            if let inner = char(i) { delimiter.unicodeScalars.append(inner) } else { known = false }
                            i += 1
                        }
                        i += 1
                    } else {
                        delimiter.unicodeScalars.append(c)
                        i += 1
                    }
                }
            }
            pending.append(HereDocument(delimiter: known && !delimiter.isEmpty ? delimiter : nil, stripTabs: strip))
            atWordStart = false
        }

        /// The bodies of the pending here-documents, line by line up to each delimiter.
        mutating func hereDocumentBodies() {
            while let document = pending.first {
                var line = ""
                var hasExpression = false
                var expressions: [Int] = []
                var ended = false
                while i < elements.count {
                    switch elements[i] {
                    case .expression(let k):
                        hasExpression = true
                        expressions.append(k)
                    case .char(let c):
                        if c == "\n" { ended = true } else { line.unicodeScalars.append(c) }
                    }
                    i += 1
                    if ended { break }
                }
                for k in expressions {
                    contexts[k] = .unsafe("an expression inside a here-document cannot be quoted safely; pass the value through 'env:' and use \"$NAME\"")
                }
                let compared = document.stripTabs ? String(line.drop { $0 == "\t" }) : line
                if !hasExpression, let delimiter = document.delimiter, compared == delimiter {
                    pending.removeFirst()
                    continue
                }
                if i >= elements.count && !ended { return }  // unterminated: left pending
                if i >= elements.count { return }
            }
            atWordStart = true
        }
    }
}

extension ShellContext {
    var isUnsafe: Bool {
        if case .unsafe = self { return true }
        return false
    }
}
