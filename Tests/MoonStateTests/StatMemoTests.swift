import Foundation
import Testing
@testable import MoonState

/// The run's memo of stats (`StatMemo`), a hash table of its own: it
/// answers as `FileStat.of` would, once per path, for the graph's own
/// directory too, and it tells a walk which directories it holds files of.
@Suite struct StatMemoTests {
    /// Enough paths to grow the table several times: every answer is the
    /// stat taken the first time, a missing file is remembered missing, and
    /// the second question stats nothing (a file changed since is not seen).
    @Test func answersEachPathOnceThroughGrowth() throws {
        let tree = try TempTree()
        let names = (0..<700).map { "d\($0 % 7)/file-\($0).txt" }
        for name in names { try tree.write(name, name) }
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        for name in names {
            #expect(memo.stat(name, scanner)?.0 == FileStat.of(tree.path(name))?.0)
        }
        #expect(memo.stat("d0/missing.txt", scanner) == nil)
        #expect(memo.known("d0/missing.txt").map { $0 == nil } == true, "a missing file is known to be missing")
        #expect(memo.known("d0/never-asked.txt") == nil)
        let before = memo.stat(names[0], scanner)?.0
        try tree.write(names[0], "a longer text than before")
        #expect(memo.stat(names[0], scanner)?.0 == before, "asked again, the memo answers without a stat")
        for name in names.dropFirst() { #expect(memo.known(name)??.0 == FileStat.of(tree.path(name))?.0) }
    }

    /// What a started node declares is forgotten: a literal path, and for
    /// a glob every path below its base, those known and those asked later,
    /// each answered by a new stat and never kept; other paths stand.
    @Test func forgottenPathsAreStatedAfreshEachTime() throws {
        let tree = try TempTree()
        for name in ["out/a.o", "out/sub/b.o", "gen.h", "src/c.c"] { try tree.write(name, "1") }
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        for name in ["out/a.o", "gen.h", "src/c.c"] { _ = memo.stat(name, scanner) }
        memo.forget("gen.h")
        memo.forget("out/**/*.o")
        let before = memo.taken
        for name in ["out/a.o", "out/sub/b.o", "gen.h"] { try tree.write(name, "longer") }
        for name in ["out/a.o", "out/sub/b.o", "gen.h"] {
            #expect(memo.stat(name, scanner)?.0 == FileStat.of(tree.path(name))?.0)
            #expect(memo.known(name) == nil)
        }
        try tree.write("out/sub/b.o", "longer still")
        #expect(memo.stat("out/sub/b.o", scanner)?.0 == FileStat.of(tree.path("out/sub/b.o"))?.0, "a new path below is not kept either")
        #expect(memo.taken == before + 4)
        try tree.write("src/c.c", "changed")
        #expect(memo.stat("src/c.c", scanner)?.0.size == 1, "a path not forgotten stands")
    }

    /// A literal that names a directory means the files below it; and past
    /// a few forgotten directories the memo stops answering after a start.
    @Test func aForgottenDirectoryForgetsItsFilesAndManyStopTheMemo() throws {
        let tree = try TempTree()
        try tree.write("dist/app.js", "1")
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        _ = memo.stat("dist", scanner)
        _ = memo.stat("dist/app.js", scanner)
        memo.forget("dist")
        #expect(memo.known("dist/app.js") == nil)
        #expect(memo.servesAfterStart)
        for n in 0...StatMemo.volatileDirectoryLimit { memo.forget("out\(n)/**") }
        #expect(!memo.servesAfterStart)
    }

    /// "" is the graph's directory: the memo stats the directory itself
    /// (not an empty path), so a glob over the whole project walks it.
    @Test func theEmptyPathIsTheGraphsDirectory() throws {
        let tree = try TempTree()
        try tree.write("top.txt", "t")
        try tree.write(".env", "x")
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        #expect(memo.stat("", scanner)?.1 == .directory)
        #expect(memo.stat("/", scanner)?.1 == .directory, "an absolute path is stat'ed as spelt")
        // A graph in the current directory: relative paths are spelt as is, but "" is ".".
        #expect(StatMemo().stat("", SourceScanner(root: "."))?.1 == .directory)
        let withMemo = scanner.scan(matching: ["."], memo: memo).files.map(\.path)
        #expect(withMemo == [".env", "top.txt"] && withMemo == scanner.files(matching: ["."]).map(\.path))
    }

    /// A walk asks the memo about a directory's files only when the memo
    /// holds a path in it; the root's files are in "".
    @Test func knowsTheDirectoriesOfItsPaths() throws {
        let tree = try TempTree()
        for name in ["a/b/c.txt", "a/d.txt", "top.txt"] { try tree.write(name, name) }
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        #expect(!memo.knowsDirectory(""))
        for name in ["a/b/c.txt", "a/d.txt", "top.txt", "a/d.txt"] { _ = memo.stat(name, scanner) }
        #expect(memo.knowsDirectory("a/b/") && memo.knowsDirectory("a/") && memo.knowsDirectory(""))
        #expect(!memo.knowsDirectory("b/") && !memo.knowsDirectory("a/b/c/"))
        // Directories past the first few grow their own set.
        for k in 0..<40 { _ = memo.stat("dir\(k)/x", scanner) }
        #expect((0..<40).allSatisfy { memo.knowsDirectory("dir\($0)/") } && memo.knowsDirectory("a/b/"))
        // Paths with the same hash-sized prefix differ in their tails.
        #expect(StatMemo.hash(UnsafeRawBufferPointer(start: nil, count: 0)) != 0)
        let a = Array("include/h0001.h".utf8), b = Array("include/h0002.h".utf8)
        #expect(a.withUnsafeBytes { StatMemo.hash($0) } != b.withUnsafeBytes { StatMemo.hash($0) })
    }

    /// The depfile's files in one go: unchanged only when each is a regular
    /// file with the stat its entry holds and none is racy; a file replaced
    /// by another of the same size and mtime (another inode), a missing
    /// file, a directory or a racy entry each say changed.
    @Test func allUnchangedHoldsOnlyForSettledFilesWithTheirStats() throws {
        let tree = try TempTree()
        for name in ["a.h", "b.h"] { try tree.write(name, name) }
        try tree.write("dir/x", "x")
        let scanner = SourceScanner(root: tree.root)
        func entry(_ name: String, racy: Bool = false, _ change: (inout FileStat) -> Void = { _ in }) -> Manifest.Entry {
            var stat = FileStat.of(tree.path(name))?.0 ?? FileStat(size: 0, mtimeNanoseconds: 0, inode: 0)
            change(&stat)
            return Manifest.Entry(path: name, stat: stat, racy: racy, hash: .zero)
        }
        func unchanged(_ entries: [Manifest.Entry]) -> Bool {
            entries.withUnsafeBufferPointer { StatMemo().allUnchanged($0, scanner) }
        }
        #expect(unchanged([entry("a.h"), entry("b.h"), entry("a.h")]))
        #expect(unchanged([]))
        #expect(!unchanged([entry("a.h"), entry("b.h") { $0.inode &+= 1 }]), "another inode")
        #expect(!unchanged([entry("a.h") { $0.mtimeNanoseconds += 1_000_000_000 }]), "an mtime gone backwards")
        #expect(!unchanged([entry("a.h", racy: true)]))
        #expect(!unchanged([entry("a.h"), entry("gone.h")]))
        #expect(!unchanged([entry("dir")]), "a directory is not a listed file")
    }

    /// Waits (bounded) until the thread `expect` started returned; whether it took every path.
    private func awaitPrefetch(_ memo: StatMemo) -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while !memo.prefetching.ended, Date() < deadline { sched_yield() }
        return memo.prefetching.ended && memo.prefetching.left == 0
    }

