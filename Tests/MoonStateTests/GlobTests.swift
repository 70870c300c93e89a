import Foundation
import Testing
@testable import MoonState

@Suite struct GlobTests {
    func matches(_ pattern: String, _ path: String) -> Bool {
        SourceScanner.glob(Glob(pattern), matches: path)
    }

    @Test func wildcardsMatchWithinOneSegment() {
        #expect(matches("*.swift", "a.swift"))
        #expect(!matches("*.swift", "src/a.swift"))
        #expect(matches("src/?.c", "src/a.c"))
        #expect(!matches("src/?.c", "src/ab.c"))
        #expect(matches("src/[ab].c", "src/b.c"))
        #expect(!matches("src/[!ab].c", "src/b.c"))
        #expect(matches("src/[a-c]x", "src/cx"))
        #expect(matches("a\\*b", "a*b"))
        #expect(!matches("a\\*b", "axb"))
    }

    @Test func globstarMatchesAnyDepthIncludingNone() {
        #expect(matches("src/**/*.swift", "src/a.swift"))
        #expect(matches("src/**/*.swift", "src/x/y/z/a.swift"))
        #expect(!matches("src/**/*.swift", "other/a.swift"))
        #expect(matches("**/*.txt", "a.txt"))
        #expect(matches("**/*.txt", "d/e/a.txt"))
        #expect(matches("src/**", "src/x/y"))
        #expect(matches("a/**/b/**/c", "a/b/c"))
        #expect(matches("a/**/b/**/c", "a/x/b/y/z/c"))
    }

    @Test func wildcardsSkipHiddenNamesUnlessThePatternNamesThem() {
        #expect(!matches("*", ".env"))
        #expect(!matches("**/*.txt", ".git/a.txt"))
        #expect(matches(".*", ".env"))
        #expect(matches(".github/**/*.yml", ".github/workflows/ci.yml"))
    }

    /// The one rule (docs/incremental.md, "Patterns"): a pattern that
    /// matches a directory means every file below it, hidden ones included,
    /// but no tool's directory; `dir`, `dir/`, `./dir` and `dir/**` agree.
    @Test func aDirectoryMeansEveryFileBelowItButNoToolsDirectory() {
        for pattern in ["data", "data/", "./data", "data/**", "data/./"] {
            #expect(matches(pattern, "data/a"), "\(pattern)")
            #expect(matches(pattern, "data/.result"), "\(pattern)")
            #expect(matches(pattern, "data/.cov/.coverage.1"), "\(pattern)")
            #expect(matches(pattern, "data/sub/.x"), "\(pattern)")
            #expect(!matches(pattern, "data/.git/HEAD"), "\(pattern)")
            #expect(!matches(pattern, "data/sub/.moon/state.db"), "\(pattern)")
            #expect(!matches(pattern, "data/.moon-restore-1-2/a"), "\(pattern)")
            #expect(!matches(pattern, "database"), "\(pattern)")
        }
        // A wildcard skips a leading `.`; a directory it matches is taken whole.
        #expect(!matches("data/*", "data/.top"))
        #expect(matches("data/*", "data/sub/.inner"))
        #expect(!matches("data/*", "data/.git/x"))
        // The whole project: not `.git`, `.hg`, `.svn`, `.bzr`, `.jj`, `.moon`.
        for pattern in [".", "**", "./"] {
            #expect(matches(pattern, ".env"), "\(pattern)")
            for tool in [".git", ".hg", ".svn", ".bzr", ".jj", ".moon"] {
                #expect(!matches(pattern, tool + "/x"), "\(pattern) \(tool)")
            }
        }
        // Spelled out, a tool's directory is reached; by a wildcard, never.
        #expect(matches(".git/HEAD", ".git/HEAD"))
        #expect(matches(".git", ".git/refs/heads/main"))
        #expect(!matches(".*", ".git"))
        #expect(!matches(".*/HEAD", ".git/HEAD"))
        #expect(!matches("**/HEAD", "a/.git/HEAD"))
        #expect(matches("*/.git/HEAD", "a/.git/HEAD"))
    }

    @Test func aLiteralPatternHasNoWildcards() {
        let glob = Glob("./src//main.c")
        #expect(glob.isLiteral)
        #expect(glob.base == "src/main.c")
        #expect(Glob("src/*.c").base == "src")
        #expect(Glob("/abs/**").base == "/abs")
        #expect(Glob("/").base == "/")
        #expect(Glob("").base == "")
        #expect(Glob("./././a/./b/").base == "a/b")
        #expect(Glob("é/ü\u{301}/*.h").base == "é/ü\u{301}")
        #expect(Glob(".../x").base == ".../x")
        // Plain paths are their own base; anything else is normalised.
        for (pattern, base) in [("src/main.c", "src/main.c"), ("/usr/include/stdio.h", "/usr/include/stdio.h"),
                                ("a/../b", "a/../b"), (".hidden/.x", ".hidden/.x"), ("x", "x"),
                                ("a/", "a"), ("a/.", "a"), ("./a", "a"), ("a//b", "a/b"), ("//a", "/a"), ("/a/", "/a"),
                                (".", ""), ("/.", "/"), ("a/./b", "a/b")] {
            let glob = Glob(pattern)
            #expect(glob.base == base, "\(pattern)")
            #expect(glob.isLiteral, "\(pattern)")
            #expect(Glob.isPlainPath(pattern) == (pattern == base), "\(pattern)")
        }
        #expect(Glob("a/**/**/b").segments == [.globstar, .literal(Array("b".utf8))])
        #expect(Glob("a/*/\\*/b").segments == [.wildcard(Array("*".utf8)), .literal(Array("*".utf8)), .literal(Array("b".utf8))])
    }

