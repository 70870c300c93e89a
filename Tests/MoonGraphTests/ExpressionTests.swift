import Foundation
import Testing
@testable import MoonGraph

@Suite struct ExpressionParserTests {
    func references(_ text: String) -> [ExpressionReference] {
        Template.parse(text).template.expressions.map(\.reference)
    }

    @Test func parsesEveryContextWithOrWithoutSpaces() {
        #expect(references("a ${{ needs.build.outputs.sha }} b ${{needs.build.result}}") == [
            .output(node: "build", key: "sha"), .result(node: "build"),
        ])
        #expect(references("${{vars.channel}}${{ env.HOME }}") == [.variable("channel"), .environment("HOME")])
        // Node names may contain dots; the path is read from its end.
        #expect(references("${{ needs.lib.v2.outputs.out-dir }}") == [.output(node: "lib.v2", key: "out-dir")])
    }

    @Test func keepsLiteralTextAndOffsets() {
        let (template, problems) = Template.parse("echo ${{ vars.x }}!")
        #expect(problems.isEmpty)
        #expect(template.parts.count == 3)
        let e = template.expressions[0]
        #expect(e.offset == 5 && e.length == 13 && e.raw == "${{ vars.x }}")
    }

    @Test func reportsMalformedExpressions() {
        let cases: [(String, String)] = [
            ("echo ${{ vars.x", "unclosed '${{'"),
            ("${{ }}", "empty expression"),
            ("${{ steps.a.outputs.b }}", "unknown context 'steps' (moon has no 'steps')"),
            ("${{ var.x }}", "unknown context 'var' (did you mean 'vars'?)"),
            ("${{ needs.a }}", "malformed expression 'needs.a'"),
            ("${{ needs.a.outputs }}", "malformed expression"),
            ("${{ vars.a b }}", "invalid var name 'a b'"),
            ("${{ env.A-B }}", "invalid environment variable name 'A-B'"),
        ]
        for (text, message) in cases {
            let problems = Template.parse(text).problems
            #expect(problems.count == 1, "\(text)")
            #expect(problems.first?.message.contains(message) == true, "\(text): \(problems)")
        }
        #expect(Template.parse("a ${{ vars.x").problems.first?.offset == 2)
    }

    @Test func anExpressionDoesNotSpanLines() {
        #expect(Template.parse("${{ vars.x\n}}").problems.count == 1)
    }
}

@Suite struct ShellTemplateTests {
    static let hostile = [
        "it's", "\"double\"", "$(touch PWNED)", "`touch PWNED`", "; touch PWNED", "a\ntouch PWNED\n#",
        "$HOME ${HOME} \\ \\' '\\''", "*", "-n", "", "'; touch PWNED; '", "\"; touch PWNED; \"", "\\",
    ]

    func contexts(_ script: String, _ shell: Shell = .sh) -> [ShellContext] {
        ShellTemplate.contexts(of: Template.parse(script).template, shell: shell)
    }

    @Test func findsTheQuotingContext() {
        #expect(contexts("echo ${{ vars.a }}") == [.word])
        #expect(contexts("echo 'x ${{ vars.a }}'") == [.singleQuoted])
        #expect(contexts("echo \"x ${{ vars.a }}\"") == [.doubleQuoted])
        #expect(contexts("echo \"$(echo ${{ vars.a }})\"") == [.word])
        #expect(contexts("echo \"$(echo \"${{ vars.a }}\")\"") == [.doubleQuoted])
        #expect(contexts("echo $(( ${{ vars.a }} + 1 ))") == [.arithmetic])
        #expect(contexts("echo hi # ${{ vars.a }}") == [.comment])
        #expect(contexts("echo a#${{ vars.a }}") == [.word])
        #expect(contexts("x=$(case a in a) echo ${{ vars.a }};; esac)\necho \"${{ vars.a }}\"") == [.word, .doubleQuoted])
        #expect(contexts("cat <<EOF\nplain\nEOF\necho ${{ vars.a }}") == [.word])
        #expect(contexts("cat <<EOF\n${{ vars.a }} $(( ${{ vars.a }} ))\nEOF\necho ${{ vars.a }}") == [.doubleQuoted, .arithmetic, .word])
        #expect(contexts("echo `${{ vars.a }}` \"`${{ vars.a }}`\" `echo \"${{ vars.a }}\"`") == [.word, .word, .doubleQuoted])
        #expect(contexts("echo ${X:-${{ vars.a }}} ${X#${{ vars.a }}} ${X:${{ vars.a }}} ${A[${{ vars.a }}]}") == [.word, .word, .arithmetic, .arithmetic])
        #expect(contexts("sh -c 'echo \"$1\"' sh ${{ vars.a }}") == [.word])
    }

