import Foundation
import MoonEvents
import Testing

/// An item or a matrix value put into `sources:`/`generates:` is a file
/// name, never a pattern: names with `[ ] * ? \ !` (Next.js routes
/// `pages/[id].tsx`) are fingerprinted, checked and cached as themselves.
@Suite struct LiteralItemPathTests {
    func started(_ result: Moon.Result) -> Set<String> {
        Set(result.events("start").compactMap { $0.node })
    }

    /// The report's case H14: editing `pages/[id].tsx` left its instance
    /// up to date (its pattern matched `pages/i.tsx`), and its cache entry
    /// held `out/i.js`, so a restore lost `out/[id].js`.
    @Test func aNextJSRouteIsItsOwnFile() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              page:
                for-each: { glob: "pages/*.tsx" }
                sources: ["${{ item }}"]
                generates: ["out/${{ item.stem }}.js"]
                run: mkdir -p out && cp "${{ item }}" "out/${{ item.stem }}.js"
            """)
        try moon.makeDirectory("pages")
        try moon.write("pages/[id].tsx", "v1 [id]\n")
        try moon.write("pages/i.tsx", "v1 i\n")
        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(started(first) == ["page[pages/[id].tsx]", "page[pages/i.tsx]"])
        // Settled: nothing runs again (no "output missing").
        let second = try moon.run(["run", "--json"])
        #expect(started(second).isEmpty, "\(second.stdout)")
        // Editing the route reruns its instance, and only it.
        try moon.write("pages/[id].tsx", "v2 [id]\n")
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("page[pages/[id].tsx]") && status.stdout.contains("pages/[id].tsx changed"), "\(status.stdout)")
        let third = try moon.run(["run", "--json"])
        #expect(started(third) == ["page[pages/[id].tsx]"], "\(third.stdout)")
        #expect(moon.read("out/[id].js") == "v2 [id]\n")
        // Editing the file the pattern used to match touches only its own instance.
        try moon.write("pages/i.tsx", "v2 i\n")
        let fourth = try moon.run(["run", "--json"])
        #expect(started(fourth) == ["page[pages/i.tsx]"], "\(fourth.stdout)")
        // The cache holds out/[id].js for its instance: a restore brings it back.
        try FileManager.default.removeItem(atPath: moon.path("out"))
        let restore = try moon.run(["run"])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.contains("2 restored"), "\(restore.stdout)")
        #expect(moon.read("out/[id].js") == "v2 [id]\n")
        #expect(moon.read("out/i.js") == "v2 i\n")
    }

    /// Other members of the class: `x[1].c`, `a*b.c`, `q?.c`, `b\s.c` and
    /// `!n.c` as list items and as matrix values, in `sources`,
    /// `generates` and `depfile` (a path, read as written), each beside the
    /// files its text would match as a pattern.
    @Test func itemsAndMatrixValuesWithGlobCharactersAreLiteral() throws {
        let names = ["x[1].c", "a*b.c", "q?.c", "b\\s.c", "!n.c"]
        let decoys = ["x1.c", "aZb.c", "qZ.c", "bs.c", "n.c"]
        let list = names.map { "'\($0)'" }.joined(separator: ", ")
        let moon = try Moon(graph: """
            version: 1
            nodes:
              obj:
                for-each: [\(list)]
                sources: ["src/${{ item }}"]
                generates: ["out/${{ item }}.o"]
                depfile: "out/${{ item }}.d"
                run: |
                  mkdir -p out && cp "src/${{ item }}" "out/${{ item }}.o"
                  printf 'out/%s.o: src/%s\\n' "${{ item }}" "${{ item }}" > "out/${{ item }}.d"
              mat:
                matrix: { f: [\(list)] }
                sources: ["src/${{ matrix.f }}"]
                generates: ["mat/${{ matrix.f }}.o"]
                run: mkdir -p mat && cp "src/${{ matrix.f }}" "mat/${{ matrix.f }}.o"
            """)
        try moon.makeDirectory("src")
        for name in names + decoys { try moon.write("src/\(name)", "v1 \(name)\n") }
        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)\n\(first.stdout)")
        #expect(started(first).count == 2 * names.count, "\(first.stdout)")
        let second = try moon.run(["run", "--json"])
        #expect(second.status == 0)
        #expect(started(second).isEmpty, "not settled: \(started(second))")
        // A decoy's edit reruns nothing; each name's edit reruns its two instances.
        for decoy in decoys { try moon.write("src/\(decoy)", "v2 \(decoy)\n") }
        let third = try moon.run(["run", "--json"])
        #expect(started(third).isEmpty, "a decoy reran \(started(third))")
        for name in names {
            try moon.write("src/\(name)", "v2 \(name)\n")
            let run = try moon.run(["run", "--json"])
            #expect(started(run) == ["obj[\(name)]", "mat[\(name)]"], "\(name): \(started(run))")
            #expect(moon.read("out/\(name).o") == "v2 \(name)\n", "\(name)")
        }
        // Each entry holds the instance's own output: a restore brings every one back.
        try FileManager.default.removeItem(atPath: moon.path("out"))
        try FileManager.default.removeItem(atPath: moon.path("mat"))
        let restore = try moon.run(["run"])
        #expect(restore.status == 0, "\(restore.stderr)")
        #expect(restore.stdout.contains("\(2 * names.count) restored"), "\(restore.stdout)")
        for name in names {
            #expect(moon.read("out/\(name).o") == "v2 \(name)\n", "\(name)")
            #expect(moon.read("mat/\(name).o") == "v2 \(name)\n", "\(name)")
        }
        #expect(moon.read("out/x1.c.o") == nil)
    }
}
