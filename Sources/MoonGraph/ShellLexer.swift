/// The lexer behind `ShellTemplate`: it follows a shell-form script's
/// quoting (quotes, `$(…)`, backticks, `${…}`, arithmetic, comments,
/// here-documents, `case` patterns, the words of each simple command) up to
/// each expression and tells the expression's `ShellContext`. Which commands
/// run their arguments as code is `ShellCommands`. One file over 400 lines:
/// a single state machine over one stack of frames, whose states read together.
struct ShellLexer {
    enum Element { case char(Unicode.Scalar), expression(Int) }
    enum Kind {
        case top, command, single, ansiC, double, backtick, parameter, arithmetic, bracketArithmetic, arraySubscript, comment
        case hereDocument(quoted: Bool)

        var isDouble: Bool {
            if case .double = self { return true }
            return false
        }
        var isHereDocument: Bool {
            if case .hereDocument = self { return true }
            return false
        }
    }
    struct Frame {
        var kind: Kind
        var parens = 0
        var cases = 0
        /// Code frames: the current word's unquoted characters, whether a
        /// word has begun, and the words of the current simple command.
        var word = ""
        var inWord = false
        var words: [String] = []
        /// Expressions of the current `[[ … ]]`, arithmetic if it compares numbers.
        var conditional: [Int] = []
        /// Expressions since the start of the line (or of the group
        /// `{ …; }`, `( … )` spanning lines), refused if a later command
        /// of it is a shell reading its stdin (`… | sh`).
        var pipeline: [Int] = []
        var braces = 0
        /// Expressions of the current simple command (also those inside its `$(…)`).
        var expressions: [Int] = []
        /// The next word is a redirection's target.
        var redirection = false
        /// `<(…)` or `>(…)`: a file name argument of the command around it.
        var processSubstitution = false
        /// A command of the current pipeline that is a shell reading its
        /// stdin (for here-documents of the line).
        var pipelineShell: String?
        /// Here-documents: whether their text is a shell's script.
        var feedsShell: String?
        /// `${…}`: its text so far, which tells a subscript or offset from a default word.
        var text = ""
        /// Here-documents: the delimiter (nil: moon could not read it),
        /// whether leading tabs are stripped, and whether a line starts here.
        var delimiter: String?
        var stripTabs = false
        var lineStart = true
        /// The inner frame of a `((` in bash: its words are also arithmetic.
        var bashArithmetic = false
        /// No word since a `|`: a newline here continues the pipeline.
        var afterPipe = false
    }
    struct HereDocument {
        var delimiter: String?
        var stripTabs: Bool
        var quoted: Bool
        /// The command the operator belongs to (its words so far).
        var command: [String]
    }

    let bash: Bool
    var elements: [Element] = []
    var contexts: [ShellContext] = []
    var stack = [Frame(kind: .top)]
    var pending: [HereDocument] = []
    var atWordStart = true
    var i = 0

    init(template: Template, bash: Bool) {
        self.bash = bash
        for part in template.parts {
            switch part {
            case .literal(let text): elements.append(contentsOf: text.unicodeScalars.map(Element.char))
            case .expression:
                elements.append(.expression(contexts.count))
                // Replaced when the lexer reaches it; an expression it never placed stays unsafe.
                contexts.append(.unsafe("moon could not tell where this expression sits in the script; \(ShellCommands.envHint)"))
            }
        }
    }

    func char(_ at: Int) -> Unicode.Scalar? {
        guard at < elements.count, case .char(let c) = elements[at] else { return nil }
        return c
    }

    var kind: Kind { stack[stack.count - 1].kind }
    var top: Frame {
        get { stack[stack.count - 1] }
        set { stack[stack.count - 1] = newValue }
    }

    mutating func run() -> [ShellContext] {
        while i < elements.count {
            switch elements[i] {
            case .expression(let k):
                contexts[k] = context(for: k)
                atWordStart = false
                if case .hereDocument = kind { top.lineStart = false }
                if isCode(kind) { top.inWord = true }
                i += 1
            case .char(let c):
                step(c)
            }
        }
        if case .comment = kind { stack.removeLast() }
        if isCode(kind) { endWord(); endCommand() }
        if stack.count != 1 || !pending.isEmpty {
            let reason = "moon cannot follow the quoting of this script (an unclosed quote, bracket or here-document), so it cannot tell how to pass this value; \(ShellCommands.envHint)"
            for k in contexts.indices where !contexts[k].isUnsafe { contexts[k] = .unsafe(reason) }
        }
        return contexts
    }