    @Test func bashArithmeticCommandsAreArithmetic() {
        for script in ["let n=${{ vars.a }}", "let \"n=${{ vars.a }}\"", "declare -i n=${{ vars.a }}", "local -ri n=${{ vars.a }}",
                       "[[ ${{ vars.a }} -eq 0 ]]", "[[ 1 -lt \"${{ vars.a }}\" ]]", "arr[${{ vars.a }}]=1", "a[1+${{ vars.a }}]=x",
                       "for (( i = ${{ vars.a }}; i < 3; i++ )); do :; done", "echo $[ ${{ vars.a }} ]",
                       "x=arr[${{ vars.a }}]=1; echo $(( x ))"] {
            #expect(contexts(script, .bash) == [.arithmetic], "\(script)")
        }
        for script in ["[[ ${{ vars.a }} == x ]]", "declare n=${{ vars.a }}", "echo x[${{ vars.a }} ]", "echo [${{ vars.a }}]"] {
            #expect(contexts(script, .bash) != [.arithmetic], "\(script)")
        }
    }

    @Test func refusesContextsThatCannotBeQuoted() {
        for script in ["cat <<'EOF'\n${{ vars.a }}\nEOF", "cat <<\\EOF\n${{ vars.a }}\nEOF", "echo \\${{ vars.a }}", "echo $${{ vars.a }}",
                       "echo \"\\${{ vars.a }}\"", "echo 'unclosed ${{ vars.a }}", "echo \"$(echo ${{ vars.a }}\"",
                       "eval \"echo ${{ vars.a }}\"", "eval echo ${{ vars.a }}", "trap 'echo ${{ vars.a }}' EXIT",
                       "sh -c \"echo ${{ vars.a }}\"", "bash -ec 'echo ${{ vars.a }}'", "sudo /bin/sh -c \"${{ vars.a }}\"",
                       "echo ${${{ vars.a }}}", "echo ${X@${{ vars.a }}}",
                       // Found by fuzz/shell-values.py: each ran the value before moon saw it.
                       "eval \"$(echo ${{ vars.a }})\"", "echo `echo ${{ vars.a }} | sh`", "echo ${{ vars.a }} | sh >/dev/null",
                       "e\\val \"echo ${{ vars.a }}\"", "e'v'al \"echo ${{ vars.a }}\"", "echo ${{ vars.a }} |\\\n bash",
                       "x=$(echo [[ ${{ vars.a }} -eq 0 ]] | sh)", "bash -s ]<<EOF\n${{ vars.a }}\nEOF",
                       "bash -o pipefail <<EOF\n${{ vars.a }}\nEOF", "{ echo ${{ vars.a }}; } | sh", "(echo ${{ vars.a }}) | bash",
                       "sh <(echo ${{ vars.a }})", "bash <<< \"echo ${{ vars.a }}\"", "echo ${{ vars.a }} 2>&1 | sh",
                       "(( sh -c \"$(echo ${{ vars.a }})\" ))", "echo ${{ vars.a }} |\n tee x | sh -s",
                       "echo ${{ vars.a }} |\n\n  sh"] {
            let found = contexts(script)
            #expect(found.count == 1 && found[0].isUnsafe, "\(script): \(found)")
        }
        // bash reads `((…) )` as two subshells: their commands are seen too.
        for script in ["(( sh -c \"$(echo ${{ vars.a }})\" ))", "((sh -c \"$(echo ${{ vars.a }})\") )"] {
            let found = contexts(script, .bash)
            #expect(found.count == 1 && found[0].isUnsafe, "\(script): \(found)")
        }
        #expect(contexts("(( n = ${{ vars.a }} + 1 ))", .bash) == [.arithmetic])
        #expect(contexts("echo $'x ${{ vars.a }}'", .bash)[0].isUnsafe)
    }

