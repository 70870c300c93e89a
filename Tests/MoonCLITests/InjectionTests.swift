import Foundation
import MoonEvents
import Glibc
import Testing

/// `${{ … }}` values are data, whatever shell text surrounds them: each test
/// gives moon a value that would run `touch MARK` if the shell ever read it
/// as code, and fails if MARK exists afterwards.
/// Over 400 lines: one test per place a value can reach a shell.
@Suite struct InjectionTests {
    static let payload = "$(touch MARK)"
    static let subscriptPayload = "a[$(touch MARK)]"

    func marked(_ moon: Moon) -> Bool { FileManager.default.fileExists(atPath: moon.path("MARK")) }

    /// A graph whose node `src` writes `a` = `value` as an output, and whose
    /// other nodes (from `nodes`, YAML text indented by four spaces) read it.
    func graph(shell: String = "sh", _ nodes: String) -> String {
        """
        version: 1
        defaults: { shell: \(shell) }
        nodes:
          src:
            run: |
              cat >> "$MOON_OUTPUT" <<'MOON_END'
              a=$(touch MARK)
              s=a[$(touch MARK)]
              MOON_END
        \(nodes)
        """
    }

    /// The report's case I3: a `case` pattern's `)` inside `"$( … )"` made
    /// moon's quoting model think it was back in the outer `"…"`.
    @Test func aCasePatternInsideCommandSubstitutionIsData() throws {
        let moon = try Moon(graph: graph("""
              one:
                needs: src
                run: echo "$(case x in x) echo ${{ needs.src.outputs.a }};; esac)"
              two:
                needs: src
                run: echo "$(case x in y|x) echo ${{ needs.src.outputs.a }};; esac)"
              lines:
                needs: src
                run: |
                  echo "$(case x in
                    x) echo ${{ needs.src.outputs.a }};;
                  esac)"
            """))
        let check = try moon.run(["check"])
        #expect(check.status == 0, "\(check.stderr)")
        let result = try moon.run(["run", "--json"])
        #expect(!marked(moon), "a value ran as code")
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
        for node in ["one", "two", "lines"] { #expect(result.printed(node) == [Self.payload], "\(node)") }
    }

    /// The report's cases I4/I5: bash evaluates arithmetic and variable
    /// names recursively, and runs `$(…)` in an array subscript found there.
    /// A value in such a place must be a plain integer; the node fails
    /// before anything runs otherwise.
    @Test func bashArithmeticAndNamesNeverRunAValue() throws {
        let forms = [
            "subscript": "arr[${{ needs.src.outputs.a }}]=1",
            "let": "let n=${{ needs.src.outputs.s }}",
            "letquoted": "let \"n=${{ needs.src.outputs.s }}\"",
            "declare": "declare -i n=${{ needs.src.outputs.s }}",
            "cond": "[[ ${{ needs.src.outputs.s }} -eq 0 ]]",
            "printfv": "printf -v ${{ needs.src.outputs.s }} x",
            "arith": "echo $(( ${{ needs.src.outputs.s }} + 1 ))",
            "later": "declare -i n; n=${{ needs.src.outputs.s }}",
            "indirect": "x=${{ needs.src.outputs.s }}; echo $(( x ))",
        ]
        var nodes = ""
        for (name, run) in forms.sorted(by: { $0.key < $1.key }) {
            nodes += "  \(name):\n    needs: src\n    run: '\(run.replacing("'", with: "''"))'\n"
        }
        let moon = try Moon(graph: graph(shell: "bash", nodes))
        let result = try moon.run(["run", "-k", "--json"])
        #expect(!marked(moon), "a value ran as code")
        #expect(result.status == 1)
        for name in forms.keys {
            let message = result.error(of: name)?.message
            #expect(message != nil, "\(name) did not fail")
            #expect(result.events("start", node: name).isEmpty || message?.contains("exited") == false, "\(name): \(message ?? "")")
        }
        #expect(result.error(of: "let")?.message.contains("integer") == true, "\(result.error(of: "let")?.message ?? "")")
    }

    /// Integers still work in every arithmetic form.
    @Test func integersWorkInArithmetic() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults: { shell: bash }
            vars: { n: "-41" }
            nodes:
              a:
                run: |
                  arr[${{ vars.n }} + 50]=1; let m=${{ vars.n }}+1; declare -i k=${{ vars.n }}
                  [[ ${{ vars.n }} -eq -41 ]] && echo "$m $k $(( ${{ vars.n }} + 42 )) ${#arr[@]}"
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
        #expect(result.printed("a") == ["-40 -41 1 1"])
    }

