import ArgumentParser
import Foundation
import MoonGraph
import MoonSession

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
        // A discovered graph that fails the trust rule (`DiscoveryTrust`) offers nothing: TAB never reads another user's file.
        guard let path = named ?? (try? GraphFileLocator.discovered()) ?? nil,
              let parsed = try? GraphFile.parse(path), !parsed.result.hasErrors, let graph = parsed.result.graph else { return [] }
        return shown(candidates(graph, before: before, prefix: prefix), to: CompletionShell.requesting)
    }

    /// The words of `graph` that may follow `before` and start with `prefix`.
    private static func candidates(_ graph: Graph, before: [String], prefix: String) -> [String] {
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

    /// The candidates as `shell` reads moon's answer, one per line: a name
    /// with a control character (a line break would make two candidates, a
    /// tab a description) is left out, and zsh's `_describe` reads `:` as
    /// the start of a description unless it is escaped.
    static func shown(_ candidates: [String], to shell: CompletionShell?) -> [String] {
        let printable = candidates.filter { !$0.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } }
        guard shell == .zsh else { return printable }
        return printable.map { $0.replacing("\\", with: "\\\\").replacing(":", with: "\\:") }
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
    ///
    /// bash's script passes moon's answer to `compgen -W`, which expands
    /// `$(…)`, backticks and variables in its words: a name from the graph
    /// (a list item, a file name a glob matched, a parameter's default) would
    /// run as code on TAB. moon's own function fills `COMPREPLY` instead,
    /// each line one word, quoted for the command line, never evaluated.
    static func script(for shell: CompletionShell) -> String {
        let script = Moon.completionScript(for: shell)
        if shell == .bash { return dataOnlyBash(script) }
        guard shell == .fish else { return script }
        return script.replacing("(__moon_tokens -tC)", with: "(__moon_cursor_in_token)") + """

            # The cursor's place in the token being completed (fish < 3.7 has no `commandline -tC`).
            function __moon_cursor_in_token
                string length -- "$(commandline -ct)"
            end

            """
    }

    /// argument-parser's bash script with each `__moon_add_completions -W
    /// "$(__moon_custom_complete ARGS)"` (moon's candidates as a word list)
    /// replaced by `__moon_add_custom_completions ARGS`.
    static func dataOnlyBash(_ script: String) -> String {
        let call = "__moon_add_completions -W \"$(__moon_custom_complete "
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard let start = line.range(of: call), line.hasSuffix(")\"") else { return String(line) }
            return line[..<start.lowerBound] + "__moon_add_custom_completions " + line[start.upperBound...].dropLast(2)
        }
        return lines.joined(separator: "\n") + #"""

            # moon's names are data: each line moon prints is one candidate, never a word
            # list for `compgen -W` (which expands `$(…)` and backticks). Each is quoted here
            # for the place it is inserted (`printf %q`, or inside the '…' or "…" the user
            # opened, which readline closes), and readline inserts it as it is (no `-o
            # filenames`, whose quoting leaves `$` and `)` as they are). moon keeps only the
            # names that start with the word typed, its quotes read as the shell reads them.
            __moon_add_custom_completions() {
                local completion quote="${COMP_WORDS[COMP_CWORD]:0:1}"
                compopt +o filenames 2>/dev/null
                while IFS='' read -r completion; do
                    [[ -n "${completion}" ]] || continue
                    case "${quote}" in
                    "'") completion="${completion//\'/\'\\\'\'}" ;;
                    '"') completion="${completion//\\/\\\\}"; completion="${completion//\$/\\\$}"
                         completion="${completion//\`/\\\`}"; completion="${completion//\"/\\\"}" ;;
                    *) printf -v completion %q "${completion}" ;;
                    esac
                    COMPREPLY+=("${completion}")
                done < <(__moon_custom_complete "${@}")
            }

            """#
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
