import Testing
@testable import MoonCache

/// What an entry may write for a node, by its `generates` and depfile.
@Suite struct DeclaredOutputsTests {
    static func entry(_ files: [(String, CacheEntry.File.Kind)], roots: [String]? = nil) -> CacheEntry {
        let hash = String(repeating: "a", count: 64)
        let records = files.map { path, kind in
            CacheEntry.File(path: path, kind: kind, mode: 0o644, hash: kind == .file ? hash : nil, size: kind == .file ? 1 : nil,
                            target: kind == .symlink ? "x" : nil)
        }
        return CacheEntry(node: "n", roots: roots ?? files.map(\.0), files: records, outputs: [], values: [])
    }

    @Test func plainPathsAreNormalizedAndThoseOutsideTheTreeSetApart() {
        #expect(DeclaredOutputs.normalized("sub/../b.txt") == "b.txt")
        #expect(DeclaredOutputs.normalized("./out//a/") == "out/a")
        #expect(DeclaredOutputs.normalized("../x") == nil)
        #expect(DeclaredOutputs.normalized("a/../..") == nil)
        #expect(DeclaredOutputs.normalized("/abs") == nil)
        #expect(DeclaredOutputs.normalized(".") == nil)
        let outputs = DeclaredOutputs(generates: ["sub/../b.txt", "../up.txt", "/abs.txt", "../lib/*.o", "sub/../*.o", "out/*.o"],
                                      extra: ["build/a.d"])
        #expect(outputs.paths == ["b.txt", "build/a.d"])
        #expect(outputs.outside == ["../up.txt", "/abs.txt", "../lib/*.o", "sub/../*.o"])
        #expect(outputs.patterns == ["out/*.o"])
    }

    @Test func aPlainPathAllowsItsWholeTreeAndNothingBesideIt() {
        let outputs = DeclaredOutputs(generates: ["dist"])
        let tree = Self.entry([("dist", .directory), ("dist/bin", .directory), ("dist/bin/tool", .file), ("dist/l", .symlink)],
                              roots: ["dist"])
        #expect(outputs.refusal(of: tree) == nil)
        for path in ["dist2", ".git/hooks/pre-commit", "in.txt", ".moon/x"] {
            let entry = Self.entry([("dist", .directory), (path, .file)])
            #expect(outputs.refusal(of: entry)?.contains("'\(path)'") == true, "\(path)")
        }
    }

    @Test func aWildcardAllowsTheFilesItMatchesOnly() {
        let outputs = DeclaredOutputs(generates: ["out/*.o", "!out/skip.o"])
        #expect(outputs.refusal(of: Self.entry([("out/a.o", .file), ("out/b.o", .symlink)])) == nil)
        for (path, kind) in [("out/.hidden.o", CacheEntry.File.Kind.file), ("out/sub/a.o", .file), ("out/skip.o", .file),
                             ("out/d.o", .directory), ("out/a.c", .file)] {
            let entry = Self.entry([("out/a.o", .file), (path, kind)])
            #expect(outputs.refusal(of: entry) != nil, "\(path)")
        }
        // A directory the wildcard matches means the files below it (the one
        // pattern rule, as sources read it), but never a tool's `.git`.
        let below = Self.entry([("out/a.o", .file), ("out/x.o/inner", .file), ("out/x.o/.hidden", .file)], roots: ["out/a.o", "out/x.o"])
        #expect(outputs.refusal(of: below) == nil)
        let git = Self.entry([("out/a.o", .file), ("out/x.o/.git/config", .file)], roots: ["out/a.o", "out/x.o"])
        #expect(outputs.refusal(of: git)?.contains("'out/x.o/.git/config'") == true)
        // A directory taken whole never carries a tool's directory.
        let dist = DeclaredOutputs(generates: ["dist"])
        #expect(dist.refusal(of: Self.entry([("dist", .directory), ("dist/.cov", .file)], roots: ["dist"])) == nil)
        #expect(dist.refusal(of: Self.entry([("dist", .directory), ("dist/.git/hooks/pre-commit", .file)], roots: ["dist"]))?.contains("'dist/.git/hooks/pre-commit'") == true)
        // A path below one the entry writes as a file is no tree.
        let belowFile = Self.entry([("out/a.o", .file), ("out/a.o/inner", .file)], roots: ["out/a.o"])
        #expect(outputs.refusal(of: belowFile)?.contains("'out/a.o/inner' below 'out/a.o'") == true)
    }

    @Test func anEntryMissingADeclaredOutputIsRefused() {
        let outputs = DeclaredOutputs(generates: ["a.txt", "b.txt", "out/*.o"], extra: ["a.d"])
        #expect(outputs.refusal(of: Self.entry([("a.txt", .file), ("b.txt", .file), ("out/x.o", .file), ("a.d", .file)])) == nil)
        #expect(outputs.refusal(of: Self.entry([("a.txt", .file), ("out/x.o", .file), ("a.d", .file)]))?.contains("'b.txt'") == true)
        #expect(outputs.refusal(of: Self.entry([("a.txt", .file), ("b.txt", .file), ("a.d", .file)]))?.contains("out/*.o") == true)
        #expect(outputs.refusal(of: Self.entry([("a.txt", .file), ("b.txt", .file), ("out/x.o", .file)]))?.contains("'a.d'") == true)
    }

    @Test func aRootWithoutAFileIsAnInvalidEntry() throws {
        let entry = Self.entry([("a.txt", .file)], roots: ["a.txt", "b.txt"])
        #expect(throws: CacheError.self) { try CacheEntry.decode(try entry.encoded()) }
    }
}