    /// `\x` is the character x everywhere: a pattern whose wildcards are all
    /// escaped names one file (an item put into `sources`, `pages/[id].tsx`).
    @Test func escapedWildcardsNameOneFile() {
        for (pattern, base) in [("pages/\\[id\\].tsx", "pages/[id].tsx"), ("a/\\*/b", "a/*/b"), ("q\\?.c", "q?.c"),
                                ("a\\\\b", "a\\b"), ("a\\b", "ab"), ("\\!x", "!x")] {
            let glob = Glob(pattern)
            #expect(glob.base == base, "\(pattern)")
            #expect(glob.isLiteral, "\(pattern)")
            #expect(SourceScanner.glob(glob, matches: base), "\(pattern)")
        }
        #expect(!SourceScanner.glob(Glob("pages/\\[id\\].tsx"), matches: "pages/i.tsx"))
        #expect(Glob("src/\\[x\\]/*.c").base == "src/[x]")
        #expect(SourceScanner.glob(Glob("src/\\[x\\]/*.c"), matches: "src/[x]/a.c"))
    }
}

@Suite struct SourceScannerTests {
    @Test func expandsPatternsSortedWithoutDuplicatesOrExclusions() throws {
        let tree = try TempTree()
        for name in ["src/a.swift", "src/b.swift", "src/sub/c.swift", "src/sub/d.txt", "src/.hidden/e.swift", "README.md"] {
            try tree.write(name, name)
        }
        let scanner = SourceScanner(root: tree.root)
        #expect(scanner.files(matching: ["src/**/*.swift"]).map(\.path) == ["src/a.swift", "src/b.swift", "src/sub/c.swift"])
        // Pattern by pattern, without duplicates.
        #expect(scanner.files(matching: ["src/*.swift", "src/a.swift", "README.md"]).map(\.path) == ["src/a.swift", "src/b.swift", "README.md"])
        // A directory named means every file below it, hidden ones too.
        #expect(scanner.files(matching: ["src", "!src/sub/**"]).map(\.path) == ["src/.hidden/e.swift", "src/a.swift", "src/b.swift"])
        #expect(scanner.files(matching: ["missing/**", "nothing.txt"]).isEmpty)
        #expect(scanner.exists("src/sub"))
        #expect(scanner.exists("src/**/*.txt"))
        #expect(!scanner.exists("src/**/*.o"))
    }

    @Test func doesNotFollowLinkedDirectoriesIntoCycles() throws {
        let tree = try TempTree()
        try tree.write("d/a.txt", "a")
        try FileManager.default.createSymbolicLink(atPath: tree.path("d/loop"), withDestinationPath: tree.root + "/d")
        #expect(SourceScanner(root: tree.root).files(matching: ["**/*.txt"]).map(\.path) == ["d/a.txt"])
    }

    /// The walk agrees with `SourceScanner.glob` path by path, for every
    /// shape of pattern: what a scan lists is what matching says.
    @Test func theWalkAndMatchingAgree() throws {
        let tree = try TempTree()
        let names = ["data/a", "data/.result", "data/.cov/part", "data/sub/.x", "data/sub/y", "data/.git/HEAD",
                     "data/.moon/state.db", ".env", ".git/config", "top.txt", "src/.hidden/e.c", "src/a.c"]
        for name in names { try tree.write(name, name) }
        let scanner = SourceScanner(root: tree.root)
        for pattern in ["data", "data/**", "data/*", ".", "**", "**/*", "*", "src/**/*.c", ".*", "data/.*", "**/.x"] {
            let listed = Set(scanner.files(matching: [pattern]).map(\.path))
            let matched = Set(names.filter { SourceScanner.glob(Glob(pattern), matches: $0) })
            #expect(listed == matched, "\(pattern)")
        }
        // A node's own generates are left out of its sources, unless spelled out.
        #expect(scanner.scan(matching: ["data"], leavingOut: ["data/sub"]).files.map(\.path) == ["data/.cov/part", "data/.result", "data/a"])
        #expect(scanner.scan(matching: ["top.txt"], leavingOut: ["top.txt"]).files.map(\.path) == ["top.txt"])
        #expect(scanner.scan(matching: ["*.txt"], leavingOut: ["top.txt"]).files.isEmpty)
    }

    /// One plain path (a compile step's `sources: [src/a.c]`) is scanned
    /// without matching, and means what it means among other patterns.
    @Test func onePlainPathScansAsInAList() throws {
        let tree = try TempTree()
        for name in ["src/a.c", "src/b.c", "!odd"] { try tree.write(name, name) }
        let scanner = SourceScanner(root: tree.root)
        for pattern in ["src/a.c", "./src/a.c", "src", "missing.c", "!odd", "!src/a.c", ""] {
            let alone = scanner.scan(matching: [pattern])
            let listed = scanner.scan(matching: [pattern, pattern])
            #expect(alone.files.map(\.path) == listed.files.map(\.path), "\(pattern)")
            #expect(alone.files.map(\.stat) == listed.files.map(\.stat), "\(pattern)")
        }
        #expect(scanner.scan(matching: ["src/a.c"]).files.map(\.path) == ["src/a.c"])
        #expect(scanner.scan(matching: ["!odd"]).files.isEmpty)
    }
}
