import Foundation
import MoonEvents
import Testing

/// `secrets:` end to end: the node gets the real value (it writes its
/// hash), and the value is in nothing moon writes — its output in every
/// form, events, summaries, the dry run, `graph`, `status`, `history`,
/// `replay`, and every file under `.moon/` and the cache (docs/secrets.md).
@Suite struct SecretTests {
    static let token = "s3cr3t-Tok3n-XYZ"
    static let key = "KEY-file-value"

    /// Prints the secret every way a node can: stdout, stderr, split across
    /// writes, from an env var, into `$MOON_OUTPUT`, and before failing.
    static let graph = """
        version: 1
        secrets:
          token: { env: DEPLOY_TOKEN }
          key: { file: secret.key }
          opt: { env: MOON_TEST_NEVER_SET, required: false }
        nodes:
          leak:
            sources: [in.txt]
            generates: [out/hash]
            env:
              TOKEN: ${{ secrets.token }}
            run: |
              mkdir -p out
              printf '%s' "$TOKEN" | sha256sum | cut -d' ' -f1 > out/hash
              printf '%s' "${{ secrets.key }}" | sha256sum | cut -d' ' -f1 >> out/hash
              echo "stdout: ${{ secrets.token }}"
              echo "stderr: $TOKEN" >&2
              printf 'split: %s' "${TOKEN%????????}"; sleep 0.3; printf '%s\\n' "${TOKEN#????????}"
              echo "key: ${{ secrets.key }}"
              echo "opt=[${{ secrets.opt }}]"
              echo "derived=pre${TOKEN}post" >> "$MOON_OUTPUT"
          reader:
            needs: [leak]
            run: echo "got ${{ needs.leak.outputs.derived }}"
          fails:
            env: { TOKEN: "${{ secrets.token }}" }
            run: echo "about to fail with $TOKEN" >&2; exit 3
        """

    static func checkout() throws -> Moon {
        let moon = try Moon(graph: graph)
        try moon.write("in.txt", "input\n")
        try moon.write("secret.key", key + "\n")
        return moon
    }

    static let environment = ["DEPLOY_TOKEN": token]

    /// What must never appear: each secret, and the halves the node writes apart.
    static func leaks(_ text: String) -> [String] {
        [token, key, String(token.prefix(8)) + String(token.suffix(8))].filter { text.contains($0) }
    }

    static func sha256(_ text: String) throws -> String {
        let moon = try Moon()
        return try shell("printf '%s' '\(text)' | sha256sum | cut -d' ' -f1", in: moon).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every file below `directory`, read as bytes, that holds a secret.
    static func filesHoldingSecrets(in directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: [String] = []
        let needles = [Data(token.utf8), Data(key.utf8)]
        while let name = walker.nextObject() as? String {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name) else { continue }
            if needles.contains(where: { data.range(of: $0) != nil }) { found.append(name) }
        }
        return found
    }

    @Test func theNodeGetsTheValueAndNothingMoonWritesHoldsIt() throws {
        let moon = try Self.checkout()
        let json = try moon.run(["run", "-k", "--json"], environment: Self.environment)
        #expect(json.status == 1)
        #expect(Self.leaks(json.stdout + json.stderr).isEmpty, "\(json.stdout)\n\(json.stderr)")
        // The node received the real values.
        let hashes = (moon.read("out/hash") ?? "").split(separator: "\n").map(String.init)
        #expect(hashes == [try Self.sha256(Self.token), try Self.sha256(Self.key)])
        // Masked, not dropped: each line, the split one too, the output and what a dependent read.
        #expect(json.printed("leak") == ["stdout: ***", "split: ***", "key: ***", "opt=[]"])
        #expect(json.events("next", node: "leak").contains { $0.stream == .stderr && $0.text == "stderr: ***" })
        #expect(json.events("complete", node: "leak").first?.outputs == ["derived": "pre***post"])
        #expect(json.printed("reader") == ["got pre***post"])
        #expect(json.events("next", node: "fails").first?.text == "about to fail with ***")
        #expect(json.events("start", node: "leak").first?.command?.contains("${{ secrets.token }}") == true)
        try moon.write("rec.jsonl", json.stdout)

        // Every other way moon shows a run or the graph.
        try moon.write("in.txt", "changed\n")
        var shown: [(String, Moon.Result)] = []
        for arguments in [["run", "-k", "--output", "plain", "-v"], ["run", "-k", "--output", "plain", "--output-mode", "grouped"],
                          ["run", "-k", "--output", "tty", "-v"]] {
            try moon.write("in.txt", "changed \(arguments.count) \(arguments.last!)\n")
            shown.append((arguments.joined(separator: " "), try moon.run(arguments, environment: Self.environment)))
        }
        #expect(shown[0].1.stdout.contains("stdout: ***"), "\(shown[0].1.stdout)")
        #expect(shown[0].1.stdout.contains("about to fail with ***"), "\(shown[0].1.stdout)")
        for arguments in [["run", "-n"], ["run", "-n", "-v"], ["graph"], ["graph", "--format", "json"], ["graph", "--format", "dot"],
                          ["status"], ["history"], ["replay", "rec.jsonl"], ["replay", "--output", "plain", "-v", "rec.jsonl"],
                          ["replay", "--json", "rec.jsonl"], ["list"], ["check"]] {
            shown.append((arguments.joined(separator: " "), try moon.run(arguments, environment: Self.environment)))
        }
        for (what, result) in shown {
            #expect(Self.leaks(result.stdout + result.stderr).isEmpty, "moon \(what):\n\(result.stdout)\n\(result.stderr)")
        }
        #expect(shown.first { $0.0 == "graph" }?.1.stdout.contains("${{ secrets.token }}") == true)
        // Nothing on disk either: the state, the history, the compiled graph, the cache's entries and metadata.
        #expect(Self.filesHoldingSecrets(in: moon.path(".moon")).isEmpty)
        #expect(Self.filesHoldingSecrets(in: moon.path(".cache")).isEmpty)
        #expect(FileManager.default.fileExists(atPath: moon.path(".cache")), "the node was cached locally")
    }

