import ArgumentParser
import Foundation
import MoonGraph

/// Shell completion of `[FILE] [NODE...]`: the scripts that
/// `moon --generate-completion-script bash|zsh|fish` writes call moon back
/// on TAB (argument-parser's `---completion`), and moon answers from the
/// graph it would read: node names, instance names, and after a node its
/// parameters as `NAME=` (and `NAME=DEFAULT` once the `=` is typed). It
/// prints nothing when there is no valid graph: a completion never writes
/// an error over the user's command line.
enum NameCompletion {
    /// `words` is the command line up to the cursor, `index` the word being
    /// completed, `prefix` its start; each as typed, with the shell's quoting
    /// (`test\[u`, `'test[u`), which is read as the shell would.
    @Sendable static func complete(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let before = words.prefix(min(max(index, 0), words.count)).map(unquoted)
        if before.contains("--") { return [] }
        let prefix = unquoted(prefix)
        // The graph named on the command line, else the one moon would find.
        let named = before.dropFirst(2).first { !$0.hasPrefix("-") && ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) }
        guard let path = named ?? GraphFileLocator.discovered(),
              let parsed = try? GraphFile.parse(path), !parsed.result.hasErrors, let graph = parsed.result.graph else { return [] }
        // After a node (not after its `=` words), its parameters.
        let node = before.dropFirst(2).last(where: { !$0.contains("=") && !$0.hasPrefix("-") })
            .flatMap { graph.targets(named: $0)?.first }.map { graph.nodes[$0] }
        // `NAME=…` of one of its parameters: its default.
        if let node, let eq = prefix.firstIndex(of: "="),
           let parameter = node.params.first(where: { $0.name == prefix[..<eq] }) {
            return [parameter.name + "=" + (parameter.defaultValue ?? "")].filter { $0.hasPrefix(prefix) && $0 != prefix }
        }
        var candidates = names(in: graph)
        if let node { candidates += node.params.map { $0.name + "=" } }
        return candidates.filter { $0.hasPrefix(prefix) }
    }

    /// What `moon list --names` prints: every name the command line can
    /// select, in file order, a fan-out's name before its instances.
    static func names(in graph: Graph) -> [String] {
        NodeSelection.selectableNames(in: graph)
    }

    /// A word as the shell reads it: backslashes, `'…'` and `"…"` taken
    /// off; a quote the user has not closed yet runs to the end.
    static func unquoted(_ word: String) -> String {
        guard word.contains(where: { $0 == "\\" || $0 == "'" || $0 == "\"" }) else { return word }
        var out = ""
        var quote: Character?
        var escaped = false
        for c in word {
            if escaped {
                // Inside "…" a backslash escapes only $ ` " \ (else it stays).
                if quote == "\"" && !"$`\"\\".contains(c) { out.append("\\") }
                out.append(c)
                escaped = false
            } else if c == "\\" && quote != "'" {
                escaped = true
            } else if c == "'" || c == "\"" {
                if quote == nil { quote = c } else if quote == c { quote = nil } else { out.append(c) }
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// A completion request (`---completion CMD... -- ARG INDEX CURSOR WORDS...`)
    /// with its numbers brought into range: argument-parser takes the prefix
    /// of the last word up to CURSOR, which traps when CURSOR is negative.
    /// Other arguments are returned as they are.
    static func boundedRequest(_ arguments: [String]) -> [String] {
        guard arguments.first == "---completion", let dash = arguments.firstIndex(of: "--"),
              arguments.count > dash + 3 else { return arguments }
        var bounded = arguments
        if let index = Int(arguments[dash + 2]), index < 0 { bounded[dash + 2] = "0" }
        if let cursor = Int(arguments[dash + 3]) {
            let longest = arguments.count > dash + 4 ? arguments[arguments.count - 1].count : 0
            bounded[dash + 3] = String(min(max(cursor, 0), longest))
        }
        return bounded
    }

    /// `moon --generate-completion-script SHELL` as argument-parser writes
    /// it, made to work in the shells' versions in use: fish before 3.7
    /// has no `commandline -tC` (the cursor's place in the current token),
    /// so the script asks for the length of the token's text before the
    /// cursor instead, which is that place in every version.
    static func script(for shell: CompletionShell) -> String {
        let script = Moon.completionScript(for: shell)
        guard shell == .fish else { return script }
        return script.replacing("(__moon_tokens -tC)", with: "(__moon_cursor_in_token)") + """

            # The cursor's place in the token being completed (fish < 3.7 has no `commandline -tC`).
            function __moon_cursor_in_token
                string length -- "$(commandline -ct)"
            end

            """
    }

    /// The shell `--generate-completion-script` asks for, when `arguments`
    /// are that request (without a name: the shell moon runs in).
    static func scriptRequest(_ arguments: [String]) -> CompletionShell? {
        if arguments == ["--generate-completion-script"] { return CompletionShell.autodetected() }
        var name: String?
        if arguments.count == 2, arguments[0] == "--generate-completion-script" { name = arguments[1] }
        if arguments.count == 1, arguments[0].hasPrefix("--generate-completion-script=") {
            name = String(arguments[0].dropFirst("--generate-completion-script=".count))
        }
        return name.flatMap(CompletionShell.init(rawValue:))
    }
}
