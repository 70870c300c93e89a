import Foundation
import MoonEvents
import Testing

/// Outputs, vars, dotenv and safe interpolation, through the real binary.
@Suite struct DataFlowTests {
    func outputs(_ result: Moon.Result, _ node: String) -> [String: String] {
        result.events("complete", node: node).first?.outputs ?? [:]
    }

    @Test func outputsFlowAlongAChain() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: echo "n=1" >> "$MOON_OUTPUT"
              b:
                needs: a
                run: echo "n=$(( ${{ needs.a.outputs.n }} + 1 ))" >> "$MOON_OUTPUT"
              c:
                needs: b
                run: [sh, -c, 'echo "got $0"', "${{ needs.b.outputs.n }}"]
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(outputs(result, "a") == ["n": "1"])
        #expect(outputs(result, "b") == ["n": "2"])
        #expect(result.printed("c") == ["got 2"])
        #expect(outputs(result, "c") == [:])
    }

    /// The outputs directory is `$TMPDIR/moon-XXXXXX`, private to the user,
    /// and gone once moon exits: after a run that succeeded (removed when
    /// the last node ended) and after one that failed (removed at exit).
    @Test func theOutputDirectoryIsPrivateAndGoneAfterTheRun() throws {
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("moon-tmpdir-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: temp) }
        for failing in [false, true] {
            let moon = try Moon(graph: """
                version: 1
                nodes:
                  a:
                    run: |
                      dir=$(dirname "$MOON_OUTPUT")
                      echo "dir=$dir" >> "$MOON_OUTPUT"
                      echo "mode=$(stat -c %a "$dir")" >> "$MOON_OUTPUT"
                  b:
                    needs: a
                    run: echo "${{ needs.a.outputs.dir }}"; exit \(failing ? 1 : 0)
                """)
            let result = try moon.run(["run", "--json"], environment: ["TMPDIR": temp])
            #expect(result.status == (failing ? 1 : 0), "\(result.stderr)")
            let dir = try #require(outputs(result, "a")["dir"])
            #expect(dir.hasPrefix(temp + "/moon-"))
            #expect(outputs(result, "a")["mode"] == "700")
            #expect(result.printed("b") == [dir])
            #expect(try FileManager.default.contentsOfDirectory(atPath: temp) == [], "left behind after a run that \(failing ? "failed" : "succeeded")")
        }
    }

    /// Without `$TMPDIR`, the directory goes on a memory file system
    /// (`/dev/shm`, when it is one): making and removing it on a disk cost
    /// half a millisecond of every run.
    @Test func withoutTMPDIRTheOutputDirectoryIsInMemory() throws {
        let shm = Process()
        shm.executableURL = URL(fileURLWithPath: "/usr/bin/stat")
        shm.arguments = ["-f", "-c", "%T", "/dev/shm"]
        let type = Pipe()
        shm.standardOutput = type
        try shm.run()
        shm.waitUntilExit()
        let text = String(decoding: type.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let shmIsTmpfs = text.trimmingCharacters(in: .whitespacesAndNewlines) == "tmpfs" && access("/dev/shm", W_OK) == 0
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: echo "dir=$(dirname "$MOON_OUTPUT")" >> "$MOON_OUTPUT"
            """)
        let result = try moon.run(["run", "--json"], environment: ["TMPDIR": "", "XDG_RUNTIME_DIR": ""])
        #expect(result.status == 0, "\(result.stderr)")
        let dir = try #require(outputs(result, "a")["dir"])
        #expect(dir.hasPrefix(shmIsTmpfs ? "/dev/shm/moon-" : "/tmp/moon-"))
        #expect(!FileManager.default.fileExists(atPath: dir))
    }

    @Test func multiLineOutputs() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: |
                  { echo "notes<<END"; printf 'one\\ntwo\\n'; echo END; } >> "$MOON_OUTPUT"
              b:
                needs: a
                run: printf '%s|' ${{ needs.a.outputs.notes }}
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(outputs(result, "a") == ["notes": "one\ntwo"])
        #expect(result.printed("b") == ["one", "two|"])
    }

    @Test func aMalformedOutputFileFailsTheNode() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: echo "no equals sign" >> "$MOON_OUTPUT" }
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 1)
        let error = result.events("error", node: "a").first?.error
        #expect(error?.kind == .exit)
        #expect(error?.message.contains("$MOON_OUTPUT is malformed: line 1: expected KEY=VALUE") == true)
    }

    @Test func resultsReachAnAlwaysNode() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              ok: { run: "true" }
              bad: { run: "exit 3" }
              skipped: { needs: bad, run: "true" }
              report:
                needs: [ok, bad, skipped]
                if: always
                run: echo "${{ needs.ok.result }} ${{ needs.bad.result }} ${{ needs.skipped.result }} [${{ needs.bad.outputs.x }}]"
            """)
        let result = try moon.run(["run", "--json", "-k"])
        #expect(result.status == 1)
        #expect(result.printed("report") == ["success failure skipped []"])
    }

    @Test func setOverridesAVarAndBuiltinsGetTheirValues() throws {
        let moon = try Moon(graph: """
            version: 1
            vars: { channel: beta, n: "2" }
            nodes:
              say: { uses: echo, with: { message: "channel ${{ vars.channel }}" } }
              num:
                run: echo "value=${{ vars.n }}" >> "$MOON_OUTPUT"
              five: { uses: echo, with: { message: "5" } }
              total: { needs: [num, five], uses: reduce, with: { op: sum } }
              show:
                needs: [say, total]
                run: echo ${{ needs.say.outputs.value }} = ${{ needs.total.outputs.value }}
            """)
        let result = try moon.run(["run", "--json", "--set", "channel=stable"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.printed("show") == ["channel stable = 7"])
    }

    @Test func dotenvFilesFeedTheEnvironment() throws {
        let moon = try Moon(graph: """
            version: 1
            dotenv: [.env, { path: .env.local, optional: true }]
            env: { GREETING: "${{ env.WHO }}!" }
            nodes:
              a: { run: 'echo "$WHO $GREETING $LOCAL $FROM_SHELL"' }
            """)
        try moon.write(".env", "# settings\nexport WHO='dot env'\nLOCAL=no\nFROM_SHELL=file\n")
        try moon.write(".env.local", "LOCAL=\"yes\" # later files win\n")
        let result = try moon.run(["run", "--json"], environment: ["FROM_SHELL": "shell"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.printed("a") == ["dot env dot env! yes shell"])
    }

    @Test func aMissingDotenvFileIsAnError() throws {
        let moon = try Moon(graph: "version: 1\ndotenv: [.env]\nnodes:\n  a: { run: 'true' }\n")
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:2:10: error: cannot read dotenv file '.env'"))
        #expect(result.stderr.contains("help: create it, or mark it optional: { path: .env, optional: true }"))
    }

    static let hostile: [String: String] = [
        "quotes": #"it's "quoted" \'"#,
        "subst": "$(touch pwned)",
        "ticks": "`touch pwned`",
        "semi": "; touch pwned; rm -rf pwned-dir",
        "lines": "line one\ntouch pwned\n'; touch pwned; '",
        "vars": "$HOME ${PATH} $$ *",
    ]

    /// Hostile outputs, inserted into a shell script, an exec argument, env
    /// and a built-in: printed verbatim, never run.
    @Test func hostileValuesAreDataNeverCode() throws {
        let keys = Self.hostile.keys.sorted()
        var writer = "cat > \"$MOON_OUTPUT\" <<'MOON_END'\n"
        for key in keys { writer += "\(key)<<DELIM\n\(Self.hostile[key]!)\nDELIM\n" }
        writer += "MOON_END\n"
        var uses = ""
        for key in keys {
            uses += """
                  echo ${{ needs.a.outputs.\(key) }}
                  echo "in dq: ${{ needs.a.outputs.\(key) }}"
                  echo 'in sq: ${{ needs.a.outputs.\(key) }}'
                  printf '%s\\n' "$V_\(key)"

            """
        }
        let env = keys.map { "V_\($0): ${{ needs.a.outputs.\($0) }}" }.joined(separator: "\n      ")
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a:
                run: |
            \(writer.split(separator: "\n", omittingEmptySubsequences: false).map { "      " + $0 }.joined(separator: "\n"))
              b:
                needs: a
                run: |
            \(uses)
                env:
                  \(env)
              c:
                needs: a
                run: [printf, "%s|", "${{ needs.a.outputs.subst }}", "x ${{ needs.a.outputs.lines }}"]
              d:
                needs: a
                uses: echo
                with: { message: "${{ needs.a.outputs.ticks }}" }
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: moon.path("pwned")), "a value was executed")
        let printed = result.printed("b").joined(separator: "\n")
        var expected: [String] = []
        for key in keys {
            let v = Self.hostile[key]!
            expected += [v, "in dq: \(v)", "in sq: \(v)", v]
        }
        #expect(printed == expected.joined(separator: "\n"))
        #expect(result.printed("c").joined(separator: "\n") == "$(touch pwned)|x \(Self.hostile["lines"]!)|")
        let value = result.events("next", node: "d").first { $0.stream == .value }?.text
        #expect(value == "`touch pwned`")
    }

    @Test func aHundredKilobyteValueArrivesWhole() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { run: 'printf "big=%s\\n" "$(head -c 102400 /dev/zero | tr "\\0" "x")" >> "$MOON_OUTPUT"' }
              b:
                needs: a
                run: printf '%s' ${{ needs.a.outputs.big }} | wc -c
            """)
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(outputs(result, "a")["big"]?.count == 102_400)
        #expect(result.printed("b").map { $0.trimmingCharacters(in: .whitespaces) } == ["102400"])
    }

    @Test func checkPointsAtEachExpression() throws {
        let moon = try Moon(graph: """
            version: 1
            vars: { channel: beta }
            nodes:
              build: { run: echo hi }
              test:
                run: echo ${{ needs.build.outputs.sha }} ${{ vars.chanel }}
              ship:
                needs: [build]
                run: |
                  echo "${{ needs.build.outputs.sha }}"
                  echo ${{ secrets.token }}; eval ${{ vars.channel }}
              tag:
                run: echo ${{ vars.channel
            """, file: "graph.yaml")
        let result = try moon.run(["check", "graph.yaml"])
        #expect(result.status == 2)
        #expect(result.stderr == """
            graph.yaml:6:15: error: node 'test' reads 'build', which is not one of its needs
                6 |     run: echo ${{ needs.build.outputs.sha }} ${{ vars.chanel }}
                  |               ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
                  = help: add 'build' to its 'needs' (only direct needs can be read)
            graph.yaml:6:46: error: undeclared var 'chanel' (did you mean 'channel'?)
                6 |     run: echo ${{ needs.build.outputs.sha }} ${{ vars.chanel }}
                  |                                              ^~~~~~~~~~~~~~~~~~
                  = help: declare it under 'vars:', or pass --set chanel=VALUE
            graph.yaml:11:12: error: undeclared secret 'token'
               11 |       echo ${{ secrets.token }}; eval ${{ vars.channel }}
                  |            ^~~~~~~~~~~~~~~~~~~~
                  = help: declare it under 'secrets:' as token: {env: VARIABLE} or token: {file: PATH}
            graph.yaml:11:39: error: eval runs its arguments as shell code, so a value there would be code; pass the value through 'env:' and use "$NAME" inside single quotes (eval 'echo "$NAME"')
               11 |       echo ${{ secrets.token }}; eval ${{ vars.channel }}
                  |                                       ^~~~~~~~~~~~~~~~~~~
            graph.yaml:13:15: error: unclosed '${{'; close the expression with '}}' on the same line
               13 |     run: echo ${{ vars.channel
                  |               ^~~
            5 errors in graph.yaml\n
            """)
    }

    @Test func theExampleRuns() throws {
        let moon = try Moon()
        let result = try moon.run(["run", "--json", Moon.root.appendingPathComponent("examples/dataflow.yaml").path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.events("complete", node: "summary").isEmpty)
    }
}
