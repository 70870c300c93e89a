import Foundation
import MoonEvents
import Testing

/// A multi-line `run:` is shown whole, with each instance's values put in,
/// by every sink that shows a command: `moon run -n`, `moon graph` (text,
/// dot, JSON), `-v`, the failure summary, the `start` event and a replay.
@Suite struct ScriptDisplayTests {
    /// The trial's reproduction: a fan-out whose script fails on its second line.
    static let fanOut = """
        version: 1
        name: script
        vars:
          GREETING: hello
        nodes:
          t:
            for-each: [a, b]
            run: |
              echo "step one for ${{ item }} ${{ vars.GREETING }}"
              false
              echo never
        """

    static let script = ["echo \"step one for a hello\"", "false", "echo never"]

    /// The lines of `text` from the one that ends with `first`, as many as the script has.
    func block(_ text: String, from first: String, count: Int = script.count) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let i = lines.firstIndex(where: { $0.hasSuffix(first) }) else { return [] }
        return Array(lines[i..<min(lines.count, i + count)])
    }

    /// Each continuation line sits under the first line's command, at its column.
    func expectAligned(_ block: [String], _ script: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        guard block.count == script.count, let column = block.first?.range(of: script[0])?.lowerBound else {
            Issue.record("not the whole script: \(block)", sourceLocation: sourceLocation)
            return
        }
        let indent = block[0].distance(from: block[0].startIndex, to: column)
        for (line, expected) in zip(block.dropFirst(), script.dropFirst()) {
            #expect(line == String(repeating: " ", count: indent) + expected, "\(block)", sourceLocation: sourceLocation)
        }
    }

    @Test func theDryRunAndTheGraphListTheWholeScriptWithTheItem() throws {
        let moon = try Moon(graph: Self.fanOut)
        let dry = try moon.run(["run", "-n"])
        #expect(dry.status == 0, "\(dry.stderr)")
        expectAligned(block(dry.stdout, from: Self.script[0]), Self.script)
        #expect(dry.stdout.contains("echo \"step one for b hello\""), "\(dry.stdout)")
        #expect(!dry.stdout.contains("${{") && !dry.stdout.contains("…"), "\(dry.stdout)")

        let text = try moon.run(["graph"])
        expectAligned(block(text.stdout, from: Self.script[0]), Self.script)

        let dot = try moon.run(["graph", "--format", "dot"])
        #expect(dot.stdout.contains(#""t[a]" [tooltip="echo \"step one for a hello\"\nfalse\necho never"];"#), "\(dot.stdout)")

        let json = try moon.run(["graph", "--format", "json"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let nodes = try #require(root["nodes"] as? [[String: Any]])
        let a = try #require(nodes.first { $0["name"] as? String == "t[a]" })
        #expect(a["preview"] as? String == Self.script.joined(separator: "\n"))
        // The command as written stays beside it.
        #expect((a["command"] as? String)?.contains("${{ item }}") == true)
    }

    @Test func verboseTheFailureSummaryTheStartEventAndReplayShowTheWholeScript() throws {
        let moon = try Moon(graph: Self.fanOut)
        let verbose = try moon.run(["run", "-v", "-j", "1"])
        #expect(verbose.status == 1)
        let started = block(verbose.stdout, from: "▶ t[a]: " + Self.script[0])
        #expect(started == ["▶ t[a]: " + Self.script[0], "    false", "    echo never"], "\(verbose.stdout)")
        let failure = block(verbose.stdout, from: "$ " + Self.script[0])
        #expect(failure == ["  $ " + Self.script[0], "    false", "    echo never"], "\(verbose.stdout)")

        let json = try moon.run(["run", "--json", "-k"])
        let start = try #require(json.events("start", node: "t[b]").first)
        #expect(start.command == "echo \"step one for b hello\"\nfalse\necho never", "\(start)")
        try moon.write("run.jsonl", json.stdout)
        let replay = try moon.run(["replay", "run.jsonl"])
        #expect(block(replay.stdout, from: "$ " + Self.script[0]) == failure, "\(replay.stdout)")
    }

    /// Other members of the class: matrix values and parameters in a
    /// multi-line script, an instance of a fan-out expanded during the run
    /// (whose command is known only then), blank lines around a `|` block.
    @Test func matrixParametersAndRunTimeInstancesAreShownWhole() throws {
        let moon = try Moon(graph: """
            version: 1
            name: members
            nodes:
              build:
                matrix: {os: [linux], py: ["3.12"]}
                params: {mode: {default: fast}}
                run: |

                  echo "${{ matrix.os }} ${{ matrix.py }}"
                  echo mode=${{ params.mode }}

              list:
                run: echo 'items=["x y","z"]' >> "$MOON_OUTPUT"
              each:
                needs: [list]
                for-each: ${{ needs.list.outputs.items }}
                run: |
                  echo one ${{ item }}
                  echo two '${{ item }}'
            """)
        let dry = try moon.run(["run", "-n", "build", "mode=slow"])
        let lines = block(dry.stdout, from: "echo \"linux 3.12\"", count: 2)
        expectAligned(lines, ["echo \"linux 3.12\"", "echo mode=slow"])

        let json = try moon.run(["run", "--json"])
        #expect(json.status == 0, "\(json.stdout)\(json.stderr)")
        let each = try #require(json.events("start", node: "each[x y]").first)
        #expect(each.command == "echo one 'x y'\necho two 'x y'", "\(each)")
        let build = try #require(json.events("start").first { $0.node?.hasPrefix("build[") == true })
        #expect(build.command == "echo \"linux 3.12\"\necho mode=fast", "\(build)")
    }
}
