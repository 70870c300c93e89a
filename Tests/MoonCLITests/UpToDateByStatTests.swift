import Foundation
import Testing

/// The up-to-date check by stats alone, through the real binary: a run with
/// nothing changed reads no file and takes no digest, each edge of that
/// shortcut falls back to the full check, and what must rerun still does.
@Suite struct UpToDateByStatTests {
    /// Two objects from sources and a header their depfiles list, and an
    /// archive whose glob walks over the objects the other nodes generate.
    static let graph = """
        version: 1
        nodes:
          a.o:
            sources: [src/a.c]
            generates: [build/a.o]
            depfile: build/a.d
            run: "cat src/a.c include/h.h > build/a.o && echo 'build/a.o: src/a.c include/h.h' > build/a.d"
          b.o:
            sources: [src/b.c]
            generates: [build/b.o]
            depfile: build/b.d
            run: "cat src/b.c > build/b.o && echo 'build/b.o: src/b.c' > build/b.d"
          lib:
            needs: [a.o, b.o]
            sources: [build/*.o]
            generates: [build/lib.a]
            run: cat build/*.o > build/lib.a
        """

    /// Each node's outcome, and the check's own count of files read.
    func run(_ moon: Moon) throws -> (outcomes: [String], hashed: Int, fromStatCache: Int) {
        let result = try moon.run(["run", "--json"], environment: ["MOON_STATE_STATS": "1"])
        #expect(result.status == 0, "\(result.stderr)")
        // "…; N files hashed, M from the stat cache"
        let line = result.stderr.split(separator: "\n").first { $0.contains("files hashed") }.map(String.init) ?? ""
        let words = line.split(separator: ";").last?.split(separator: " ") ?? []
        let hashed = words.count > 4 ? Int(words[0]) ?? -1 : -1
        let fromStatCache = words.count > 4 ? Int(words[3]) ?? -1 : -1
        return (["a.o", "b.o", "lib"].map(result.outcome), hashed, fromStatCache)
    }