    /// A tree of `names` (each holding "x") and a memo that expects them.
    private func expecting(_ names: [String]) throws -> (TempTree, SourceScanner, StatMemo) {
        let tree = try TempTree()
        for name in names { try tree.write(name, "x") }
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        memo.expect(names, scanner)
        return (tree, scanner, memo)
    }

    /// Expected paths are answered as `FileStat.of` would, whether the
    /// checks or the second thread stat'ed them, a missing file as missing;
    /// once the thread took them all, the checks stat none themselves, and
    /// a file changed after its stat is seen in the next run, as with the
    /// checks' own stats (each is stat'ed once per run).
    @Test func expectedPathsAreAnsweredOnceWhoeverStatedThem() throws {
        let tree = try TempTree()
        let names = (0..<400).map { "d\($0 % 5)/f\($0).h" }
        for name in names { try tree.write(name, name) }
        let scanner = SourceScanner(root: tree.root)
        let memo = StatMemo()
        memo.expect(names + ["d0/gone.h"] + names.prefix(10), scanner)
        guard memo.prefetching.started else { return }  // one CPU: no thread, the checks stat as before
        #expect(awaitPrefetch(memo))
        try tree.write(names[399], "changed after the thread's stat")
        for name in names.dropLast() { #expect(memo.stat(name, scanner)?.0 == FileStat.of(tree.path(name))?.0) }
        #expect(memo.stat(names[399], scanner)?.0.size == Int64(names[399].utf8.count))
        #expect(memo.stat("d0/gone.h", scanner) == nil)
        #expect(memo.taken == 0, "every stat was the thread's")
        #expect(memo.knowsDirectory("d3/"))
    }

    /// The checks ask from the first path on and stat what the thread has
    /// not reached; both answer the same, each path once, and an expected
    /// path a started node declares is stat'ed afresh, as any forgotten one.
    @Test func theChecksAndTheThreadShareTheExpectedPaths() throws {
        let names = (0..<3000).map { "src/f\($0).c" }
        let (tree, scanner, memo) = try expecting(names)
        memo.forget("src/f2999.c")
        try tree.write("src/f2999.c", "written by a started node")
        for name in names { #expect(memo.stat(name, scanner)?.0 == FileStat.of(tree.path(name))?.0) }
        #expect(memo.taken <= names.count)
        #expect(memo.known("src/f2999.c") == nil, "forgotten")
        #expect(memo.known("src/f0.c")??.0 == FileStat.of(tree.path("src/f0.c"))?.0)
    }

    /// A thread that cannot be started (one CPU to run on) is no thread,
    /// and its buffer is freed once, by the prefetch itself.
    @Test func aThreadThatCannotStartIsNone() throws {
        let scanner = SourceScanner(root: try TempTree().root)
        for _ in 0..<3 {
            #expect(StatPrefetch(paths: (0..<500).map { "f\($0)" }, scanner: scanner, start: { _ in false }) == nil)
        }
    }

    /// A walk asks `known` in its own order: what the thread took is
    /// known, what nobody stat'ed yet is not (the walk stats it).
    @Test func aWalkKnowsOnlyWhatWasStated() throws {
        let names = (0..<300).map { "o/f\($0).o" }
        let (tree, _, memo) = try expecting(names)
        if memo.prefetching.started {
            #expect(awaitPrefetch(memo))
            #expect(memo.known(names[150])??.0 == FileStat.of(tree.path(names[150]))?.0)
        } else {
            #expect(memo.known(names[150]) == nil, "expected, not stat'ed")
        }
        #expect(memo.known("o/other.o") == nil)
    }
}