    /// Commands that evaluate their arguments (an option's text, or all of
    /// them joined), and variables a shell later reads as code.
    @Test func refusesCommandsAndVariablesThatEvaluateValues() {
        for script in ["compgen -W ${{ vars.a }} x", "compgen -W \"${{ vars.a }}\" x", "compgen ${{ vars.a }}",
                       "complete -W \"${{ vars.a }}\" cmd", "complete -C ${{ vars.a }} cmd",
                       "mapfile -C ${{ vars.a }} -c 1 arr <<< a", "readarray -C \"${{ vars.a }}\" arr < f",
                       "flock ./lk -c ${{ vars.a }}", "flock ${{ vars.a }} true", "/usr/bin/flock ./lk -c \"${{ vars.a }}\"",
                       "script -q -c ${{ vars.a }} /dev/null", "su root -c \"${{ vars.a }}\"", "runuser -u nobody -- sh -c ${{ vars.a }}",
                       "runuser -l nobody -c '${{ vars.a }}'", "watch -n 1 ${{ vars.a }}", "timeout 5 watch \"echo ${{ vars.a }}\"",
                       "PS4=${{ vars.a }}; set -x", "export PS4=\"+ ${{ vars.a }}\"", "PS1=${{ vars.a }} bash -i",
                       "declare PS0='${{ vars.a }}'", "PROMPT_COMMAND=${{ vars.a }}", "PROMPT_COMMAND[1]=${{ vars.a }}",
                       "BASH_ENV=${{ vars.a }} bash x.sh", "env ENV=${{ vars.a }} sh -i", "env 'BASH_FUNC_f%%=${{ vars.a }}' bash -c f",
                       "echo ${{ vars.a }} | xargs -I{} sh -c 'echo {}'", "xargs -I % bash -c 'echo %' <<< \"${{ vars.a }}\"",
                       "flock ./lk -c \"$(echo ${{ vars.a }})\""] {
            let found = contexts(script, .bash)
            #expect(found.count == 1 && found[0].isUnsafe, "\(script): \(found)")
        }
        // Data: a redirection's target, a name that only looks like one, a
        // value passed as an argument after the script, xargs without a replace.
        for script in ["mapfile -t arr < ${{ vars.a }}", "echo PS4=${{ vars.a }}", "PS4x=${{ vars.a }}",
                       "MYPS4=${{ vars.a }}", "echo ${{ vars.a }} | xargs sh -c 'echo \"$@\"' sh",
                       "compgen -W '$WORDS' x > ${{ vars.a }}"] {
            let found = contexts(script, .bash)
            #expect(found.count == 1 && !found[0].isUnsafe, "\(script): \(found)")
        }
    }