    func isCode(_ kind: Kind) -> Bool {
        switch kind {
        case .top, .command, .backtick: return true
        default: return false
        }
    }

    /// The context of expression `k` at the current position. Besides
    /// where it sits, every enclosing command counts: `eval "$(echo X)"`
    /// runs what the inner command prints.
    mutating func context(for k: Int) -> ShellContext {
        let inner = innerContext(for: k)
        if case .comment = inner { return inner }
        for j in stack.indices where isCode(stack[j].kind) {
            stack[j].expressions.append(k)
            stack[j].pipeline.append(k)
        }
        if inner.isUnsafe { return inner }
        for j in stack.indices.reversed() {
            if isCode(stack[j].kind), let reason = codeReason(stack[j]) { return .unsafe(reason) }
            if isCode(stack[j].kind), j + 1 < stack.count, stack[j + 1].processSubstitution,
               let name = ShellCommands.commandName(stack[j].words), ShellCommands.readsFiles(name) {
                return .unsafe("\(name) runs the file <(…) names as shell code, so a value there would be code; pass the value through 'env:' and refer to it as \"$NAME\" in that script")
            }
            if let shell = stack[j].feedsShell {
                return .unsafe("this here-document is the script of \(shell), which runs it as shell code, so a value there would be code; pass the value through 'env:' and refer to it as \"$NAME\" in that script")
            }
        }
        return inner
    }

    mutating func innerContext(for k: Int) -> ShellContext {
        let previous = i > 0 ? char(i - 1) : nil
        switch kind {
        case .comment: return .comment
        case .ansiC: return .unsafe("an expression inside $'…' cannot be passed; \(ShellCommands.envHint)")
        case .hereDocument(let quoted):
            if quoted {
                return .unsafe("nothing is expanded in a here-document whose delimiter is quoted, so a value cannot reach it; use an unquoted delimiter (<<EOF), or \(ShellCommands.envHint)")
            }
            return .doubleQuoted
        case .parameter: return parameterContext(top.text)
        case .arithmetic, .bracketArithmetic, .arraySubscript: return .arithmetic
        case .top, .command, .backtick, .double, .single:
            if case .single = kind {} else {
                if previous == "\\" && escapeIsActive(before: i - 1) {
                    return .unsafe("a backslash right before ${{ … }} would change how the shell reads it; remove it")
                }
                if previous == "$" {
                    return .unsafe("a '$' right before ${{ … }} would change how the shell reads it; remove it or put a space between")
                }
            }
            // The code frame whose simple command holds the expression.
            var j = stack.count - 1
            while j > 0, !isCode(stack[j].kind) {
                switch stack[j].kind {
                case .single, .double: j -= 1
                default: return kind.isDouble ? .doubleQuoted : .word
                }
            }
            let command = stack[j].words
            if let reason = codeReason(stack[j]) { return .unsafe(reason) }
            if let name = ShellCommands.assignedVariable(stack[j].word, in: command), ShellCommands.evaluatesVariable(name) {
                return .unsafe(ShellCommands.variableReason(name))
            }
            if ShellCommands.isArithmeticCommand(command) || stack[j].bashArithmetic { return .arithmetic }
            if ShellCommands.commandName(command) == "[[" { stack[j].conditional.append(k) }
            switch kind {
            case .single: return .singleQuoted
            case .double: return .doubleQuoted
            default: return .word
            }
        }
    }

    /// Why a value in the current word of `frame`'s command is code. A
    /// redirection's target (`mapfile -t a < FILE`) is no argument.
    func codeReason(_ frame: Frame) -> String? {
        frame.redirection ? ShellCommands.runsAsCode(frame.words) : ShellCommands.codeReason(frame.words)
    }

