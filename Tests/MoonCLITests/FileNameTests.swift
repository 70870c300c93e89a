import Foundation
import Testing

/// Names from the file system that moon cannot show as themselves: bytes
/// that are not UTF-8 (no String names such a file), and characters a
/// terminal drops, acts on or reorders. Each is refused with its bytes shown
/// (`src/caf\xE9.txt`, `\u{9D}`), or tracked exactly; never dropped silently,
/// never a stale output, never a listed name that selects nothing.
@Suite struct FileNameTests {
    /// Non-UTF-8 names, as `printf` octal escapes, and as moon shows them:
    /// Latin-1 é, a lone continuation byte, an overlong `/`, a cut 3-byte
    /// sequence, and a directory whose name is not UTF-8.
    static let unnamable: [(written: String, shown: String)] = [
        (#"src/caf\351.txt"#, #"src/caf\xE9.txt"#),
        (#"src/\200x.txt"#, #"src/\x80x.txt"#),
        (#"src/\300\257.txt"#, #"src/\xC0\xAF.txt"#),
        (#"src/a\342\202.txt"#, #"src/a\xE2\x82.txt"#),
        (#"src/d\377/x.txt"#, #"src/d\xFF/x.txt"#),
    ]

    /// A project with `src/ok.txt` and the file `written` (a printf format) holding `text`.
    static func project(_ graph: String, _ written: String, _ text: String = "v1") throws -> Moon {
        let moon = try Moon(graph: graph)
        let made = try shell("""
            mkdir -p src && printf 'a\\n' > src/ok.txt && f=$(printf '\(written)') && mkdir -p "$(dirname "$f")" \
            && printf '\(text)\\n' > "$f"
            """, in: moon)
        #expect(made.status == 0, "\(made.stderr)")
        return moon
    }

    /// Writes `text` to the file `written` (a printf format).
    static func edit(_ moon: Moon, _ written: String, _ text: String) throws {
        let edited = try shell("printf '\(text)\\n' > \"$(printf '\(written)')\"", in: moon)
        #expect(edited.status == 0, "\(edited.stderr)")
    }

    /// FileManager cannot remove a name that is not UTF-8: `rm` does.
    static func clean(_ moon: Moon) {
        _ = try? shell("rm -rf src out", in: moon)
    }

    /// `sources: ["src/**"]` matching such a file: each run warns, naming
    /// the file as its bytes; the node is never up to date (moon cannot hash
    /// what it cannot name), so an edit to the file is never missed; status
    /// says why; and the output cache keeps no entry a later restore could
    /// bring back with the old content.
    @Test(arguments: unnamable)
    func aSourceWhoseNameIsNotUTF8IsNamedAndNeverStale(file: (written: String, shown: String)) throws {
        let moon = try Self.project("""
            version: 1
            cache: { dir: .c }
            nodes:
              cat: { sources: ["src/**"], generates: [out.txt], run: "find src -type f | sort | xargs cat > out.txt" }
            """, file.written)
        defer { Self.clean(moon) }
        let first = try moon.run(["run"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("its sources match '\(file.shown)', whose name is not UTF-8"), "\(first.stderr)")
        let status = try moon.run(["status", "cat"])
        #expect(status.stdout.contains("cannot be tracked: \(file.shown)"), "\(status.stdout)")
        try Self.edit(moon, file.written, "v2")
        let second = try moon.run(["run"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stdout.contains("up-to-date") && !second.stdout.contains("restored"), "\(second.stdout)")
        #expect(moon.read("out.txt")?.contains("v2") == true, "\(moon.read("out.txt") ?? "")")
        // The file is left out with a `!` pattern (matched on its bytes): then the node is tracked as usual.
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              cat: { sources: ["src/**", "!src/*[!k].txt", "!src/d?/**"], generates: [out.txt], run: "cat src/ok.txt > out.txt" }
            """)
        _ = try moon.run(["run"])
        let third = try moon.run(["run"])
        #expect(third.stdout.contains("skipped (up-to-date)") && !third.stderr.contains("not UTF-8"), "\(third.stdout)\(third.stderr)")
    }

    /// `for-each: { glob }` matching such a file: the graph is refused,
    /// naming it (was: the instance silently dropped); `exclude` leaves it out.
    @Test(arguments: unnamable)
    func aForEachGlobMatchingANameThatIsNotUTF8IsRefused(file: (written: String, shown: String)) throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              each: { for-each: { glob: "src/**" }, run: "echo ${{ item }}" }
            """, file.written)
        defer { Self.clean(moon) }
        for command in [["check"], ["list", "--names"], ["run"]] {
            let r = try moon.run(command)
            #expect(r.status == 2, "\(command): \(r.stdout)")
            #expect(r.stderr.contains("the glob 'src/**' matches '\(file.shown)', whose name is not UTF-8"), "\(r.stderr)")
        }
        try moon.write("moon.yaml", """
            version: 1
            nodes:
              each: { for-each: { glob: "src/**", exclude: ["src/*[!k].txt", "src/d?/**"] }, run: "echo ${{ item }}" }
            """)
        let listed = try moon.run(["list", "--names"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("each[src/ok.txt]"), "\(listed.stdout)")
    }

    /// A depfile listing such a file: a warning names it and the node runs
    /// again next time (was: a dependency on a missing file of another name).
    @Test(arguments: unnamable.prefix(4))
    func aDepfileEntryThatIsNotUTF8IsNamed(file: (written: String, shown: String)) throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              dep:
                sources: [src/ok.txt]
                depfile: d.d
                generates: [o]
                run: "printf 'o: src/ok.txt \(file.written.replacingOccurrences(of: "\\", with: "\\\\"))\\\\n' > d.d; echo > o"
            """, file.written)
        defer { Self.clean(moon) }
        let first = try moon.run(["run"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("its depfile d.d is malformed (line 1: the name '\(file.shown)' is not UTF-8); it runs again next time"),
                "\(first.stderr)")
        let second = try moon.run(["run"])
        #expect(!second.stdout.contains("up-to-date"), "\(second.stdout)")
    }

    /// A `generates` pattern whose only match is such a file: the output
    /// exists, so the node is up to date (was: "output missing" every run).
    @Test(arguments: unnamable.prefix(4))
    func aGeneratedFileWhoseNameIsNotUTF8Exists(file: (written: String, shown: String)) throws {
        let name = file.written.replacingOccurrences(of: "src/", with: "out/")
        let moon = try Self.project("""
            version: 1
            nodes:
              gen:
                sources: [src/ok.txt]
                generates: ["out/*.txt"]
                run: "mkdir -p out && printf x > \\"$(printf '\(name.replacingOccurrences(of: "\\", with: "\\\\"))')\\""
            """, "src/ok.txt", "a")
        defer { Self.clean(moon) }
        #expect(try moon.run(["run"]).status == 0)
        let second = try moon.run(["run"])
        #expect(second.stdout.contains("gen skipped (up-to-date)"), "\(second.stdout)\(second.stderr)")
    }

    /// Watch mode, with inotify and polling: an edit of such a file
    /// (directly in a watched directory, or inside a directory whose own
    /// name is not UTF-8) reruns the node, whose output then holds the edit.
    @Test(arguments: [(unnamable[0], []), (unnamable[4], []), (unnamable[0], ["--watch-poll", "200ms"]), (unnamable[4], ["--watch-poll", "200ms"])])
    func watchModeSeesAnEditOfAFileWhoseNameIsNotUTF8(file: (written: String, shown: String), options: [String]) throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              cat: { sources: ["src/**"], generates: [out.txt], run: "find src -type f | sort | xargs cat > out.txt" }
            """, file.written)
        defer { Self.clean(moon) }
        let watch = try WatchTests.start(moon, options)
        #expect(watch.waitForRuns(1), "\(watch.stderr)")
        #expect(watch.stderr.contains(file.shown), "\(watch.stderr)")
        try Self.edit(moon, file.written, "v2")
        #expect(watch.waitForRuns(2), "\(watch.stderr)")
        #expect(eventually(30) { moon.read("out.txt")?.contains("v2") == true }, "\(moon.read("out.txt") ?? "")")
        #expect(try watch.interrupt().status == 130)
    }

    // MARK: Names a terminal does not show as themselves

    /// File names a for-each glob matches, as printf formats, and how the
    /// error shows them: C1 (U+009D, U+0085 NEL), DEL, ESC, and the
    /// bidirectional override U+202E.
    static let hidden: [(written: String, shown: String)] = [
        (#"src/x\302\2350.c"#, #"src/x\u{9D}0.c"#),
        (#"src/a\302\205b.c"#, #"src/a\u{85}b.c"#),
        (#"src/a\177b.c"#, #"src/a\u{7F}b.c"#),
        (#"src/a\033[31mb.c"#, #"src/a\u{1B}[31mb.c"#),
        (#"src/a\342\200\256c.c"#, #"src/a\u{202E}c.c"#),
    ]

    /// Such a name is refused, shown escaped, by check, list --names and run
    /// (was for C1: listed without the C1 characters, a name that selects nothing).
    @Test(arguments: hidden)
    func aGlobMatchWithAHiddenCharacterIsRefused(file: (written: String, shown: String)) throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              obj: { for-each: { glob: "src/*.c" }, run: "echo ${{ item }}" }
            """, file.written)
        defer { Self.clean(moon) }
        for command in [["check"], ["list", "--names"], ["run", "obj"]] {
            let r = try moon.run(command)
            #expect(r.status == 2, "\(command): \(r.stdout)")
            #expect(r.stderr.contains("would be named 'obj[\(file.shown)]'"), "\(command): \(r.stderr)")
        }
    }

    /// The same characters in the graph file's own items and matrix values,
    /// and in a need's dynamic items, are refused the same way.
    @Test func listItemsMatrixValuesAndDynamicItemsWithHiddenCharactersAreRefused() throws {
        for (items, shown) in [(#""a\x9Db""#, #"a\u{9D}b"#), (#""a\Nb""#, #"a\u{85}b"#), (#""a\u202Eb""#, #"a\u{202E}b"#)] {
            let list = try Moon(graph: "version: 1\nnodes:\n  l: { for-each: [\(items)], run: 'true' }\n")
            let r = try list.run(["check"])
            #expect(r.status == 2 && r.stderr.contains("would be named 'l[\(shown)]'"), "\(r.stderr)")
            let matrix = try Moon(graph: "version: 1\nnodes:\n  m: { matrix: { os: [\(items)] }, run: 'true' }\n")
            let m = try matrix.run(["check"])
            #expect(m.status == 2 && m.stderr.contains("would be named 'm[\(shown)]'"), "\(m.stderr)")
        }
        let dynamic = try Moon(graph: #"""
            version: 1
            nodes:
              shards: { run: "printf 'files=[\"a\\342\\200\\256b\"]\\n' >> \"$MOON_OUTPUT\"" }
              each: { needs: shards, for-each: "${{ needs.shards.outputs.files }}", run: "echo ${{ item }}" }
            """#)
        let r = try dynamic.run(["run"])
        #expect(r.status == 1 && r.stdout.contains(#"has an item with a control character or a bidirectional override (a\u{202e}b)"#),
                "\(r.stdout)\(r.stderr)")
    }

    /// Zero-width characters are kept (they belong to scripts and emoji):
    /// the listed name is the name, and it selects the instance.
    @Test func aZeroWidthCharacterIsKeptAndTheListedNameSelects() throws {
        let moon = try Self.project("""
            version: 1
            nodes:
              obj: { for-each: { glob: "src/*.c" }, run: "echo ran ${{ item }}" }
            """, #"src/a\342\200\213b.c"#)
        defer { Self.clean(moon) }
        let listed = try moon.run(["list", "--names"])
        let name = try #require(listed.stdout.split(separator: "\n").first { $0.hasPrefix("obj[") }).trimmingCharacters(in: .whitespaces)
        #expect(name == "obj[src/a\u{200B}b.c]")
        let run = try moon.run(["run", name])
        #expect(run.status == 0 && run.stdout.contains("ran src/a\u{200B}b.c"), "\(run.stdout)\(run.stderr)")
    }
}
