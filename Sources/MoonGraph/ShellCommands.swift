/// The commands that run a word, a file or their input as shell code (`eval`,
/// `trap`, `sh -c`, `… | sh`, `source /dev/stdin`) or read their arguments
/// as arithmetic (`let`, `declare -i`): where `ShellLexer` refuses a value,
/// or makes it an integer.
enum ShellCommands {
    static let envHint = "pass the value through 'env:' and use \"$NAME\""

    static let shells: Set<String> = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox"]
    static let arithmeticOperators: Set<String> = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v", "-R"]

    /// The command's name: its first word that is not an assignment or a
    /// wrapper (`command`, `builtin`, `exec`, `env`, `sudo`, `nohup`).
    static func commandName(_ words: [String]) -> String? {
        words.first { !isAssignment($0) && !["command", "builtin", "exec", "env", "sudo", "nohup", "time"].contains($0) }
    }

    static func isAssignment(_ word: String) -> Bool {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return false }
        let name = word[..<equals].prefix { $0 != "[" }
        return name.first.map { $0.isLetter || $0 == "_" } == true && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// Why the next word of `words` is run as shell code: an argument of
    /// `eval` or `trap`, or the command string after a shell's `-c`.
    static func runsAsCode(_ words: [String]) -> String? {
        let name = commandName(words)
        if name == "eval" {
            return "eval runs its arguments as shell code, so a value there would be code; \(envHint) inside single quotes (eval 'echo \"$NAME\"')"
        }
        if name == "trap" {
            return "trap runs its action as shell code, so a value there would be code; \(envHint) inside single quotes (trap 'echo \"$NAME\"' EXIT)"
        }
        if let option = words.last, option.hasPrefix("-"), !option.hasPrefix("--"), option.contains("c"),
           let shell = words.dropLast().last(where: { shells.contains(String($0.split(separator: "/").last ?? "")) }) {
            return "\(shell) \(option) runs its argument as shell code, so a value there would be code; \(envHint) inside single quotes (sh -c 'echo \"$NAME\"')"
        }
        return nil
    }

    /// `let`, and `declare -i` and its kin: every argument is arithmetic.
    static func isArithmeticCommand(_ words: [String]) -> Bool {
        guard let name = commandName(words) else { return false }
        if name == "let" { return true }
        guard ["declare", "typeset", "local", "readonly", "export"].contains(name) else { return false }
        return words.contains { $0.hasPrefix("-") && $0.dropFirst().allSatisfy(\.isLetter) && $0.contains("i") }
    }

    /// The shell that reads its script from stdin in this command (`sh`,
    /// `bash -s`, not `sh -c …` or `sh FILE`), or nil.
    static func readsScript(_ words: [String]) -> String? {
        guard let name = commandName(words) else { return nil }
        if name == "source" || name == "." {
            let file = words.drop { $0 != name }.dropFirst().first
            return file == "/dev/stdin" || file == "/proc/self/fd/0" ? name : nil
        }
        guard readsFiles(name) else { return nil }
        var optionArgument = false
        for word in words.drop(while: { $0 != name }).dropFirst() {
            if optionArgument { optionArgument = false; continue }
            if (word.hasPrefix("-") || word.hasPrefix("+")) && !word.hasPrefix("--") {
                if word.hasPrefix("-") && word.contains("c") { return nil }
                if word.hasPrefix("-") && word.contains("s") { return name }  // `-s`: the script is stdin, the rest are arguments
                optionArgument = word.hasSuffix("o") || word.hasSuffix("O")  // `-o pipefail`
                continue
            }
            if word.hasPrefix("--") { continue }
            return nil  // a script file's name
        }
        return name
    }

    /// A shell, or `source`: a command whose file argument is a script.
    static func readsFiles(_ name: String) -> Bool {
        name == "source" || name == "." || shells.contains(String(name.split(separator: "/").last ?? ""))
    }
}