    /// Other members of the class: parameter defaults, here-documents (with
    /// arithmetic inside), backslash-newline, `read` into an array,
    /// `export -n`, backticks, and quoted contexts of every kind.
    @Test func otherShellContextsKeepValuesData() throws {
        let moon = try Moon(graph: graph(shell: "bash", """
              dflt:
                needs: src
                run: echo "${UNSET_X:-${{ needs.src.outputs.a }}}"; echo ${UNSET_X:-${{ needs.src.outputs.a }}}
              heredoc:
                needs: src
                run: |
                  cat <<EOF
                  v=${{ needs.src.outputs.a }} n=$(( 1 + 1 ))
                  EOF
              contd:
                needs: src
                run: |
                  echo a \\
                    ${{ needs.src.outputs.a }}
              readarr:
                needs: src
                run: read -r -a arr <<< ${{ needs.src.outputs.a }}; echo "${arr[@]}"
              exportn:
                needs: src
                run: export -n X=${{ needs.src.outputs.a }}; echo "$X"
              ticks:
                needs: src
                run: echo "`echo ${{ needs.src.outputs.a }}`"
              single:
                needs: src
                run: echo 'sq ${{ needs.src.outputs.a }} sq'
              dq:
                needs: src
                run: echo "dq ${{ needs.src.outputs.a }} dq"
              positional:
                needs: src
                run: sh -c 'echo "$1"' sh ${{ needs.src.outputs.a }}
              procsub:
                needs: src
                run: cat <(echo ${{ needs.src.outputs.a }})
            """))
        let check = try moon.run(["check"])
        #expect(check.status == 0, "\(check.stderr)")
        let result = try moon.run(["run", "-k", "--json"])
        #expect(!marked(moon), "a value ran as code")
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
        let p = Self.payload
        #expect(result.printed("dflt") == [p, p])
        #expect(result.printed("heredoc") == ["v=\(p) n=2"])
        #expect(result.printed("contd") == ["a \(p)"])
        #expect(result.printed("readarr") == [p])
        #expect(result.printed("exportn") == [p])
        #expect(result.printed("ticks") == [p])
        #expect(result.printed("single") == ["sq \(p) sq"])
        #expect(result.printed("dq") == ["dq \(p) dq"])
        #expect(result.printed("positional") == [p])
        #expect(result.printed("procsub") == [p])
    }

    /// `eval`, `trap`, `sh -c`, a pipe into `sh` and a here-document read by
    /// a shell run their text as code: `moon check` refuses a value there
    /// (also one printed by an inner command) and names the `env:` pattern.
    @Test func commandsThatRunTextAsCodeAreRefused() throws {
        let moon = try Moon(graph: """
            version: 1
            vars: { v: "$(touch MARK)" }
            nodes:
              ev: { run: 'eval "echo ${{ vars.v }}"' }
              tr: { run: "trap 'echo ${{ vars.v }}' EXIT" }
              shc: { run: 'sh -c "echo ${{ vars.v }}"' }
              bashc: { run: 'bash -ec "echo ${{ vars.v }}"' }
              inner: { run: 'eval "echo $(echo ${{ vars.v }})"' }
              pipe: { run: 'echo ${{ vars.v }} | sh' }
              heredoc: { run: "sh <<EOF\\necho ${{ vars.v }}\\nEOF" }
              catpipe: { run: "cat <<EOF | bash -s\\necho ${{ vars.v }}\\nEOF" }
              procsub: { run: 'sh <(echo ${{ vars.v }})' }
              herestring: { run: 'bash <<< "echo ${{ vars.v }}"' }
            """, file: "graph.yaml")
        let check = try moon.run(["check", "graph.yaml"])
        #expect(check.status == 2)
        for (line, word) in [(4, "eval"), (5, "trap"), (6, "sh"), (7, "bash"), (8, "inner eval"), (9, "| sh"), (10, "sh <<"),
                             (11, "| bash"), (12, "sh <(…)"), (13, "bash <<<")] {
            #expect(check.stderr.contains("graph.yaml:\(line):"), "\(word): \(check.stderr)")
        }
        #expect(check.stderr.contains("env:"))
        let run = try moon.run(["run", "graph.yaml"])
        #expect(run.status == 2)
        #expect(!marked(moon))
    }

