import Foundation
import Testing

/// Names from the graph are data in every shell's completion: an instance
/// name (a list item, a matrix value, a file name a glob matched) or a
/// parameter's default holding `$(…)`, backticks, `;`, spaces, quotes, `*`
/// or `\` is offered and inserted as those characters, and TAB runs none of
/// it. Each test runs the script moon generates in the real shell; a
/// `MARK_*` file appearing means a shell ran a name as code.
@Suite struct CompletionSafetyTests {
    /// Each hostile name starts with its own plain prefix (`p1`, `m1`, `g1`),
    /// so a test can complete exactly one of them.
    static let graph = #"""
        version: 1
        nodes:
          items:
            for-each: ["p1$(touch MARK_item)", "p2`touch MARK_tick`", "p3;touch MARK_semi", "p4 two words", "p5 it's \"q\"", "p6*", "p7\\x", "p8:y", "p9${HOME}"]
            run: "true"
          mx: { matrix: { v: ["m1$(touch MARK_matrix)", "m2 x"] }, run: "true" }
          files: { for-each: { glob: "src/*.c" }, run: "true" }
          par: { params: { p: { default: "$(touch MARK_default)`touch MARK_tick2`" } }, run: "true" }
        """#

    /// The graph, the hostile file names its glob matches, and `bin/moon`: a
    /// stand-in that passes completion requests to moon and otherwise prints
    /// each argument as `<ARG>`, so pressing Enter shows the words the line
    /// really holds.
    static func hostileProject() throws -> Moon {
        let moon = try Moon(graph: graph)
        try moon.makeDirectory("src")
        try moon.makeDirectory("bin")
        try moon.write("src/g1$(touch MARK_file).c", "")
        try moon.write("src/g2`touch MARK_file2`.c", "")
        try moon.writeExecutable("bin/moon", """
            #!/bin/sh
            case "$1" in ---completion|--generate-completion-script*) exec '\(Moon.binary)' "$@";; esac
            printf '<%s>\\n' "$@"

            """)
        return moon
    }

    static func marks(in moon: Moon) -> [String] {
        let top = (try? FileManager.default.contentsOfDirectory(atPath: moon.directory.path)) ?? []
        let src = (try? FileManager.default.contentsOfDirectory(atPath: moon.path("src"))) ?? []
        return (top + src).filter { $0.hasPrefix("MARK_") }
    }

    /// Every name moon can select, as `moon list --names` prints it.
    static func names(_ moon: Moon) throws -> [String] {
        try moon.run(["list", "--names"]).stdout.split(separator: "\n").map(String.init)
    }

    /// bash's script never hands moon's names to `compgen -W`.
    @Test func theBashScriptNeverEvaluatesMoonsNames() throws {
        let script = try Moon().run(["--generate-completion-script", "bash"]).stdout
        #expect(!script.contains("$(__moon_custom_complete"), "\(script)")
        #expect(script.contains("__moon_add_custom_completions ---completion run -- positional@0"), "\(script)")
        #expect(script.contains("compopt +o filenames"), "\(script)")
    }

    /// bash, as TAB calls the script's `_moon`: every name of every source
    /// comes back as one `COMPREPLY` word that the shell reads back as the
    /// name itself, and a parameter's default too.
    @Test func bashOffersEveryHostileNameAsData() throws {
        let moon = try Self.hostileProject()
        try moon.write("moon.bash", try moon.run(["--generate-completion-script", "bash"]).stdout)
        let result = try shell(#"""
            PATH="$PWD/bin:$PATH" && . ./moon.bash
            complete_line() {
                COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
                read -ra COMP_WORDS <<<"$COMP_LINE"; [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
                _moon moon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                # Read each word back as the shell reads the line after TAB.
                for word in "${COMPREPLY[@]}"; do eval "read_back=( $word )"; printf '%s\n' "${read_back[@]}"; done
            }
            complete_line "moon run "; echo ---; complete_line "moon run par p="
            """#, in: moon, bash: true)
        #expect(result.status == 0, "\(result.stderr)")
        let parts = result.stdout.components(separatedBy: "---\n")
        let expected = try Self.names(moon)
        #expect(expected.contains("files[src/g1$(touch MARK_file).c]") && expected.contains("mx[m1$(touch MARK_matrix)]"), "\(expected)")
        #expect(parts.first?.split(separator: "\n").map(String.init) == expected, "\(result.stdout)")
        #expect(parts.last == "p=$(touch MARK_default)`touch MARK_tick2`\n", "\(result.stdout)")
        #expect(Self.marks(in: moon).isEmpty, "completion ran: \(Self.marks(in: moon))")
    }

    /// fish's own completion (`complete -C`, as TAB runs it): the names as they are.
    @Test(.enabled(if: onPath("fish") != nil, "fish is not installed (make test-deps)"))
    func fishOffersEveryHostileNameAsData() throws {
        let moon = try Self.hostileProject()
        try moon.write("moon.fish", try moon.run(["--generate-completion-script", "fish"]).stdout)
        func complete(_ line: String) throws -> [String] {
            let result = try shell(#"PATH="$PWD/bin:$PATH" HOME="$PWD" fish --no-config -c 'source moon.fish; complete -C "$argv[1]"' "$LINE""#,
                                   in: moon, environment: ["LINE": line])
            #expect(result.status == 0, "\(line): \(result.stderr)")
            return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(try complete("moon run ") == (try Self.names(moon)))
        #expect(try complete("moon run par p=") == ["p=$(touch MARK_default)`touch MARK_tick2`"])
        #expect(Self.marks(in: moon).isEmpty, "completion ran: \(Self.marks(in: moon))")
    }

    /// The line typed, TAB, then Enter: what each shell put on the line, as
    /// the words `bin/moon` received.
    static let interactiveCases: [(typed: String, received: String)] = [
        (#"moon run items\[p1"#, "<items[p1$(touch MARK_item)]>"),
        (#"moon run items\[p2"#, "<items[p2`touch MARK_tick`]>"),
        (#"moon run items\[p3"#, "<items[p3;touch MARK_semi]>"),
        (#"moon run items\[p5"#, #"<items[p5 it's "q"]>"#),
        (#"moon run items\[p6"#, "<items[p6*]>"),
        (#"moon run items\[p7"#, #"<items[p7\x]>"#),
        (#"moon run items\[p8"#, "<items[p8:y]>"),
        (#"moon run mx\[m1"#, "<mx[m1$(touch MARK_matrix)]>"),
        (#"moon run files\[src/g1"#, "<files[src/g1$(touch MARK_file).c]>"),
        (#"moon run files\[src/g2"#, "<files[src/g2`touch MARK_file2`.c]>"),
    ]

    /// A real interactive shell on a terminal (tmux), the script moon
    /// generates loaded as its users load it; each case typed, completed
    /// with TAB and run with Enter.
    @Test(.enabled(if: TmuxSession.available, "tmux is not installed (make test-deps)"),
          arguments: ["bash", "zsh", "fish"])
    func aRealShellInsertsHostileNamesLiterally(_ name: String) throws {
        // One shell missing skips its own case (shown as skipped), not the others.
        guard let program = onPath(name) else { try Test.cancel("\(name) is not installed (make test-deps)") }
        let moon = try Self.hostileProject()
        let home = moon.directory.path
        let setup: String
        switch name {
        case "bash":
            try moon.write("moon.bash", try moon.run(["--generate-completion-script", "bash"]).stdout)
            setup = "source ./moon.bash; PS1='$ '; echo READY"
        case "zsh":
            try moon.makeDirectory("functions")
            try moon.write("functions/_moon", try moon.run(["--generate-completion-script", "zsh"]).stdout)
            setup = "fpath=(functions $fpath); autoload -Uz compinit; compinit -u -D; PS1='$ '; print READY"
        default:
            try moon.write("moon.fish", try moon.run(["--generate-completion-script", "fish"]).stdout)
            setup = "source moon.fish; function fish_prompt; echo '$ '; end; echo READY"
        }
        let start = switch name {
        case "bash": "\(program) --norc --noprofile -i"
        case "zsh": "\(program) -f"
        default: "\(program) --no-config"
        }
        let tmux = TmuxSession(in: moon)
        spawnAndWait(TmuxSession.tmux!, ["-L", tmux.socket, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "40",
                                         "cd '\(home)' && env -i HOME='\(home)' TERM=xterm PATH='\(home)/bin':/usr/bin:/bin \(start)"])
        func type(_ keys: [String], literal: Bool = false) {
            spawnAndWait(TmuxSession.tmux!, ["-L", tmux.socket, "send-keys"] + (literal ? ["-l"] : []) + keys)
        }
        type([setup], literal: true)
        type(["Enter"])
        #expect(tmux.waitFor { $0.contains("READY\n$") } != nil, "\(name): \(tmux.screen())")
        // Completing inside quotes the user opened (bash quotes for them itself).
        // bash splits `p=` at `=` (COMP_WORDBREAKS), so only zsh and fish complete a default.
        let defaults: [(typed: String, received: String)] = name == "bash" ? [] : [
            ("moon run par p=", "<par>\n<p=$(touch MARK_default)`touch MARK_tick2`>"),
        ]
        let quoted: [(typed: String, received: String)] = name != "bash" ? [] : [
            ("moon run 'items[p5", #"<items[p5 it's "q"]>"#),
            (#"moon run "items[p2"#, "<items[p2`touch MARK_tick`]>"),
            (#"moon run "items[p9"#, "<items[p9${HOME}]>"),
        ]
        for (typed, received) in Self.interactiveCases + defaults + quoted {
            type(["C-u"])
            type(["clear"], literal: true)
            type(["Enter"])
            _ = tmux.waitFor { $0.trimmingCharacters(in: .whitespacesAndNewlines) == "$" }
            type([typed], literal: true)
            type(["Tab"])
            type(["Enter"])
            let screen = tmux.waitFor(30) { $0.contains("<run>\n\(received)\n") }
            #expect(screen != nil, "\(name): \(typed) -> \(tmux.screen())")
        }
        #expect(Self.marks(in: moon).isEmpty, "\(name): completion ran: \(Self.marks(in: moon))")
    }
}