    /// `${NAME…}`: in a default, alternative or pattern word the value is
    /// data; in a subscript or a `:OFFSET:LENGTH` it is arithmetic.
    func parameterContext(_ text: String) -> ShellContext {
        var rest = Substring(text)
        if rest.first == "#" || rest.first == "!" { rest = rest.dropFirst() }
        let name = rest.prefix { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        if name.isEmpty {
            guard let special = rest.first, "@*#?$!-".contains(special) else {
                return .unsafe("an expression cannot name the parameter of ${…}; \(ShellCommands.envHint)")
            }
            rest = rest.dropFirst()
        } else {
            rest = rest.dropFirst(name.count)
        }
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { return .arithmetic }
            rest = rest[rest.index(after: close)...]
        }
        guard let op = rest.first else {
            return .unsafe("an expression cannot name the parameter of ${…}; \(ShellCommands.envHint)")
        }
        if op == ":" {
            if let next = rest.dropFirst().first, "-=?+".contains(next) { return .word }
            return .arithmetic
        }
        if "-=?+#%/^,".contains(op) { return .word }
        return .unsafe("moon cannot pass a value inside this ${…} form; \(ShellCommands.envHint)")
    }

    /// The end of a word in a code frame.
    mutating func endWord() {
        guard top.inWord else { return }
        if top.redirection {
            // A redirection's target (`> /dev/null`) is no word of the command.
            top.redirection = false
            top.word = ""
            top.inWord = false
            return
        }
        let word = top.word
        top.afterPipe = false
        if word == "case" { top.cases += 1 }
        if word == "esac" { top.cases = max(0, top.cases - 1) }
        top.words.append(word)
        top.word = ""
        top.inWord = false
        if top.words.count == 1, Self.reserved.contains(word) {
            if word == "{" { top.braces += 1 }
            if word == "}" { top.braces = max(0, top.braces - 1) }
            top.words = []
        }
    }

    /// The end of a simple command: a `[[ … ]]` that compares numbers
    /// makes its expressions arithmetic.
    mutating func endCommand(pipe: Bool = false) {
        if !top.conditional.isEmpty, top.words.contains(where: ShellCommands.arithmeticOperators.contains) {
            for k in top.conditional where !contexts[k].isUnsafe { contexts[k] = .arithmetic }
        }
        if let shell = ShellCommands.readsScript(top.words) {
            // `… | sh`: what the earlier commands print is the shell's script.
            for k in top.pipeline where !contexts[k].isUnsafe {
                contexts[k] = .unsafe("this command's output is piped into \(shell), which runs it as shell code, so a value there would be code; pass the value through 'env:' and refer to it as \"$NAME\" in that script")
            }
            // `sh <<< "…"`, `bash < <(…)`: the command's own input is its script.
            for k in top.expressions where !contexts[k].isUnsafe {
                contexts[k] = .unsafe("\(shell) reads its script from its input, which holds this value, so a value there would be code; pass the value through 'env:' and refer to it as \"$NAME\" in that script")
            }
            top.pipelineShell = shell
        }
        if ShellCommands.replacesIntoScript(top.words) {
            // `… | xargs -I{} sh -c '… {} …'`: each line read becomes part of the script.
            for k in top.pipeline + top.expressions where !contexts[k].isUnsafe {
                contexts[k] = .unsafe("xargs puts each line it reads into the script of its shell -c, so a value there would be code; pass lines as arguments instead (xargs sh -c 'echo \"$1\"' sh)")
            }
        }
        lineShell = top.pipelineShell
        if !pipe { top.pipelineShell = nil }
        top.expressions = []
        top.conditional = []
        top.words = []
    }

    static let reserved: Set<String> = ["then", "do", "else", "elif", "if", "while", "until", "!", "{", "}", "time", "fi", "done"]

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