    func settle(_ moon: Moon, _ names: [String], secondsAgo: TimeInterval = 30) throws {
        for name in names {
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-secondsAgo)], ofItemAtPath: moon.path(name))
        }
    }

    func project() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        for dir in ["src", "include", "build"] { try moon.makeDirectory(dir) }
        try moon.write("src/a.c", "a\n")
        try moon.write("src/b.c", "b\n")
        try moon.write("include/h.h", "h\n")
        try settle(moon, ["src/a.c", "src/b.c", "include/h.h"])
        #expect(try run(moon).outcomes == ["ran", "ran", "ran"])
        // The outputs were written just now (racy): settled, they are trusted by their stats.
        try settle(moon, ["build/a.o", "build/b.o", "build/lib.a", "build/a.d", "build/b.d"])
        return moon
    }

    @Test func aRunWithNothingChangedReadsNoFile() throws {
        let moon = try project()
        _ = try run(moon)
        let again = try run(moon)
        #expect(again.outcomes == ["up-to-date", "up-to-date", "up-to-date"])
        #expect(again.hashed == 0 && again.fromStatCache == 0)
    }

    /// `touch` without a change is a no-op, and the run after it is stat-only again.
    @Test func aTouchedSourceIsReadOnceThenTrustedAgain() throws {
        let moon = try project()
        _ = try run(moon)
        try settle(moon, ["include/h.h"], secondsAgo: 5)
        let touched = try run(moon)
        #expect(touched.outcomes == ["up-to-date", "up-to-date", "up-to-date"])
        #expect(touched.hashed == 1)
        let after = try run(moon)
        #expect(after.outcomes == ["up-to-date", "up-to-date", "up-to-date"] && after.hashed == 0 && after.fromStatCache == 0)
    }

    /// A header edit reruns exactly the object whose depfile lists it, and
    /// the archive, whose glob stats the new object afresh (the object was
    /// stat'ed earlier in the run, before its node started).
    @Test func aHeaderEditRerunsItsObjectAndTheArchive() throws {
        let moon = try project()
        try moon.write("include/h.h", "H\n")
        try settle(moon, ["include/h.h"])
        #expect(try run(moon).outcomes == ["ran", "up-to-date", "ran"])
        try settle(moon, ["build/a.o", "build/a.d", "build/lib.a"])
        #expect(try run(moon).outcomes == ["up-to-date", "up-to-date", "up-to-date"])
    }

    /// A source replaced by another file of the same size and the same
    /// mtime to the nanosecond (another inode), and one whose mtime went
    /// back into the past: both are changes.
    @Test func aReplacedFileAndAnMtimeGoneBackAreChanges() throws {
        let moon = try project()
        var old = stat()
        #expect(lstat(moon.path("src/b.c"), &old) == 0)
        try moon.write("b.new", "B\n")
        var times = [old.st_atim, old.st_mtim]
        #expect(utimensat(AT_FDCWD, moon.path("b.new"), &times, 0) == 0)
        #expect(rename(moon.path("b.new"), moon.path("src/b.c")) == 0)
        #expect(try run(moon).outcomes == ["up-to-date", "ran", "ran"])
        try settle(moon, ["build/b.o", "build/b.d", "build/lib.a"])
        try moon.write("src/a.c", "A\n")
        try settle(moon, ["src/a.c"], secondsAgo: 7200)
        #expect(try run(moon).outcomes == ["ran", "up-to-date", "ran"])
    }

    /// A node that started and did not succeed runs again, though its files
    /// are as they were: the stats alone never say it is up to date.
    @Test func aFailedRunIsNotUpToDateByItsStats() throws {
        let moon = try project()
        try moon.write("moon.yaml", Self.graph.replacingOccurrences(of: "cat build/*.o > build/lib.a", with: "exit 1"))
        #expect(try moon.run(["run"]).status != 0)
        try moon.write("moon.yaml", Self.graph)
        // Run, or restored from the output cache's entry of the success before: not up to date by its stats.
        let outcomes = try run(moon).outcomes
        #expect(outcomes == ["up-to-date", "up-to-date", "ran"] || outcomes == ["up-to-date", "up-to-date", "cache-hit"], "\(outcomes)")
    }

    /// A restore writes files in the middle of the checks: a node reading
    /// what its need restored is judged by the restored file, not by a stat
    /// taken before the restore (in.txt X, then YY, then X again: gen comes
    /// back from the cache, and use must not keep YY's final.txt).
    @Test func aFileRestoredDuringTheRunIsStatedAfresh() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen: { sources: [in.txt], generates: [out.txt], run: cp in.txt out.txt }
              use: { needs: [gen], sources: [out.txt], generates: [final.txt], run: cp out.txt final.txt }
            """)
        func step(_ text: String, secondsAgo: TimeInterval) throws -> [String] {
            try moon.write("in.txt", text)
            try settle(moon, ["in.txt"], secondsAgo: secondsAgo)
            let result = try moon.run(["run", "--json", "use"])
            #expect(result.status == 0, "\(result.stderr)")
            // Outputs written just now are racy; settled, the next run trusts their stats.
            try settle(moon, ["out.txt", "final.txt"], secondsAgo: secondsAgo - 5)
            return ["gen", "use"].map(result.outcome)
        }
        #expect(try step("X\n", secondsAgo: 60) == ["ran", "ran"])
        #expect(try step("YY\n", secondsAgo: 50) == ["ran", "ran"])
        let result = try moon.run(["run", "--json", "use"])
        #expect(["gen", "use"].map(result.outcome) == ["up-to-date", "up-to-date"], "\(result.stdout)")
        let back = try step("X\n", secondsAgo: 40)
        #expect(back.first == "cache-hit", "\(back)")
        #expect(moon.read("out.txt") == "X\n")
        #expect(moon.read("final.txt") == "X\n", "use kept the output of YY: \(back)")
    }
}
