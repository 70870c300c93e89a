import Foundation
import Testing

/// Each output has one writer: nodes or instances that declare the same
/// `generates` path are an error at load, at the pattern, with the fix; a
/// `for-each` node that never reads its item gets a warning.
@Suite struct OutputCollisionTests {
    /// The data pipeline's Snakemake-style graph: `{item}` is text to moon,
    /// so every instance writes one file.
    @Test func snakemakePlaceholdersAreAnErrorWithTheFix() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              text:
                for-each: {glob: "man/*.gz"}
                sources: ["{item}"]
                generates: ["out/text/{item.stem}.txt"]
                run: mkdir -p out/text && zcat {item} > out/text/{item.stem}.txt
            """)
        _ = try shell("mkdir -p man && for p in a b c; do echo $p | gzip > man/$p.1.gz; done", in: moon)
        for command in [["check"], ["run"]] {
            let result = try moon.run(command)
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("moon.yaml:6:17: error: node 'text[man/b.1.gz]' generates 'out/text/{item.stem}.txt', which node 'text[man/a.1.gz]' generates too"),
                    "\(result.stderr)")
            #expect(result.stderr.contains("help: moon reads an item as ${{ item }}, not {item}: write 'out/text/${{ item.stem }}.txt'"), "\(result.stderr)")
            #expect(result.stderr.contains("moon.yaml:4:22: warning: node 'text' has 'for-each' but never reads ${{ item }}"), "\(result.stderr)")
        }
        #expect(moon.read("out/text/{item.stem}.txt") == nil, "nothing ran")
    }

    /// Other members of the class: instances of a list or a matrix that
    /// leave their values out, two nodes spelling one path differently, a
    /// node writing what an included file's node writes.
    @Test(arguments: [
        ("""
          t:
            for-each: [a, b]
            generates: [out/all.txt]
            run: echo ${{ item }} > out/all.txt
        """, "moon.yaml:5:17: error: node 't[b]' generates 'out/all.txt', which node 't[a]' generates too", "put its item in the path"),
        ("""
          t:
            matrix: {os: [linux, mac], arch: [x86]}
            generates: ["out/${{ matrix.arch }}.bin"]
            run: echo ${{ matrix.os }}
        """, "error: node 't[mac,x86]' generates 'out/x86.bin', which node 't[linux,x86]' generates too", "${{ matrix.KEY }}"),
        ("""
          a:
            generates: [out/x.txt]
            run: touch out/x.txt
          b:
            generates: [./out//x.txt]
            run: touch out/x.txt
        """, "moon.yaml:7:17: error: node 'b' generates './out//x.txt', which node 'a' generates too", "give each node its own output"),
    ])
    func collidingGeneratesAreAnError(_ nodes: String, _ message: String, _ help: String) throws {
        let moon = try Moon(graph: "version: 1\nnodes:\n" + nodes + "\n")
        let result = try moon.run(["check"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.contains(help), "\(result.stderr)")
    }

    @Test func aNodeCannotWriteWhatAnIncludedNodeWrites() throws {
        let moon = try Moon(graph: """
            version: 1
            includes:
              docs: docs/moon.yaml
            nodes:
              site:
                generates: [docs/html]
                run: echo site
            """)
        _ = try shell("mkdir -p docs", in: moon)
        try moon.write("docs/moon.yaml", "version: 1\nnodes:\n  html:\n    generates: [html]\n    run: echo html\n")
        let result = try moon.run(["check"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("error: node 'site' generates 'docs/html', which node 'docs:html' generates too"), "\(result.stderr)")
    }

    /// Distinct outputs, per item or per node, pass without a word.
    @Test func distinctOutputsPass() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              t:
                for-each: [a, b]
                sources: [in.txt]
                generates: ["out/${{ item }}.txt"]
                run: mkdir -p out && echo ${{ item }} > out/${{ item }}.txt
              u:
                sources: [in.txt]
                generates: [out/u.txt, "!out/u.tmp"]
                run: echo u > out/u.txt
            """)
        try moon.write("in.txt", "x")
        let result = try moon.run(["check"])
        #expect(result.status == 0 && !result.stderr.contains("warning"), "\(result.stderr)")
    }
}