    /// One character in the innermost frame. Over 60 lines: one case per
    /// frame kind, the state machine's table in one place.
    mutating func step(_ c: Unicode.Scalar) {
        switch kind {
        case .comment:
            if c == "\n" { stack.removeLast() } else { i += 1 }
        case .single:
            if c == "'" { stack.removeLast() } else { appendQuoted(c) }
            i += 1
        case .ansiC:
            if c == "\\" { skipEscape(); return }
            if c == "'" { stack.removeLast() }
            i += 1
        case .backtick:
            // The inside of backticks is a command, followed like `$(…)`.
            if c == "`" {
                endWord()
                endCommand()
                stack.removeLast()
                atWordStart = false
                i += 1
                return
            }
            code(c)
        case .double:
            if c == "\\" {
                if let next = char(i + 1), next != "\n" { appendQuoted(next) }
                skipEscape()
                return
            }
            if c == "\"" { stack.removeLast(); i += 1; return }
            if c != "`" && c != "$" { appendQuoted(c) }
            if c == "`" { stack.append(Frame(kind: .backtick)); i += 1; return }
            if c == "$" { dollar(); return }
            i += 1
        case .hereDocument(let quoted):
            if top.lineStart, endsHereDocument() { return }
            top.lineStart = c == "\n"
            if quoted { i += 1; return }
            if c == "\\" { skipEscape(); return }
            if c == "`" { stack.append(Frame(kind: .backtick)); i += 1; return }
            if c == "$" { dollar(); return }
            i += 1
        case .parameter:
            if c == "\\" { skipEscape(); return }
            if c == "}" {
                if top.parens == 0 { stack.removeLast() } else { top.parens -= 1 }
                i += 1
                return
            }
            top.text.unicodeScalars.append(c)
            if c == "{" { top.parens += 1; i += 1; return }
            if c == "'" && !stack[stack.count - 2].kind.isDouble { stack.append(Frame(kind: .single)); i += 1; return }
            if c == "\"" { stack.append(Frame(kind: .double)); i += 1; return }
            if c == "`" { stack.append(Frame(kind: .backtick)); i += 1; return }
            if c == "$" { dollar(); return }
            i += 1
        case .arithmetic:
            if c == "(" { top.parens += 1 }
            if c == ")" {
                top.parens -= 1
                if top.parens == 0 { stack.removeLast() }
            }
            if c == "$" { dollar(); return }
            i += 1
        case .bracketArithmetic:
            if c == "]" { stack.removeLast() }
            if c == "$" { dollar(); return }
            i += 1
        case .arraySubscript:
            // `name[…]`: ends at its `]`, or (a glob, not a subscript) at a blank or operator.
            if c == " " || c == "\t" || c == "\n" || Self.operators.contains(c) { stack.removeLast(); return }
            if c == "[" { top.parens += 1 }
            if c == "]" {
                top.parens -= 1
                if top.parens == 0 { stack.removeLast() }
            }
            if c == "\\" { skipEscape(); return }
            if c == "'" { stack.append(Frame(kind: .single)); i += 1; return }
            if c == "\"" { stack.append(Frame(kind: .double)); i += 1; return }
            if c == "$" { dollar(); return }
            i += 1
        case .top, .command:
            code(c)
        }
    }

    /// A quoted character belongs to the word around the quotes
    /// (`e'v'al` is `eval`).
    mutating func appendQuoted(_ c: Unicode.Scalar) {
        guard stack.count >= 2, isCode(stack[stack.count - 2].kind) else { return }
        stack[stack.count - 2].word.unicodeScalars.append(c)
    }

    /// At the start of a here-document's line: if the line is its
    /// delimiter, ends the here-document (and starts the next pending one).
    mutating func endsHereDocument() -> Bool {
        guard let delimiter = top.delimiter else { return false }
        var line = ""
        var j = i
        while j < elements.count {
            guard case .char(let c) = elements[j] else { return false }
            if c == "\n" { break }
            line.unicodeScalars.append(c)
            j += 1
        }
        let compared = top.stripTabs ? String(line.drop { $0 == "\t" }) : line
        guard compared == delimiter else { return false }
        i = min(j + 1, elements.count)
        stack.removeLast()
        startHereDocument()
        return true
    }

    /// The shell of the line whose here-documents begin (set at its newline).
    var lineShell: String?