    /// A list value of 200,000 items (a word each) renders in linear time.
    @Test func aLongListRendersInLinearTime() throws {
        let items = (0..<200_000).map(String.init)
        let started = Date()
        let rendered = try ShellTemplate.render(Template.parse("echo ${{ vars.a }}").template, shell: .sh, value: { _ in "" },
                                                words: { _ in items })
        #expect(rendered.bindings.count == items.count)
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func rendersAReferenceNeverTheValue() throws {
        let rendered = try ShellTemplate.render(Template.parse("echo ${{ vars.a }} \"${{ vars.a }}\" '${{ vars.a }}'").template, shell: .sh) { _ in "$(x)" }
        #expect(rendered.script == "echo \"${MOON_EXPR_1}\" \"${MOON_EXPR_2}\" ''\"${MOON_EXPR_3}\"''")
        #expect(rendered.bindings == (1...3).map { ShellTemplate.Binding(name: "MOON_EXPR_\($0)", value: "$(x)") })
    }

    @Test func arithmeticTakesOnlyIntegers() throws {
        let template = Template.parse("echo $(( ${{ vars.a }} + 1 ))").template
        #expect(try ShellTemplate.render(template, shell: .sh) { _ in "-41" }.script == "echo $(( ${MOON_EXPR_1} + 1 ))")
        #expect(throws: ShellTemplate.Failure.self) { try ShellTemplate.render(template, shell: .bash) { _ in "x" } }
        // The one shape bash runs from data is refused wherever it is.
        #expect(throws: ShellTemplate.Failure.self) {
            try ShellTemplate.render(Template.parse("echo \"${{ vars.a }}\"").template, shell: .bash) { _ in "a[$(touch x)]" }
        }
        #expect(throws: ShellTemplate.Failure.self) {
            try ShellTemplate.render(Template.parse("echo \"${{ vars.a }}\"").template, shell: .sh) { _ in "[`touch x`" }
        }
        #expect(try ShellTemplate.render(Template.parse("echo \"${{ vars.a }}\"").template, shell: .sh) { _ in "$(x) [y]" }.bindings.count == 1)
    }

    /// Every hostile value, in every quotable context, through the real
    /// shells: printed verbatim, and the marker file never appears.
    @Test(arguments: [Shell.sh, Shell.bash])
    func hostileValuesArePrintedNeverRun(shell: Shell) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moon-quote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let scripts: [(String, (String) -> String)] = [
            ("printf '%s|' ${{ vars.v }}", { "\($0)|" }),
            ("printf '%s|' x${{ vars.v }}y", { "x\($0)y|" }),
            ("printf '%s|' \"a ${{ vars.v }} b\"", { "a \($0) b|" }),
            ("printf '%s|' 'a ${{ vars.v }} b'", { "a \($0) b|" }),
            ("printf '%s|' \"$(printf '%s' \"${{ vars.v }}\")\"", { "\($0)|" }),
            ("printf '%s|' \"$(printf '%s' ${{ vars.v }})\"", { "\($0)|" }),
            ("printf '%s|' ${{ vars.v }} # ${{ vars.v }}", { "\($0)|" }),
        ]
        for value in Self.hostile {
            for (script, expected) in scripts {
                let rendered = try ShellTemplate.render(Template.parse(script).template, shell: shell) { _ in value }
                let output = try Self.run(shell.arguments(for: rendered.script), in: dir,
                                          environment: Dictionary(uniqueKeysWithValues: rendered.bindings.map { ($0.name, $0.value) }))
                let want = expected(value).replacing("\n", with: "\n")
                // $(…) drops trailing newlines, as the shell always does.
                let trimmed = script.contains("$(printf") ? Self.droppingTrailingNewlines(value) : value
                #expect(output == (script.contains("$(printf") ? expected(trimmed) : want), "\(shell) \(script) with \(value.debugDescription)")
                #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("PWNED").path), "\(script) ran \(value)")
            }
        }
    }

    static func droppingTrailingNewlines(_ s: String) -> String {
        var s = s
        while s.hasSuffix("\n") { s.removeLast() }
        return s
    }

    static func run(_ argv: [String], in dir: URL, environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = argv
        process.currentDirectoryURL = dir
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite(.enabled(if: loaderWorks, "needs the YAML loader"))
struct ExpressionCheckTests {
    @Test func everyProblemPointsIntoItsString() {
        let result = load("""
            version: 1
            vars: { channel: beta }
            env:
              TOP: ${{ needs.a.result }}
            nodes:
              a:
                run: echo ${{ vars.chanel }} and ${{needs.b.outputs.x}}
              b:
                needs: a
                run: [echo, "${{ needs.a.outputs.x }}", "${{ needs.c.outputs.x }}", "${{ nope.x }}"]
                env:
                  X: "${{ vars.channel }} ${{ vars.missing"
              c:
                needs: [b]
                uses: echo
                with: { message: "${{ needs.zz.result }}" }
                dir: ${{ needs.a.outputs.dir }}
              d:
                run: |
                  echo ok
                  eval ${{ vars.channel }}
            """)
        #expect(lines(result) == [
            "4:8: error: 'needs' is not available in the graph's env; only a node's run, env, with and dir can read its needs",
            "7:15: error: undeclared var 'chanel' (did you mean 'channel'?)",
            "7:38: error: node 'a' reads 'b', which is not one of its needs",
            "10:46: error: node 'b' reads 'c', which is not one of its needs",
            "10:74: error: unknown context 'nope' in an expression; use needs, vars, env, item, matrix, params, args or secrets",
            "12:31: error: unclosed '${{'; close the expression with '}}' on the same line",
            "16:23: error: node 'c' reads unknown node 'zz'",
            "17:10: error: node 'c' reads 'a', which is not one of its needs",
            "21:12: error: eval runs its arguments as shell code, so a value there would be code; pass the value through 'env:' and use \"$NAME\" inside single quotes (eval 'echo \"$NAME\"')",
        ])
        #expect(result.diagnostics.first { $0.message.contains("chanel") }?.span?.end.column == 33)
    }

    @Test func setDeclaresAVar() {
        let text = "version: 1\nnodes:\n  a: { run: 'echo ${{ vars.tag }}' }\n"
        #expect(load(text).hasErrors)
        let set = load(text, overrides: ["tag": "v1"])
        #expect(!set.hasErrors)
        #expect(set.warnings.isEmpty, "a --set of a var the graph reads is no typo")
    }

    /// `--set chanel=stable` would run with the file's channel, silently.
    @Test func aSetOfAVarNeitherDeclaredNorReadIsAWarning() {
        let text = "version: 1\nvars: { channel: beta, spare: x }\nnodes:\n  a: { run: 'echo ${{ vars.channel }}' }\n"
        let result = load(text, overrides: ["chanel": "stable", "spare": "y"])
        #expect(!result.hasErrors)
        #expect(result.graph != nil)
        #expect(result.warnings.map(\.message) == [
            "--set chanel: no var 'chanel' is declared or read in this graph (did you mean 'channel'?)",
        ])
        #expect(result.warnings.first?.span == nil)
        #expect(result.warnings.first?.notes == [], "the suggestion is the help")
        // A var read but not declared is known too; with no near name, the help says where vars go.
        let reads = "version: 1\nnodes:\n  a: { run: 'echo ${{ vars.release }}' }\n"
        #expect(load(reads, overrides: ["release": "1", "relase": "2"]).warnings.map(\.message) == [
            "--set relase: no var 'relase' is declared or read in this graph (did you mean 'release'?)",
        ])
        let far = load(reads, overrides: ["release": "1", "zzz": "2"]).warnings
        #expect(far.first?.notes.first?.hasPrefix("help: vars are declared under 'vars:'") == true)
        // Next to errors, nothing: the node with the error may read it.
        let broken = "version: 1\nnodes:\n  a: { run: 'echo ${{ vars.x }}', bogus: 1 }\n"
        #expect(load(broken, overrides: ["x": "1"]).warnings.isEmpty)
    }

    @Test func validReferencesAreQuiet() {
        let result = load("""
            version: 1
            vars: { who: me }
            dotenv: [.env, { path: .env.local, optional: true }]
            env: { HOME2: "${{ env.HOME }}" }
            nodes:
              a: { run: echo hi }
              b:
                needs: a
                run: echo ${{ needs.a.outputs.x }} "${{ needs.a.result }}" ${{ vars.who }}
            """)
        #expect(lines(result) == [])
        #expect(result.graph?.dotenv == [DotenvFile(path: ".env", optional: false, span: result.graph?.dotenv[0].span),
                                        DotenvFile(path: ".env.local", optional: true, span: result.graph?.dotenv[1].span)])
    }

    @Test func builderDocumentsFallBackToColumns() {
        let result = decode(doc(.map([("a", .map([("run", "echo ${{ vars.nope }}")]))])))
        #expect(result.errors.count == 1)
        #expect(result.errors.first?.message.contains("undeclared var 'nope'") == true)
    }
}

@Suite struct ContainsExpressionTests {
    @Test func findsTheOpeningWhereverItIs() {
        for text in ["${{", "a ${{ b }}", "$${{ x }}", "${${{", "echo ${{", "é${{"] {
            #expect(Template.containsExpression(text), "\(text)")
        }
        for text in ["", "$", "${", "${ {", "$ {{", "{{ x }}", "${x}", "$}{{", "echo $HOME"] {
            #expect(!Template.containsExpression(text), "\(text)")
        }
    }
}