    /// The report's case H4 and its class: commands that evaluate their
    /// arguments (`compgen -W`, `complete -W`, `mapfile`/`readarray -C`,
    /// `flock -c`, `script -c`, `su -c`, `runuser -c`, `watch`, `xargs -I
    /// … sh -c`), variables a shell reads as code (`PS4` with `set -x`,
    /// `export PS4=`, `PROMPT_COMMAND`, `BASH_ENV`, `ENV`, in the script or
    /// in `env:`), and an exec form's `sh -c` script: `moon check` refuses
    /// each at its file:line:col, in sh and bash, and nothing runs.
    @Test(arguments: ["sh", "bash"])
    func commandsThatEvaluateTheirArgumentsAreRefused(shell: String) throws {
        let scripts: [(String, String)] = [
            ("compgen", "compgen -W ${{ args }} x; true"),
            ("compgenq", "compgen -W \"${{ args }}\" x; true"),
            ("complete", "complete -W \"${{ args }}\" cmd"),
            ("mapfile", "mapfile -C ${{ args }} -c 1 arr <<< a; true"),
            ("readarray", "readarray -C \"${{ args }}\" -c 1 arr <<< a; true"),
            ("flock", "flock ./lk -c ${{ args }}"),
            ("script", "script -q -c ${{ args }} /dev/null"),
            ("su", "su root -c \"${{ args }}\""),
            ("runuser", "runuser -u root -- true; runuser root -c ${{ args }}"),
            ("watch", "timeout 2 watch -n 1 -t \"echo ${{ args }}\""),
            ("xargs", "echo ${{ args }} | xargs -I{} sh -c 'echo {}'"),
            ("ps4", "PS4=${{ args }}; set -x; true"),
            ("exportps4", "export PS4=\"${{ args }}\"; set -x; true"),
            ("promptcommand", "export PROMPT_COMMAND=${{ args }}; bash -ic true"),
            ("bashenv", "BASH_ENV=${{ args }} bash -c true"),
            ("env", "ENV=${{ args }} sh -ic true"),
        ]
        var text = "version: 1\ndefaults: { shell: \(shell) }\nnodes:\n"
        for (name, run) in scripts { text += "  \(name): { run: '\(run.replacing("'", with: "''"))' }\n" }
        text += """
              envps4: { env: { PS4: "${{ args }}" }, run: "set -x; true" }
              envbashenv: { env: { BASH_ENV: "${{ args }}" }, run: [bash, -c, "true"] }
              execsh: { run: [sh, -c, "echo ${{ args }}"] }
              execflock: { run: [flock, ./lk, -c, "${{ args }}"] }

            """
        let moon = try Moon(graph: text, file: "graph.yaml")
        let check = try moon.run(["check", "graph.yaml"])
        #expect(check.status == 2)
        let names = scripts.map(\.0) + ["envps4", "envbashenv", "execsh", "execflock"]
        for (k, name) in names.enumerated() {
            #expect(check.stderr.contains("graph.yaml:\(k + 4):"), "\(name) (line \(k + 4)) not refused:\n\(check.stderr)")
        }
        #expect(check.stderr.contains("compgen expands its -W word list"), "\(check.stderr)")
        #expect(check.stderr.contains("a shell expands PS4 as code"), "\(check.stderr)")
        // Each node alone: refused before anything runs, in sh and bash.
        for name in names {
            let run = try moon.run(["run", "graph.yaml", name, "--", Self.payload], limit: 30)
            #expect(run.status == 2, "\(name): \(run.stderr)")
        }
        #expect(!marked(moon), "a value ran as code")
    }