    /// The body of the next pending here-document begins.
    mutating func startHereDocument() {
        guard !pending.isEmpty else { atWordStart = true; return }
        let document = pending.removeFirst()
        var frame = Frame(kind: .hereDocument(quoted: document.quoted))
        frame.feedsShell = ShellCommands.readsScript(document.command) ?? lineShell
        frame.delimiter = document.delimiter
        frame.stripTabs = document.stripTabs
        stack.append(frame)
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
        } else if next == "'" && bash && !kind.isDouble && !kind.isHereDocument {
            stack.append(Frame(kind: .ansiC))
            i += 2
        } else {
            i += 1
        }
        atWordStart = false
    }

    /// Unquoted shell code (the script, or the inside of `$(…)`). Over 60
    /// lines: what one character of code ends (a word, a command) and what
    /// it opens (quotes, a frame) are decided together.
    mutating func code(_ c: Unicode.Scalar) {
        if c == "\\", char(i + 1) == "\n" {
            i += 2  // a line continuation: nothing at all
            return
        }
        if c == "(", i > 0, char(i - 1) == "<" || char(i - 1) == ">" {
            // `<(…)`: a command whose output is a file name argument.
            top.redirection = false
            top.inWord = true
            var frame = Frame(kind: .command)
            frame.processSubstitution = true
            stack.append(frame)
            atWordStart = true
            i += 1
            return
        }
        let boundary = c == " " || c == "\t" || c == "\n" || Self.operators.contains(c)
        if boundary {
            let previous = i > 0 ? char(i - 1) : nil
            if (c == "<" || c == ">"), top.inWord, !top.word.isEmpty, top.word.allSatisfy({ $0.isASCII && $0.isNumber }) {
                top.word = ""  // `2>`: a descriptor, no word
                top.inWord = false
            }
            endWord()
            if c == ">" || (c == "<" && char(i + 1) != "<" && previous != "<") || (c == "<" && char(i + 1) == "<" && char(i + 2) == "<") {
                top.redirection = true
            }
            if c == "&" && (previous == ">" || previous == "<" || char(i + 1) == ">") {
                // `>&2`, `&>`: part of a redirection.
            } else if c == "|" && char(i + 1) != "|" && previous != "|" {
                endCommand(pipe: true)
                top.afterPipe = true
            } else if c == "&" && previous == "|" {
                // `|&` was a pipe.
            } else if c == "\n" || c == ";" || c == "&" || c == "|" || c == "(" || c == ")" {
                endCommand()
            }
        } else {
            // The name before `[`: the word, or what follows its last `=`
            // (`x=arr[…]` is a subscript once `$(( x ))` evaluates it).
            let name = top.word.split(separator: "=", omittingEmptySubsequences: false).last.map(String.init) ?? ""
            if c == "[", !name.isEmpty, name == name.filter({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }),
               name.first.map({ !$0.isNumber }) == true, top.words.isEmpty || ShellCommands.commandName(top.words) == nil {
                // `name[…]=`: bash evaluates the subscript as arithmetic.
                top.inWord = true
                top.word.unicodeScalars.append(c)
                atWordStart = false
                var frame = Frame(kind: .arraySubscript)
                frame.parens = 1
                stack.append(frame)
                i += 1
                return
            }
            top.inWord = true
            if c != "\\" && c != "'" && c != "\"" { top.word.unicodeScalars.append(c) }
        }
        let wasWordStart = atWordStart
        atWordStart = boundary
        switch c {
        case "\\":
            // `e\val` is `eval`: the escaped character is part of the word.
            if let next = char(i + 1), next != "\n" { top.word.unicodeScalars.append(next) }
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
            top.inWord = false
            top.word = ""
            stack.append(Frame(kind: .comment)); i += 1
        case "(":
            if wasWordStart && char(i + 1) == "(" {
                // `((` is two subshells in sh (dash), and in bash too when
                // no `))` closes it; otherwise bash reads arithmetic. Lexed
                // as two subshells, so their commands are seen
                // (`(( sh -c "…" ))`), and in bash what they hold is also
                // arithmetic (integers only).
                stack.append(Frame(kind: .command))
                var inner = Frame(kind: .command)
                inner.bashArithmetic = bash
                stack.append(inner)
                i += 2
            } else {
                top.parens += 1
                i += 1
            }
        case ")":
            if top.parens > 0 {
                top.parens -= 1
            } else if top.cases > 0 {
                // A case pattern's `)`.
            } else if case .command = kind {
                stack.removeLast()
                atWordStart = false
            }
            i += 1
        case "<" where char(i + 1) == "<":
            if char(i + 2) == "<" { i += 3 } else { hereDocumentOperator() }
        case "\n":
            i += 1
            if top.parens == 0 && top.braces == 0 && !top.afterPipe { top.pipeline = [] }
            if !pending.isEmpty { startHereDocument() }
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
        var quoted = false
        loop: while i < elements.count {
            switch elements[i] {
            case .expression(let k):
                contexts[k] = .unsafe("an expression cannot be a here-document's delimiter")
                known = false
                i += 1
            case .char(let c):
                if c == " " || c == "\t" || c == "\n" || Self.operators.contains(c) { break loop }
                if c == "\\" {
                    quoted = true
                    if let next = char(i + 1) { delimiter.unicodeScalars.append(next) }
                    i += 2
                } else if c == "'" || c == "\"" {
                    quoted = true
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
        pending.append(HereDocument(delimiter: known && !delimiter.isEmpty ? delimiter : nil, stripTabs: strip, quoted: quoted,
                                    command: top.words))
        atWordStart = false
    }
}
