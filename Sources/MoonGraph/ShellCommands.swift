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

    /// Commands that run text taken from their arguments as shell code: an
    /// option's argument (`compgen -W`, `mapfile -C`, `flock -c`, `su -c`),
    /// or all of them joined (`watch`). Any argument can be that text: an
    /// argument that starts with `-` is read as an option (`-C…`), and
    /// `flock`, `su` and `script` take options after their operands.
    static let evaluatingArguments: [String: String] = [
        "compgen": "compgen expands its -W word list (running $(…) in it) and runs its -C command",
        "complete": "complete expands its -W word list (running $(…) in it) and runs its -C command",
        "mapfile": "mapfile runs its -C callback as shell code",
        "readarray": "readarray runs its -C callback as shell code",
        "flock": "flock runs its -c command with sh -c",
        "script": "script runs its -c command with a shell",
        "su": "su runs its -c command with a shell",
        "runuser": "runuser runs its -c command with a shell",
        "watch": "watch runs its arguments with sh -c",
    ]

    /// Why a value among the arguments of this command (`words` so far) is
    /// code: it is one of `evaluatingArguments`.
    static func evaluatesArguments(_ words: [String]) -> String? {
        guard let first = commandName(words) else { return nil }
        // After a command that runs another (`timeout 5 watch …`), any later word may be that command.
        let candidates = wrappers.contains(base(first)) ? Array(words.drop { $0 != first }) : [first]
        guard let name = candidates.first(where: { evaluatingArguments[base($0)] != nil }), let why = evaluatingArguments[base(name)] else {
            return nil
        }
        return "\(why), so a value among its arguments would be code; \(envHint) inside single quotes, where the command expands it (compgen -W '$NAME', flock L -c 'echo \"$NAME\"')"
    }

    /// Commands that run the command their arguments name.
    static let wrappers: Set<String> = ["timeout", "nice", "ionice", "setsid", "stdbuf", "chrt", "taskset", "unshare", "nsenter",
                                        "chroot", "xargs", "doas", "sudo", "env", "nohup", "time", "command", "exec", "builtin"]

    static func base(_ word: String) -> String { String(word.split(separator: "/").last ?? "") }

    /// Why a value in this command's arguments runs as code, by either rule.
    static func codeReason(_ words: [String]) -> String? {
        runsAsCode(words) ?? evaluatesArguments(words)
    }

    /// Variables whose value a shell later expands or runs as code: the
    /// prompts (bash expands PS0, PS1, PS2 and PS4, `$(…)` included; PS4 at
    /// each line `set -x` traces), PROMPT_COMMAND, and BASH_ENV and ENV
    /// (the name of a startup file, expanded with `$(…)` by each shell that
    /// starts); a `BASH_FUNC_…` environment variable defines a function.
    static func evaluatesVariable(_ name: String) -> Bool {
        ["PS0", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV"].contains(name) || name.hasPrefix("BASH_FUNC_")
    }

    static func variableReason(_ name: String) -> String {
        "a shell expands \(name) as code when it uses it (a prompt, PS4 under set -x, a startup file's name, a function), so a value there would be code; set it to a fixed text"
    }

    /// The variable an assignment word assigns (`PS4=`, `PS4+=`,
    /// `PROMPT_COMMAND[0]=`), when `word` (so far) is one and `words` is a
    /// place for assignments: before the command's name, or among the
    /// arguments of `export`, `declare` and their kin.
    static func assignedVariable(_ word: String, in words: [String]) -> String? {
        guard let equals = word.firstIndex(of: "=") else { return nil }
        if let name = commandName(words), !["declare", "typeset", "local", "readonly", "export"].contains(name) { return nil }
        var name = word[..<equals]
        if name.hasSuffix("+") { name = name.dropLast() }
        name = name.prefix { $0 != "[" }
        if name.hasPrefix("BASH_FUNC_") { return String(name) }  // `env 'BASH_FUNC_f%%=…'`
        guard let first = name.first, first.isLetter || first == "_",
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return nil }
        return String(name)
    }

    /// `xargs -I{} sh -c '… {} …'`: what the command reads (its stdin,
    /// what the pipeline prints) is put into a shell's script.
    static func replacesIntoScript(_ words: [String]) -> Bool {
        guard commandName(words) == "xargs" else { return false }
        guard words.contains(where: { $0.hasPrefix("-I") || $0.hasPrefix("-i") || $0.hasPrefix("--replace") }) else { return false }
        for k in words.indices.dropFirst() where runsAsCode(Array(words[...k])) != nil { return true }
        return false
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
