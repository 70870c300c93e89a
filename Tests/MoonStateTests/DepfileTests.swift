import Foundation
import MoonSystem
import Testing
@testable import MoonState

@Suite struct DepfileTests {
    func parse(_ text: String) throws -> [String] {
        try Depfile.parse(Array(text.utf8))
    }

    /// A depfile is read through the system calls: a regular file whole; a
    /// FIFO (never waited on), a directory, a missing file or one past the
    /// cap gives nothing, and the node runs again.
    @Test func aDepfileIsReadWholeOnlyFromARegularFile() throws {
        let tree = try TempTree()
        try tree.write("d.d", "out: a.h \\\n b.h\n")
        #expect(LinuxCalls.readRegularFile(tree.path("d.d"), limit: 1 << 20).map { String(decoding: $0, as: UTF8.self) } == "out: a.h \\\n b.h\n")
        try tree.write("empty.d", "")
        #expect(LinuxCalls.readRegularFile(tree.path("empty.d"), limit: 1 << 20) == [])
        #expect(LinuxCalls.readRegularFile(tree.path("d.d"), limit: 4) == nil)
        #expect(mkfifo(tree.path("fifo.d"), 0o644) == 0)
        #expect(LinuxCalls.readRegularFile(tree.path("fifo.d"), limit: 1 << 20) == nil)
        #expect(LinuxCalls.readRegularFile(tree.root, limit: 1 << 20) == nil)
        #expect(LinuxCalls.readRegularFile(tree.path("missing.d"), limit: 1 << 20) == nil)
    }

    @Test func gccOutputWithContinuations() throws {
        let text = "main.o: src/main.c include/a.h \\\n include/b.h \\\n  /usr/include/stdio.h\n"
        #expect(try parse(text) == ["src/main.c", "include/a.h", "include/b.h", "/usr/include/stdio.h"])
    }

    @Test func crlfLineEndingsAndContinuations() throws {
        #expect(try parse("a.o: a.c \\\r\n a.h\r\nb.o: b.h\r\n") == ["a.c", "a.h", "b.h"])
    }

    @Test func escapedSpacesAndBackslashes() throws {
        #expect(try parse("a.o: my\\ header.h x.h\n") == ["my header.h", "x.h"])
        // 2N+1 backslashes and a space: N backslashes and a space, in the name.
        #expect(try parse("a.o: a\\\\\\ b.h\n") == ["a\\ b.h"])
        // 2N backslashes and a space: they stay, and the name ends.
        #expect(try parse("a.o: a\\\\ b.h\n") == ["a\\\\", "b.h"])
        // Other backslashes stay.
        #expect(try parse("a.o: dir\\x.h\n") == ["dir\\x.h"])
    }

    @Test func dollarsAndHashes() throws {
        #expect(try parse("a.o: cost$$.h a\\#b.h\n") == ["cost$.h", "a#b.h"])
        #expect(try parse("# a comment\na.o: a.h # trailing\n") == ["a.h"])
    }

    @Test func severalTargetsAndRules() throws {
        // swiftc: several targets, with a space before the colon.
        #expect(try parse("a.o a.swiftmodule : a.swift b.swift\n") == ["a.swift", "b.swift"])
        // Several rules; each file once; -MP's phony rules add nothing.
        let text = "a.o: a.c x.h\nb.o: b.c x.h\nx.h:\n\na.c:\n"
        #expect(try parse(text) == ["a.c", "x.h", "b.c"])
        #expect(try parse("a.o: a.h") == ["a.h"], "no final newline")
    }

    @Test func emptyIsNoFiles() throws {
        #expect(try parse("") == [])
        #expect(try parse("\n  \n") == [])
        #expect(try parse("a.o:\n") == [])
    }

    @Test func malformedTextIsAnError() {
        #expect(throws: Depfile.Malformed.self) { try parse("just some words\n") }
        #expect(throws: Depfile.Malformed.self) { try parse("a.o: a.h\nstray\n") }
        #expect(throws: Depfile.Malformed.self) { try parse("a.o: a\0.h\n") }
        #expect((try? parse("a.o: a.h\n\nstray words\n")) == nil)
        do {
            _ = try parse("a.o: a.h\n\nstray words\n")
        } catch let error as Depfile.Malformed {
            #expect(error.line == 3)
        } catch {
            Issue.record("\(error)")
        }
    }

    /// A header a first build's depfile lists is trusted when it was written
    /// before the check (a checkout just before the build), and unknown when
    /// it may have been written while the command ran.
    @Test func aDependencyWrittenBeforeTheCheckIsTrusted() {
        let check: Int64 = 1_700_000_000_123_456_789
        func written(_ before: Int64) -> FileStat { FileStat(size: 1, mtimeNanoseconds: check - before, inode: 1) }
        #expect(written(60_000_000).writtenBefore(check))
        #expect(written(1).writtenBefore(check))
        #expect(!written(0).writtenBefore(check))
        #expect(!written(-1_000_000).writtenBefore(check))
        // Whole-second times: two seconds' margin.
        let coarse = FileStat(size: 1, mtimeNanoseconds: 1_700_000_000_000_000_000, inode: 1)
        #expect(!coarse.writtenBefore(1_700_000_001_500_000_000))
        #expect(coarse.writtenBefore(1_700_000_002_000_000_000))
    }

    /// A file written just before the check, within the kernel's clock
    /// tick, counts as written before it once that clock has moved on: the
    /// file clock is the one the kernel stamps files with.
    @Test func aFileWrittenJustBeforeTheCheckCountsAsBefore() throws {
        let tree = try TempTree()
        let path = tree.path("h.h")
        try Data("int x;\n".utf8).write(to: URL(fileURLWithPath: path))
        let (stat, _) = try #require(FileStat.of(path))
        var clock = FileStat.fileClockNanoseconds()
        let deadline = FileStat.monotonicNanoseconds() + 1_000_000_000
        while clock <= stat.mtimeNanoseconds && FileStat.monotonicNanoseconds() < deadline {
            clock = FileStat.fileClockNanoseconds()
        }
        #expect(stat.writtenBefore(clock), "written \(clock - stat.mtimeNanoseconds) ns before the check")
        // A write after the reading is never before it.
        try Data("int y;\n".utf8).write(to: URL(fileURLWithPath: path))
        let (later, _) = try #require(FileStat.of(path))
        #expect(!later.writtenBefore(clock))
    }
}
