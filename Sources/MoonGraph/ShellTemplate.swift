/// Where an expression sits in a shell-form `run` script. moon never puts a
/// value into the script's text: each expression becomes a reference to a
/// variable moon sets in the node's environment (`ShellTemplate.variable`),
/// so the shell only ever expands it as data. The context decides how the
/// reference is written; a wrong guess can change word splitting, never what runs.
public enum ShellContext: Sendable, Hashable {
    /// Outside quotes: `"${MOON_EXPR_1}"`, one word.
    case word
    /// Inside `'…'`: the quote is closed, the reference inserted, and reopened: `'…'"${MOON_EXPR_1}"'…'`.
    case singleQuoted
    /// Inside `"…"` or an unquoted here-document: `${MOON_EXPR_1}`.
    case doubleQuoted
    /// Where bash evaluates text as arithmetic or as a variable name
    /// (`$(( ))`, `(( ))`, `$[ ]`, `let`, `declare -i`, `[[ … -eq … ]]`,
    /// array subscripts, `${s:OFFSET}`): it runs `$(…)` found in a subscript
    /// of the value, so the value must be a plain integer.
    case arithmetic
    /// In a `#` comment: left as written.
    case comment
    /// Where moon refuses a value (`eval`, `sh -c`, a quoted here-document,
    /// after `\` or `$`, a script moon cannot follow): `moon check` reports it, with the reason.
    case unsafe(String)
}

/// Renders shell-form `run` scripts: each `${{ … }}` becomes a reference to
/// an environment variable holding its value, written for its context. A
/// small lexer follows the script's quoting (quotes, `$(…)`, backticks,
/// `${…}`, arithmetic, comments, here-documents, `case` patterns, the words
/// of each simple command) up to each expression. Safety does not rest on
/// it: a value is never part of the script's text. The lexer decides only
/// the quoting of the reference, where bash would evaluate the value as
/// arithmetic (integers only), and where a command runs its argument as
/// code (refused). Where it cannot follow the script — an unclosed quote or
/// bracket — every expression of the script is `unsafe`.
public enum ShellTemplate {
    /// A value that cannot be passed (a non-integer in arithmetic, a NUL byte).
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// A script ready to run: its text, and the variables to set in the
    /// process's environment for it.
    public struct Rendered: Sendable, Hashable {
        public var script: String
        public var bindings: [Binding]
        public init(script: String, bindings: [Binding]) {
            self.script = script
            self.bindings = bindings
        }
    }

    public struct Binding: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The environment variable that carries the script's `k`th expression
    /// (from 0). moon's own `MOON_` prefix: set after the node's `env:`, so
    /// nothing of the graph can shadow it.
    public static func variable(_ k: Int) -> String { "MOON_EXPR_\(k + 1)" }

    /// The context of each expression of `template`, in order.
    public static func contexts(of template: Template, shell: Shell) -> [ShellContext] {
        var lexer = ShellLexer(template: template, bash: shell == .bash)
        return lexer.run()
    }

    /// The script with every expression replaced by a reference to its
    /// variable, and the variables' values. `words` gives the items of a
    /// list value (nil for a scalar): where the expression is a word of its
    /// own, each item becomes a reference of its own, so each is one word
    /// (and an empty list no word); inside quotes the list reads as its
    /// items joined by spaces.
    public static func render(_ template: Template, shell: Shell, value: (Expression) throws -> String,
                              words: (Expression) throws -> [String]? = { _ in nil }) throws -> Rendered {
        let contexts = self.contexts(of: template, shell: shell)
        var out = ""
        var bindings: [Binding] = []
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
                if case .word = context, let items = try words(expression) {
                    var references: [String] = []
                    for item in items {
                        try check(item, of: expression, context: context)
                        let name = variable(bindings.count)
                        bindings.append(Binding(name: name, value: item))
                        references.append("\"${\(name)}\"")
                    }
                    out += references.joined(separator: " ")
                    continue
                }
                let v = try value(expression)
                try check(v, of: expression, context: context)
                let name = variable(bindings.count)
                bindings.append(Binding(name: name, value: v))
                switch context {
                case .word: out += "\"${\(name)}\""
                case .singleQuoted: out += "'\"${\(name)}\"'"
                case .doubleQuoted, .arithmetic: out += "${\(name)}"
                case .comment, .unsafe: break
                }
            }
        }
        return Rendered(script: out, bindings: bindings)
    }

    /// Refuses a value that cannot be passed where `expression` stands.
    private static func check(_ v: String, of expression: Expression, context: ShellContext) throws {
        if v.unicodeScalars.contains("\0") { throw Failure("the value of \(expression.raw) contains a NUL byte") }
        if case .arithmetic = context, !isInteger(v) {
            throw Failure("\(expression.raw) is where bash evaluates arithmetic (or a variable name), so its value must be a plain integer; it is '\(preview(v))'")
        }
        if hasSubscriptSubstitution(v) {
            throw Failure("the value of \(expression.raw) ('\(preview(v))') has a '$(' or '`' after a '[': bash runs that as a command wherever it evaluates the value as arithmetic or a variable name, which moon cannot see everywhere, so it is refused in a shell script; pass it through 'env:' and use \"$NAME\" if you must")
        }
    }

    /// Refuses an `env:` value made with an expression that bash would
    /// run if the node's script read it as arithmetic or a name
    /// (`declare -i n=$N` with `N` = `a[$(cmd)]`): moon cannot see where a
    /// script reads a variable, so the shape is refused in the environment of
    /// a node that runs a shell, as it is in the script's own values.
    public static func checkEnvironmentValue(_ v: String, name: String) throws {
        guard hasSubscriptSubstitution(v) else { return }
        throw Failure("the value of env \(name) ('\(preview(v))') has a '$(' or '`' after a '[': bash runs that as a command wherever it evaluates the value as arithmetic or a variable name (declare -i n=$\(name), $(( \(name) )), [[ -v … ]]), so it is refused in the environment of a node that runs a shell")
    }

    /// Whether `program` (an exec-form `run`'s first word) is a shell.
    public static func isShell(_ program: String) -> Bool {
        ShellCommands.shells.contains(String(program.split(separator: "/").last ?? ""))
    }

    /// One single-quoted shell word: `it's` -> `'it'\\''s'`.
    public static func quote(_ value: String) -> String {
        "'" + value.replacing("'", with: "'\\''") + "'"
    }

    static func isInteger(_ text: String) -> Bool {
        var digits = Substring(text)
        if digits.first == "-" || digits.first == "+" { digits = digits.dropFirst() }
        return !digits.isEmpty && digits.count <= 18 && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// `a[$(cmd)]`: the one shape of data that bash executes, when it
    /// evaluates it as arithmetic or a name (`let`, `declare -i`, `read`,
    /// `printf -v`, `${!x}`, `[[ -v ]]`, a variable with the integer attribute).
    static func hasSubscriptSubstitution(_ text: String) -> Bool {
        guard let bracket = text.utf8.firstIndex(of: UInt8(ascii: "[")) else { return false }
        let rest = text.utf8[bracket...]
        if rest.contains(UInt8(ascii: "`")) { return true }
        var previous: UInt8 = 0
        for byte in rest {
            if previous == UInt8(ascii: "$") && byte == UInt8(ascii: "(") { return true }
            previous = byte
        }
        return false
    }

    public static func preview(_ text: String) -> String {
        let line = text.prefix { $0 != "\n" }
        return line.count > 60 || line.count < text.count ? String(line.prefix(60)) + "…" : String(line)
    }
}

extension ShellContext {
    var isUnsafe: Bool {
        if case .unsafe = self { return true }
        return false
    }
}