    @Test func aSecretAcrossTheCutOfAVeryLongLineIsMasked() throws {
        // A line of more than 1 MiB arrives in parts; the secret straddles the first cut.
        let moon = try Moon(graph: """
            version: 1
            secrets: { token: { env: DEPLOY_TOKEN } }
            nodes:
              long:
                env: { TOKEN: "${{ secrets.token }}" }
                run: head -c 1048570 /dev/zero | tr '\\0' a; printf '%s and %s\\n' "$TOKEN" "$TOKEN"
            """)
        let result = try moon.run(["run", "--json"], environment: Self.environment)
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.events("next", node: "long").compactMap(\.text).joined()
        #expect(line.hasPrefix(String(repeating: "a", count: 1000)))
        #expect(line.hasSuffix("aaa*** and ***"), "\(line.suffix(40))")
        #expect(Self.leaks(result.stdout).isEmpty)
    }

    @Test(.enabled(if: TmuxSession.available, "tmux is not installed"))
    func theLiveViewNeverShowsIt() throws {
        let moon = try Self.checkout()
        let session = TmuxSession(in: moon)
        // Its own cache: an entry of another test would restore the node instead of running it.
        session.start("run -k -v", environment: Self.environment.merging(["MOON_CACHE_DIR": moon.path(".cache")]) { a, _ in a }, height: 60)
        var screens: [String] = []
        let end = session.waitFor(30) { screen in
            screens.append(screen)
            return screen.contains("MOON-EXIT=")
        }
        let done = try #require(end, "\(session.screen())")
        #expect(done.contains("MOON-EXIT=1"), "\(done)")
        #expect(done.contains("about to fail with ***"), "\(done)")
        #expect(screens.contains { $0.contains("stdout: ***") }, "\(done)")
        for screen in screens {
            #expect(Self.leaks(screen).isEmpty && !screen.contains(String(Self.token.prefix(8))), "\(screen)")
        }
    }