    /// The patterns the refusals point to keep the value data: through
    /// `env:`, inside single quotes.
    @Test func theEnvPatternKeepsValuesOfEvaluatingCommandsData() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults: { shell: bash }
            nodes:
              compgen: { env: { W: "${{ args }}" }, run: "compgen -W '$W' -- x || true" }
              flock: { env: { C: "${{ args }}" }, run: 'flock ./lk -c ''echo "$C"''' }
              mapfile: { run: 'echo ${{ args }} > list; mapfile -t arr < list; echo "${arr[0]}"' }
              xargs: { run: 'echo ${{ args }} | xargs sh -c ''echo "$@"'' sh' }
            """)
        for node in ["compgen", "flock", "mapfile", "xargs"] {
            let result = try moon.run(["run", node, "--json", "--", Self.payload])
            #expect(result.status == 0, "\(node): \(result.stderr)")
        }
        #expect(!marked(moon), "a value ran as code")
        let flock = try moon.run(["run", "flock", "--json", "--", Self.payload])
        #expect(flock.printed("flock") == [Self.payload])
    }

    /// The report's `declare -i n=$N` with `N` from `env:` (the documented
    /// pattern), and other ways a script reads an `env:` value as
    /// arithmetic or a name: a value with `a[$(…)]` fails every node that
    /// runs a shell, from a node's or the graph's `env:`, in sh and bash.
    @Test func envValuesOfShellNodesRefuseASubscriptWithACommand() throws {
        let moon = try Moon(graph: """
            version: 1
            defaults: { shell: bash }
            vars: { v: "1" }
            env: { G: "${{ vars.v }}" }
            nodes:
              declare: { env: { N: "${{ args }}" }, run: "declare -i n=$N" }
              arith: { env: { N: "${{ args }}" }, run: "echo $(( N + 1 ))" }
              cond: { env: { N: "${{ args }}" }, run: "[[ -v $N ]] || true" }
              inner: { env: { N: "x${{ args }}" }, run: "(( N )) || true" }
              shform: { shell: sh, env: { N: "${{ args }}" }, run: "bash -c 'declare -i n=$N'" }
              exec: { env: { N: "${{ args }}" }, run: [bash, -c, "declare -i n=$N"] }
              graphenv: { run: "declare -i n=$G" }
              data: { env: { N: "${{ args }}" }, run: [printenv, N] }
              integer: { env: { N: "${{ args }}" }, run: "declare -i n=$N; echo $(( n + 1 ))" }
            """)
        for node in ["declare", "arith", "cond", "inner", "shform", "exec"] {
            let result = try moon.run(["run", node, "--json", "--", Self.subscriptPayload])
            #expect(result.status == 1, "\(node): \(result.stderr)")
            #expect(result.error(of: node)?.message.contains("env N") == true, "\(node): \(result.error(of: node)?.message ?? result.stderr)")
            #expect(result.events("start", node: node).isEmpty || result.error(of: node)?.message.contains("exited") == false)
        }
        let graphEnv = try moon.run(["run", "graphenv", "--json", "--set", "v=\(Self.subscriptPayload)"])
        #expect(graphEnv.status == 1, "\(graphEnv.stderr)")
        #expect(graphEnv.error(of: "graphenv")?.message.contains("env G") == true, "\(graphEnv.error(of: "graphenv")?.message ?? graphEnv.stderr)")
        #expect(!marked(moon), "a value ran as code")
        // A program that is no shell gets it as data; integers still work.
        let data = try moon.run(["run", "data", "--json", "--", Self.subscriptPayload])
        #expect(data.printed("data") == [Self.subscriptPayload], "\(data.stderr)")
        let integer = try moon.run(["run", "integer", "--json", "--", "41"])
        #expect(integer.printed("integer") == ["42"], "\(integer.stderr)")
    }

    /// Exec form, `env:`, `with:` and `dir:` take values as data.
    @Test func execEnvWithAndDirAreData() throws {
        let moon = try Moon(graph: graph("""
              exec:
                needs: src
                run: [echo, "${{ needs.src.outputs.a }}"]
              env:
                needs: src
                env: { V: "${{ needs.src.outputs.a }}" }
                run: echo "$V"
              with:
                needs: src
                uses: echo
                with: { message: "${{ needs.src.outputs.a }}" }
            """))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!marked(moon))
        #expect(result.printed("exec") == [Self.payload])
        #expect(result.printed("env") == [Self.payload])
    }

    /// `-v` shows the command with the value put in, quoted as the shell
    /// would receive it: shown, never run.
    @Test func verboseShowsTheValueQuotedNeverRun() throws {
        let moon = try Moon(graph: """
            version: 1
            vars: { v: "$(touch MARK)" }
            nodes:
              a: { run: 'echo "${{ vars.v }}"' }
            """)
        let result = try moon.run(["run", "-v"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("▶ a: echo \"\\$(touch MARK)\""), "\(result.stdout)")
        #expect(!marked(moon))
    }

    /// The report's case I8: a value holding the export's here-document
    /// delimiter ended the job's script early, and the rest ran on the
    /// submitting host. Also a value holding every delimiter moon might pick.
    @Test func theSbatchExportKeepsEveryValueInsideItsJob() throws {
        let values = [
            "x\nMOON_JOB_EOF\n)\ntouch MARK\nj0=$(cat <<MOON_JOB_EOF\ny",
            (["MOON_JOB_EOF"] + (0...40).map { "MOON_JOB_EOF_" + String(repeating: "1", count: $0) } + (0...20).map { "MOON_JOB_EOF_\($0)" })
                .map { $0 + "\n)\ntouch MARK\n" }.joined(),
        ]
        for value in values {
            let moon = try Moon(graph: """
                version: 1
                vars: { v: hello }
                queues: { q: { executor: slurm } }
                nodes:
                  a: { queue: q, run: 'echo "${{ vars.v }}"' }
                  b: { queue: q, uses: write-file, with: { path: out.txt, content: "${{ vars.v }}" } }
                """)
            try moon.makeDirectory("fakebin")
            try moon.writeExecutable("fakebin/sbatch", "#!/bin/sh\nn=$(ls \"$(dirname \"$0\")\" | grep -c job)\ncat > \"$(dirname \"$0\")/job$n\"\necho 42$n\n")
            let export = try moon.run(["export", "--format", "sbatch", "-o", "submit.sh", "--set", "v=\(value)"])
            #expect(export.status == 0, "\(export.stderr)")
            let submit = Process()
            submit.executableURL = URL(fileURLWithPath: "/bin/sh")
            submit.arguments = ["submit.sh"]
            submit.currentDirectoryURL = moon.directory
            submit.environment = ["PATH": moon.path("fakebin") + ":/usr/bin:/bin"]
            submit.standardOutput = FileHandle.nullDevice
            submit.standardError = FileHandle.nullDevice
            try submit.run()
            submit.waitUntilExit()
            #expect(submit.terminationStatus == 0)
            #expect(!marked(moon), "the submitting host ran a value")
            // Each job's script, run as the job, prints the value whole.
            for job in ["fakebin/job0", "fakebin/job1"] {
                let run = Process()
                run.executableURL = URL(fileURLWithPath: "/bin/sh")
                run.arguments = [moon.path(job)]
                run.currentDirectoryURL = moon.directory
                let pipe = Pipe()
                run.standardOutput = pipe
                try run.run()
                let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                run.waitUntilExit()
                if job.hasSuffix("0") { #expect(out == value + "\n") }
            }
            #expect(moon.read("out.txt") == value)
            #expect(!marked(moon), "a job ran a value")
        }
    }

    /// The report's F15: `write-file` replaced a device node or a FIFO with
    /// a regular file (as root, `/dev/null` itself). Never the host's /dev:
    /// nodes made in the test's own directory.
    @Test func writeFileReplacesOnlyRegularFiles() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              fifo: { uses: write-file, with: { path: myfifo, content: x } }
              dev: { uses: write-file, with: { path: mynull, content: x } }
              sock: { uses: write-file, with: { path: mysock, content: x } }
              link: { uses: write-file, with: { path: mylink, content: x } }
              plain: { uses: write-file, with: { path: plain.txt, content: x } }
            """)
        #expect(mkfifo(moon.path("myfifo"), 0o600) == 0)
        let root = getuid() == 0
        if root { #expect(mknod(moon.path("mynull"), S_IFCHR | 0o666, dev_t(0x103) /* major 1, minor 3: a null device, in the test's own directory */) == 0) }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = moon.path("mysock")
        try #require(socketPath.utf8.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (k, byte) in socketPath.utf8.enumerated() { buffer[k] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        try moon.write("target.txt", "old")
        #expect(symlink("target.txt", moon.path("mylink")) == 0)
        try moon.write("plain.txt", "old")
        let result = try moon.run(["run", "-k", "--json"])
        #expect(result.status == 1)
        func type(_ name: String) -> mode_t {
            var info = stat()
            return lstat(moon.path(name), &info) == 0 ? info.st_mode & S_IFMT : 0
        }
        #expect(type("myfifo") == S_IFIFO)
        #expect(result.error(of: "fifo")?.message.contains("FIFO") == true, "\(result.error(of: "fifo")?.message ?? "")")
        if root {
            #expect(type("mynull") == S_IFCHR)
            #expect(result.error(of: "dev")?.message.contains("device") == true, "\(result.error(of: "dev")?.message ?? "")")
        }
        #expect(type("mysock") == S_IFSOCK)
        #expect(result.error(of: "sock")?.message.contains("socket") == true, "\(result.error(of: "sock")?.message ?? "")")
        // A symbolic link is replaced by the file; its target is left alone.
        #expect(result.error(of: "link")?.message == nil)
        #expect(type("mylink") == S_IFREG && moon.read("target.txt") == "old")
        #expect(moon.read("plain.txt") == "x")
    }

    /// The report's note I12: a path made from values wrote anywhere. A
    /// relative path stays inside the graph's directory; an absolute one is
    /// allowed only as written in the graph file, not made from a value.
    @Test func writeFileStaysInsideTheGraphDirectory() throws {
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("moon-outside-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let escaped = "escaped-\(UUID().uuidString).txt"
        let moon = try Moon(graph: """
            version: 1
            vars: { up: "out/../../\(escaped)", abs: "\(outside)/from-value.txt", name: "a/../b" }
            nodes:
              up: { uses: write-file, with: { path: "${{ vars.up }}", content: x } }
              abs: { uses: write-file, with: { path: "${{ vars.abs }}", content: x } }
              literalup: { uses: write-file, with: { path: "../2\(escaped)", content: x } }
              literalabs: { uses: write-file, with: { path: "\(outside)/literal.txt", content: x } }
              inside: { uses: write-file, with: { path: "out/${{ vars.name }}.txt", content: x } }
              absinside: { uses: write-file, with: { path: "${{ env.MOON_GRAPH_DIR }}/in.txt", content: x } }
            """)
        try moon.makeDirectory("sub")
        let result = try moon.run(["run", "-k", "--json"], environment: ["MOON_GRAPH_DIR": moon.directory.path])
        #expect(result.status == 1)
        for node in ["up", "abs", "literalup"] {
            #expect(result.error(of: node)?.message.contains("graph's directory") == true, "\(node): \(result.error(of: node)?.message ?? "")")
        }
        #expect(!FileManager.default.fileExists(atPath: moon.directory.deletingLastPathComponent().appendingPathComponent(escaped).path))
        #expect(!FileManager.default.fileExists(atPath: moon.directory.deletingLastPathComponent().appendingPathComponent("2" + escaped).path))
        #expect(!FileManager.default.fileExists(atPath: outside + "/from-value.txt"))
        #expect(result.error(of: "literalabs")?.message == nil)
        #expect(FileManager.default.fileExists(atPath: outside + "/literal.txt"))
        #expect(result.error(of: "inside")?.message == nil && moon.read("out/b.txt") == "x")
        #expect(result.error(of: "absinside")?.message == nil && moon.read("in.txt") == "x", "\(result.error(of: "absinside")?.message ?? "")")
    }
}