    @Test func aRotatedSecretLeavesTheNodeUpToDate() throws {
        let moon = try Self.checkout()
        #expect(try moon.run(["run", "--json", "leak"], environment: Self.environment).outcome("leak") == "ran")
        let rotated = try moon.run(["run", "--json", "leak"], environment: ["DEPLOY_TOKEN": "a-rotated-token"])
        #expect(rotated.outcome("leak") == "up-to-date", "\(rotated.stdout)")
        // A node that is up to date needs no secret: none is set here.
        #expect(try moon.run(["run", "--json", "leak"]).outcome("leak") == "up-to-date")
        // Its declaration is what counts: reading another secret is a change.
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "token: { env: DEPLOY_TOKEN }", with: "token: { env: OTHER_TOKEN }"))
        #expect(try moon.run(["run", "--json", "leak"], environment: ["OTHER_TOKEN": Self.token]).outcome("leak") == "up-to-date")
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "TOKEN: ${{ secrets.token }}", with: "TOKEN: ${{ secrets.key }}"))
        #expect(try moon.run(["run", "--json", "leak"], environment: Self.environment).outcome("leak") == "ran")
    }

    @Test(.enabled(if: Nginx.binary != nil, "nginx is not installed (make test-deps)"))
    func aNodeThatReadsASecretIsNeverUploaded() throws {
        let server = try Nginx()
        let graph = """
            version: 1
            secrets: { token: { env: DEPLOY_TOKEN } }
            nodes:
              plain:
                sources: [a.txt]
                generates: [out/plain]
                run: mkdir -p out && cp a.txt out/plain && echo plain >> ran.log
              signed:
                sources: [a.txt]
                generates: [out/signed]
                env: { TOKEN: "${{ secrets.token }}" }
                run: mkdir -p out && printf '%s' "$TOKEN" | sha256sum > out/signed && echo signed >> ran.log
            """
        func checkout() throws -> Moon {
            let moon = try Moon(graph: graph)
            try moon.write("a.txt", "a\n")
            return moon
        }
        let first = try checkout()
        let stored = try first.run(["run", "--json", "--remote-cache", server.url], environment: Self.environment)
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(server.files("ac").count == 1, "only 'plain' is shared")
        #expect(Self.filesHoldingSecrets(in: server.directory.path("data")).isEmpty)
        let second = try checkout()
        let restored = try second.run(["run", "--json", "--remote-cache", server.url], environment: Self.environment)
        #expect(restored.outcome("plain") == "cache-hit")
        #expect(restored.outcome("signed") == "ran")
        #expect(second.read("ran.log") == "signed\n")
        // The local cache keeps it: the same checkout restores it after a clean.
        try FileManager.default.removeItem(atPath: second.path("out"))
        try FileManager.default.removeItem(atPath: second.path(".moon"))
        let local = try second.run(["run", "--json", "--remote-cache", server.url], environment: Self.environment)
        #expect(local.outcome("signed") == "cache-hit", "\(local.stdout)")
    }

    @Test func fileSecretsFollowTheRulesForHostileFiles() throws {
        let moon = try Moon(graph: """
            version: 1
            secrets:
              fromFile: { file: keys/deploy.key }
              device: { file: /dev/zero }
              fifo: { file: pipe }
              huge: { file: huge.key }
              dir: { file: keys }
              binary: { file: binary.key }
            nodes:
              ok: { run: 'test "${{ secrets.fromFile }}" = "line one" && echo fine' }
              device: { run: 'echo ${{ secrets.device }}' }
              fifo: { run: 'echo ${{ secrets.fifo }}' }
              huge: { run: 'echo ${{ secrets.huge }}' }
              dir: { run: 'echo ${{ secrets.dir }}' }
              binary: { run: 'echo ${{ secrets.binary }}' }
            """)
        try moon.makeDirectory("keys")
        try moon.write("keys/deploy.key", "line one\n\n")
        try moon.write("huge.key", String(repeating: "x", count: 100_000))
        try Data([0x61, 0x62, 0x00, 0x63, 0x64]).write(to: URL(fileURLWithPath: moon.path("binary.key")))
        #expect(mkfifo(moon.path("pipe"), 0o600) == 0)
        let result = try moon.run(["run", "-k", "--json"], limit: 30)
        #expect(result.outcome("ok") == "ran", "\(result.stdout)")
        #expect(result.printed("ok") == ["fine"])
        let expected = ["device": "/dev/zero is not a regular file", "fifo": "pipe is not a regular file",
                        "huge": "moon reads secret files of at most", "dir": "keys is not a regular file",
                        "binary": "is not UTF-8 text (or holds a NUL byte)"]
        for (node, words) in expected {
            let message = result.error(of: node)?.message ?? ""
            #expect(message.contains("secret '\(node)' (moon.yaml:") && message.contains(words), "\(node): \(message)")
        }
    }

    @Test func aMissingSecretFailsOnlyTheNodeThatReadsItSayingHowToSetIt() throws {
        let moon = try Moon(graph: """
            version: 1
            secrets:
              token: { env: MOON_TEST_TOKEN_UNSET }
              maybe: { env: MOON_TEST_MAYBE_UNSET, required: false }
              key: { file: missing.key }
            nodes:
              deploy: { run: 'echo ${{ secrets.token }}' }
              optional: { run: 'echo "[${{ secrets.maybe }}]"' }
              keyed: { run: 'echo ${{ secrets.key }}' }
              build: { run: echo built }
            """)
        let result = try moon.run(["run", "-k", "--json"])
        #expect(result.status == 1)
        #expect(result.error(of: "deploy")?.message == "secret 'token' (moon.yaml:3:3) is not set; set the environment variable MOON_TEST_TOKEN_UNSET, or declare it with 'required: false'")
        #expect(result.error(of: "keyed")?.message.contains("secret 'key' (moon.yaml:5:3) is not set; write it to the file missing.key") == true)
        #expect(result.printed("optional") == ["[]"])
        #expect(result.outcome("build") == "ran")
        // An empty variable is a missing one; a dotenv file is no source of secrets (every node gets its values).
        #expect(try moon.run(["run", "--json", "deploy"], environment: ["MOON_TEST_TOKEN_UNSET": ""]).status == 1)
        try moon.write(".env", "MOON_TEST_TOKEN_UNSET=from-dotenv\n")
        try moon.write("moon.yaml", (moon.read("moon.yaml") ?? "").replacingOccurrences(of: "secrets:\n", with: "dotenv: [{path: .env}]\nsecrets:\n"))
        #expect(try moon.run(["run", "--json", "deploy"]).status == 1)
        // Too short to mask: refused, saying why.
        let short = try moon.run(["run", "--json", "deploy"], environment: ["MOON_TEST_TOKEN_UNSET": "abc"])
        #expect(short.error(of: "deploy")?.message.contains("is 3 bytes long; moon masks secrets as *** in what it writes, and needs at least 4 bytes") == true)
        let set = try moon.run(["run", "--json", "deploy"], environment: ["MOON_TEST_TOKEN_UNSET": "abcd"])
        #expect(set.printed("deploy") == ["***"], "\(set.stdout)\(set.stderr)")
    }

    @Test func watchModeReadsARotatedSecretAndMasksTheOldOneToo() throws {
        let moon = try Moon(graph: """
            version: 1
            secrets: { key: { file: key.txt } }
            nodes:
              show:
                sources: [a.txt]
                run: cat a.txt; echo "key ${{ secrets.key }}"
              server:
                service: true
                env: { K: "${{ secrets.key }}" }
                run: 'while true; do echo "serving $K"; sleep 0.1; done'
            """)
        try moon.write("a.txt", "one\n")
        try moon.write("key.txt", "first-key-value\n")
        let running = try moon.start(["run", "--watch", "--json"])
        func texts() -> [String] { running.events.filter { $0.name == "next" }.compactMap(\.text) }
        #expect(eventually(60) { running.events.contains { $0.name == "graph-complete" } && texts().contains("serving ***") })
        try moon.write("key.txt", "second-key-value\n")
        try moon.write("a.txt", "two\n")
        #expect(eventually(60) { running.events.filter { $0.name == "graph-complete" }.count >= 2 })
        // The service, started with the first value, goes on printing it, between runs and in the next.
        let printed = texts().count
        #expect(eventually(10) { texts().count > printed + 3 })
        running.signal(SIGINT)
        let result = try running.wait(limit: 30)
        let lines = result.events.filter { $0.name == "next" }.compactMap(\.text)
        #expect(lines.filter { $0.hasPrefix("key ") } == ["key ***", "key ***"], "\(lines)")
        #expect(lines.contains("serving ***"))
        #expect(!result.stdout.contains("first-key") && !result.stdout.contains("second-key") && !result.stderr.contains("-key-value"))
    }

    @Test func anExportRefusesANodeThatReadsASecret() throws {
        let moon = try Moon(graph: """
            version: 1
            secrets: { token: { env: DEPLOY_TOKEN } }
            nodes:
              deploy: { run: 'echo ${{ secrets.token }}' }
            """)
        let result = try moon.run(["export", "--format", "sbatch"], environment: Self.environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot export node 'deploy': ${{ secrets.token }} is a secret, which an exported script would hold in its text"), "\(result.stderr)")
        #expect(Self.leaks(result.stdout + result.stderr).isEmpty)
    }

    @Test func badDeclarationsAndReadsAreLoadErrors() throws {
        let moon = try Moon(graph: """
            version: 1
            env: { GLOBAL: "${{ secrets.token }}" }
            secrets:
              token: { env: DEPLOY_TOKEN }
              both: { env: A, file: b }
              neither: { required: false }
            nodes:
              deploy:
                sources: ["${{ secrets.token }}"]
                run: echo ${{ secrets.tokn }}
            """)
        let result = try moon.run(["check"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("moon.yaml:5:3: error: secret 'both' has both 'env' and 'file'; keep one"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:6:3: error: secret 'neither' needs 'env: VAR' or 'file: PATH'"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:2:17: error: secrets are only available in a node's run, env, with and dir; the graph's env cannot read them"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:9:16: error: 'sources' is read before the node runs"), "\(result.stderr)")
        #expect(result.stderr.contains("moon.yaml:10:15: error: undeclared secret 'tokn' (did you mean 'token'?)"), "\(result.stderr)")
        #expect(result.stderr.contains("help: declare it under 'secrets:' as tokn: {env: VARIABLE} or tokn: {file: PATH}"), "\(result.stderr)")
    }
}
