import Foundation
import MoonEvents
import GRDBSQLite
import Testing

/// Files that are not what moon expects — devices, FIFOs, sparse giants,
/// binary data, huge plain graphs, broken state stores — through the real
/// binary: each one a clear error (or warning) in bounded time and memory,
/// never a hang, a runaway allocation or a trap.
/// Over 400 lines: one test per kind of hostile file, each a whole scenario.
@Suite struct HostileInputTests {
    static let small = "version: 1\nnodes:\n  a: { run: 'true' }\n"

    // MARK: Graph files (and every other file moon reads as input)

    /// Devices that never end: refused at once, naming what the file is.
    @Test(arguments: ["/dev/zero", "/dev/urandom", "/dev/full"])
    func aDeviceAsTheGraphFileIsRefusedAtOnce(device: String) throws {
        let moon = try Moon()
        let r = try Measured.run(moon, ["check", device], limit: 20)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("\(device) is a character device"), "\(r.stderr)")
        #expect(r.seconds < 5, "took \(r.seconds)s")
        #expect(r.peakKiB < 200_000, "peak RSS \(r.peakKiB) KiB")
    }

    /// A 1 TB sparse file: refused by its size before anything is allocated.
    @Test func aSparseTerabyteFileIsRefusedBySize() throws {
        let moon = try Moon()
        let fd = open(moon.path("big.yaml"), O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 1 << 40) == 0)
        close(fd)
        let r = try Measured.run(moon, ["check", "big.yaml"], limit: 20)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("big.yaml is 1 TiB"), "\(r.stderr)")
        #expect(r.stderr.contains("64 MiB"), "\(r.stderr)")
        #expect(r.seconds < 5 && r.peakKiB < 200_000, "\(r.seconds)s, \(r.peakKiB) KiB")
    }

    /// Binary data under the size cap is found while reading: a file of
    /// NULs stops at its first bytes (located), without reading or indexing
    /// the rest.
    @Test func aFileOfNULsFailsFastAtItsFirstByte() throws {
        let moon = try Moon()
        let fd = open(moon.path("z.yaml"), O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 60 << 20) == 0)
        close(fd)
        let r = try Measured.run(moon, ["check", "z.yaml"], limit: 30)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("z.yaml:1:1: error: the file is binary"), "\(r.stderr)")
        #expect(r.seconds < 5 && r.peakKiB < 200_000, "\(r.seconds)s, \(r.peakKiB) KiB")
    }

    /// A NUL after some text is located at its line and column.
    @Test func aNULLaterInTheFileIsLocated() throws {
        let moon = try Moon()
        try moon.write("g.yaml", "version: 1\nnodes:\n  a: { run: 'tr\0ue' }\n" + String(repeating: "# pad\n", count: 200_000))
        let r = try moon.run(["check", "g.yaml"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("g.yaml:3:16: error: the file is binary"), "\(r.stderr)")
    }

    /// A FIFO nobody writes to is an error, not a wait for a writer.
    @Test func aFIFOWithNoWriterIsAnError() throws {
        let moon = try Moon()
        #expect(mkfifo(moon.path("fifo.yaml"), 0o644) == 0)
        let r = try Measured.run(moon, ["check", "fifo.yaml"], limit: 20)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("fifo.yaml is a FIFO"), "\(r.stderr)")
        #expect(r.seconds < 5)
    }

    /// Pipes still work: process substitution, `/dev/stdin` from a pipe or
    /// a redirected file, and a FIFO that has a writer. The writer must be
    /// waiting in its open when moon opens the FIFO (else moon rightly finds
    /// no writer): the shell waits until the kernel says so, not a while.
    @Test func pipesAndStandardInputStillWork() throws {
        let moon = try Moon(graph: Self.small)
        let shell = try Measured.shell("""
            "$MOON" check <(cat moon.yaml) && cat moon.yaml | "$MOON" check /dev/stdin && "$MOON" check /dev/stdin < moon.yaml \
            && mkfifo f.yaml && { cat moon.yaml > f.yaml & } && w=$! && i=0 \
            && while [ "$(cat /proc/$w/wchan 2>/dev/null)" != wait_for_partner ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done \
            && "$MOON" check f.yaml
            """, in: moon)
        #expect(shell.status == 0, "\(shell.stderr)")
        #expect(shell.stdout.components(separatedBy: "ok (1 node").count == 5, "\(shell.stdout)")
    }

    /// A pipe that never ends is cut at the cap; one of NULs stops at once.
    @Test func anEndlessPipeIsCutAtTheCap() throws {
        let moon = try Moon()
        let comments = try Measured.shell("yes '# a comment line' | \"$MOON\" check /dev/stdin", in: moon, limit: 60)
        #expect(comments.status == 2, "\(comments.stderr)")
        #expect(comments.stderr.contains("/dev/stdin is longer than 64 MiB"), "\(comments.stderr)")
        let zeros = try Measured.shell("\"$MOON\" check /dev/stdin < /dev/zero; cat /dev/zero | \"$MOON\" check /dev/stdin",
                                       in: moon, limit: 30)
        #expect(zeros.stderr.contains("/dev/stdin is a character device"), "\(zeros.stderr)")
        #expect(zeros.stderr.contains("/dev/stdin:1:1: error: the file is binary"), "\(zeros.stderr)")
        #expect(zeros.seconds < 10, "\(zeros.seconds)s")
    }

    /// `dotenv:` files follow the same rules: a device, a FIFO with no
    /// writer, a file over the cap and a binary file are errors at the
    /// entry that names them.
    @Test func dotenvFilesAreReadByTheSameRules() throws {
        let moon = try Moon()
        #expect(mkfifo(moon.path("fifo.env"), 0o644) == 0)
        let fd = open(moon.path("big.env"), O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 1 << 40) == 0)
        close(fd)
        try moon.write("nul.env", "A=1\nB=x\0y\n")
        for (file, message) in [("/dev/zero", "/dev/zero is a character device"), ("fifo.env", "fifo.env is a FIFO"),
                                ("big.env", "big.env is 1 TiB"), ("nul.env", "nul.env is binary")] {
            try moon.write("moon.yaml", "version: 1\ndotenv: [\(file)]\nnodes:\n  a: { run: 'true' }\n")
            let r = try Measured.run(moon, ["check"], limit: 20)
            #expect(r.status == 2, "\(file): \(r.stderr)")
            #expect(r.stderr.contains("moon.yaml:2:10: error: cannot read dotenv file"), "\(file): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(file): \(r.stderr)")
            #expect(r.seconds < 5 && r.peakKiB < 200_000, "\(file): \(r.seconds)s, \(r.peakKiB) KiB")
        }
    }

    /// `moon replay` refuses a device and a FIFO with no writer; a recording
    /// on a pipe still replays.
    @Test func replayRefusesDevicesAndReadsPipes() throws {
        let moon = try Moon(graph: Self.small)
        #expect(mkfifo(moon.path("fifo.jsonl"), 0o644) == 0)
        for (file, message) in [("/dev/zero", "/dev/zero is a character device"), ("/dev/urandom", "is a character device"),
                                ("fifo.jsonl", "fifo.jsonl is a FIFO")] {
            let r = try Measured.run(moon, ["replay", file], limit: 20)
            #expect(r.status == 2, "\(file): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(file): \(r.stderr)")
            #expect(r.seconds < 5 && r.peakKiB < 200_000, "\(file): \(r.seconds)s, \(r.peakKiB) KiB")
        }
        let piped = try Measured.shell("\"$MOON\" run --json > rec.jsonl && cat rec.jsonl | \"$MOON\" replay - && \"$MOON\" replay <(cat rec.jsonl)",
                                       in: moon)
        #expect(piped.status == 0, "\(piped.stderr)")
    }

    /// A terminal moon does not read its standard input from — a new
    /// pseudo-terminal (/dev/ptmx), /dev/tty, the slave of another pty — as
    /// a graph file, an include, a dotenv file or a recording: refused at
    /// once (a read would wait for ever), in every command that reads it.
    @Test func aTerminalIsRefusedAsEveryKindOfInput() throws {
        let moon = try Moon(graph: Self.small)
        let result = try shell(#"""
            python3 -c 'import os, pty, time; m, s = pty.openpty(); print(os.ttyname(s), flush=True); time.sleep(60)' > slave.txt &
            helper=$!
            while [ ! -s slave.txt ]; do sleep 0.05; done
            for dev in /dev/ptmx /dev/tty "$(cat slave.txt)"; do
              printf 'version: 1\nincludes:\n  x: %s\nnodes:\n  a: { run: "true" }\n' "$dev" > inc.yaml
              printf 'version: 1\ndotenv: [%s]\nnodes:\n  a: { run: "true" }\n' "$dev" > env.yaml
              for c in "check $dev" "run $dev" "check inc.yaml" "list inc.yaml" "run inc.yaml" "check env.yaml" "replay $dev"; do
                timeout -s KILL 10 "$MOON" $c </dev/null >/dev/null 2>err.txt
                echo "$c: rc=$? refused=$(grep -c "$dev is a character device" err.txt)"
              done
            done
            kill $helper
            """#, in: moon, limit: 120)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 21, "\(result.stdout)\(result.stderr)")
        for line in lines { #expect(line.hasSuffix("rc=2 refused=1"), "\(line)") }
    }

    /// Ctrl-C ends moon while it waits for its graph file (a FIFO whose
    /// writer writes nothing), even started as a script's background job,
    /// which begins with SIGINT ignored.
    @Test func interruptEndsAWaitForTheGraphFile() throws {
        let moon = try Moon()
        #expect(mkfifo(moon.path("slow.yaml"), 0o644) == 0)
        let result = try shell("""
            exec 3<>slow.yaml
            "$MOON" check slow.yaml </dev/null >/dev/null 2>&1 &
            p=$!
            sleep 1
            kill -INT $p
            for i in $(seq 100); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
            if kill -0 $p 2>/dev/null; then echo still-alive; kill -KILL $p; fi
            wait $p; echo "rc=$?"
            """, in: moon, limit: 60)
        #expect(result.stdout == "rc=130\n", "\(result.stdout)\(result.stderr)")
    }

    // MARK: Size limits

    /// Includes are bounded in bytes as in files: ten files that each include
    /// the next twice reach an 8 MiB leaf 512 times (4 GiB to parse); the
    /// error comes at the include that passes 64 MiB, at once and in little memory.
    @Test func includesAreBoundedInBytes() throws {
        let moon = try Moon()
        for i in 0..<10 {
            let next = i < 9 ? "l\(i + 1).yaml" : "leaf.yaml"
            try moon.write("l\(i).yaml", "version: 1\nincludes:\n  p: \(next)\n  q: \(next)\nnodes:\n  a: { run: \"true\" }\n")
        }
        try moon.write("leaf.yaml", "version: 1\nnodes:\n  a: { run: \"true\" }\n#" + String(repeating: "x", count: 8 << 20) + "\n")
        let r = try Measured.run(moon, ["check", "l0.yaml"], limit: 120)
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("includes hold more than 64 MiB in all"), "\(r.stderr.prefix(2000))")
        #expect(r.seconds < 30 && r.peakKiB < 1_000_000, "\(r.seconds)s, \(r.peakKiB) KiB")
        // Many distinct medium files within the bound load: 20 of 2 MiB each.
        var includes = ""
        for i in 0..<20 {
            try moon.write("m\(i).yaml", "version: 1\nnodes:\n  a: { run: \"true\" }\n#" + String(repeating: "y", count: 2 << 20) + "\n")
            includes += "  m\(i): m\(i).yaml\n"
        }
        try moon.write("wide.yaml", "version: 1\nincludes:\n" + includes + "nodes:\n  top: { run: \"true\" }\n")
        let wide = try Measured.run(moon, ["list", "wide.yaml"], limit: 120)
        #expect(wide.status == 0, "\(wide.stderr.prefix(2000))")
        #expect(wide.stdout.contains("m19:a"), "\(wide.stdout)")
    }

    /// A plain file of 120,000 nodes written one line each with built-ins
    /// (1.2 million YAML nodes, over the old limit of 1 million "once
    /// aliases are expanded") has no alias: the alias limit does not apply
    /// to it. (200,000 such nodes load too: README, release figures.)
    @Test func aLargePlainGraphWithoutAliasesLoads() throws {
        let moon = try Moon()
        var text = "version: 1\nnodes:\n  n0: {uses: echo, with: {message: x}}\n"
        for i in 1..<120_000 { text += "  n\(i): {needs: n\(i - 1), uses: echo, with: {message: x}}\n" }
        try moon.write("moon.yaml", text)
        let r = try moon.run(["check"], limit: 180)
        #expect(r.status == 0, "\(r.stderr.prefix(2000))")
        #expect(r.stdout.contains("ok (120000 nodes"), "\(r.stdout)")
    }

    /// `sources: ["/**"]` would walk the whole file system at every run:
    /// `moon check` warns (it may be meant, so not an error), as for a walk
    /// of a directory above the graph's; a named directory is no warning.
    @Test func aSourcesPatternThatWalksOutsideTheGraphIsAWarning() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              a: { sources: ["/**"], run: 'true' }
              b: { sources: ["../**/*.c"], run: 'true' }
              c: { sources: ["/opt/sdk/include/**", "../common/**", "src/**", "./../x.txt"], run: 'true' }
            """)
        let r = try moon.run(["check"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("moon.yaml:3:18: warning: 'sources' pattern '/**' walks the whole file system"), "\(r.stderr)")
        #expect(r.stderr.contains("moon.yaml:4:18: warning: 'sources' pattern '../**/*.c' walks '..', a directory above the graph's"), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "warning:").count == 3, "\(r.stderr)")
    }

    // MARK: Leftovers of a killed moon

    /// A moon killed with SIGKILL leaves its private outputs directory
    /// behind; the next run removes it — only one named by this moon's
    /// form (`moon-PID-XXXXXX`), whose moon is gone and which no live moon
    /// has locked. Older moons' `moon-XXXXXX` are left alone.
    @Test func theNextRunRemovesTheOutputDirectoryOfAKilledMoon() throws {
        // A node process (the directory is made when the first one starts);
        // moon's death pipe ends it with moon.
        let moon = try Moon(graph: "version: 1\nnodes:\n  a: { run: exec sleep 30 }\n")
        let base = moon.path("tmp")
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        func entries() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []) }
        // SIGKILL leaves the directory behind.
        let killed = try moon.start(["run", "-q"], environment: ["TMPDIR": base])
        #expect(eventually(20) { entries().contains { $0.hasPrefix("moon-\(killed.pid)-") } }, "\(entries())")
        killed.signal(SIGKILL)
        _ = try killed.wait(limit: 20)
        let leftover = entries()
        #expect(leftover.count == 1, "\(leftover)")
        // Others: a dead moon's (with an output file), an older moon's form,
        // a live process's, and a dead pid's that a live moon has locked.
        let dead = "moon-99999999-abcdef"  // no such process: pids stop far below
        try FileManager.default.createDirectory(atPath: base + "/" + dead, withIntermediateDirectories: true)
        try Data("a=1\n".utf8).write(to: URL(fileURLWithPath: base + "/" + dead + "/out-1"))
        let old = "moon-Xy12ab"
        let alive = "moon-\(getpid())-abcdef"
        let locked = "moon-99999998-abcdef"
        for name in [old, alive, locked] { try FileManager.default.createDirectory(atPath: base + "/" + name, withIntermediateDirectories: true) }
        let holder = open(base + "/" + locked, O_RDONLY | O_DIRECTORY)
        #expect(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0)
        defer { close(holder) }

        try moon.write("moon.yaml", Self.small)
        let r = try moon.run(["run", "-q"], environment: ["TMPDIR": base])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(entries() == [old, alive, locked], "\(entries())")
    }

    // MARK: The state store

    /// (`cache: false`: these tests are about the state store alone; the
    /// output cache would remember that the check passed.)
    static let tracked = """
        version: 1
        nodes:
          gen: { sources: [in.txt], run: 'cat in.txt', cache: false }
        """

    /// A store with a sound header but garbage in pages 2-4: moved aside
    /// once, with a warning that says where, and a new store made, which
    /// the next run uses without a word.
    @Test func aStoreWithCorruptPagesIsMovedAsideOnce() throws {
        let moon = try Moon(graph: Self.tracked)
        try moon.write("in.txt", "x\n")
        // Forced, so that each run is recorded (a no-op is not) and the file grows.
        for _ in 0..<3 { #expect(try moon.run(["run", "-q", "-B"]).status == 0) }
        let database = moon.path(".moon/state.db")
        Self.checkpoint(database) { _ in }
        try? FileManager.default.removeItem(atPath: database + "-wal")
        try? FileManager.default.removeItem(atPath: database + "-shm")
        let size = (try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0
        #expect(size >= 5 * 4096, "\(size) bytes")
        // As `dd if=/dev/urandom bs=4096 seek=1 count=3`.
        var generator = SystemRandomNumberGenerator()
        for page in 2...4 { try Self.overwrite(database, page: page) { _ in UInt8.random(in: 0...255, using: &generator) } }

        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.outcome("gen") == "ran")
        #expect(first.stderr.contains("moved it to .moon/state.db.corrupt"), "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: database + ".corrupt"))
        let second = try moon.run(["run", "--json"])
        #expect(second.status == 0)
        #expect(second.stderr.isEmpty, "\(second.stderr)")
        #expect(second.outcome("gen") == "up-to-date", "\(second.stdout)")
        let history = try moon.run(["history"])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stderr.isEmpty, "\(history.stderr)")
        // The new store's first run; the second, a no-op, is not recorded.
        #expect(history.stdout.contains("#1") && !history.stdout.contains("#2"), "\(history.stdout)")
    }

    /// Garbage deeper in a table than opening looks (the last leaf of the
    /// stat cache's table): found when a run reads it, moved aside then,
    /// once; the next run starts a new store, the one after is up to date.
    @Test func garbageDeepInATableIsMovedAsideWhenFound() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen: { sources: ["src/*.txt"], run: 'ls src | wc -l', cache: false }
            """)
        try moon.makeDirectory("src")
        let long = String(repeating: "n", count: 120)
        for i in 0..<1500 { try moon.write("src/\(long)-\(i).txt", "\(i)\n") }
        #expect(try moon.run(["run", "-q"]).status == 0)
        #expect(try moon.run(["run", "--json"]).outcome("gen") == "up-to-date")
        let database = moon.path(".moon/state.db")
        // The stat cache's rightmost leaf: the probe at opening reads the leftmost.
        var page = 0
        var last = ""
        Self.checkpoint(database) { connection in
            var statement: OpaquePointer?
            #expect(sqlite3_prepare_v2(connection, "SELECT pageno FROM dbstat WHERE name = 'files' AND pagetype = 'leaf' ORDER BY path DESC LIMIT 1",
                                       -1, &statement, nil) == SQLITE_OK)
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            page = Int(sqlite3_column_int64(statement, 0))
            sqlite3_finalize(statement)
            // The table's last path, whose row is on that leaf.
            #expect(sqlite3_prepare_v2(connection, "SELECT path FROM files ORDER BY path DESC LIMIT 1", -1, &statement, nil) == SQLITE_OK)
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            last = String(cString: sqlite3_column_text(statement, 0))
            sqlite3_finalize(statement)
        }
        #expect(page > 2, "the stat cache spans several pages")
        try Self.overwrite(database, page: page) { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        // A touched source whose row is on that leaf: its node's manifest no longer answers, so the run asks the stat cache about it.
        #expect(last.hasPrefix("src/"), "\(last)")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-30)], ofItemAtPath: moon.path(last))

        let first = try moon.run(["run", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.outcome("gen") == "ran")
        #expect(first.stderr.contains("moved it to .moon/state.db.corrupt, and the next run starts a new one"), "\(first.stderr)")
        #expect(first.stderr.components(separatedBy: "warning:").count == 2, "one warning: \(first.stderr)")
        let second = try moon.run(["run", "--json"])
        #expect(second.stderr.isEmpty, "\(second.stderr)")
        #expect(second.outcome("gen") == "ran")
        #expect(try moon.run(["run", "--json"]).outcome("gen") == "up-to-date")
    }

    /// `moon status` and `moon history` on a corrupt store: a warning that
    /// says so and what `moon run` will do, never a failure of their own.
    @Test func statusAndHistoryOnACorruptStoreWarn() throws {
        let moon = try Moon(graph: Self.tracked)
        try moon.write("in.txt", "x\n")
        try moon.makeDirectory(".moon")
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: moon.path(".moon/state.db")))
        for command in ["status", "history"] {
            let r = try moon.run([command])
            #expect(r.status == 0, "\(command): \(r.stderr)")
            #expect(r.stderr.contains(".moon/state.db is corrupt"), "\(command): \(r.stderr)")
        }
    }

    /// The store, its WAL or its shared-memory file being a FIFO, a device
    /// or a symbolic link: refused with a warning, never opened (a FIFO
    /// would be waited on; a link would make SQLite write a database into
    /// its target), and every command finishes.
    @Test func aStoreThatIsNotARegularFileIsRefused() throws {
        var cases: [(String, String, (String) -> Void)] = [
            ("state.db", "is a FIFO", { path in _ = mkfifo(path, 0o644) }),
            ("state.db-wal", "is a FIFO", { path in _ = mkfifo(path, 0o644) }),
            ("state.db-shm", "is a FIFO", { path in _ = mkfifo(path, 0o644) }),
            ("state.db", "is a symbolic link", { path in _ = symlink(path + "-target", path) }),
        ]
        if getuid() == 0 {
            // /dev/zero's numbers, 1:5.
            cases.append(("state.db", "is a character device", { path in _ = mknod(path, S_IFCHR | 0o666, dev_t(0x105)) }))
        }
        for (name, what, make) in cases {
            let moon = try Moon(graph: Self.tracked)
            try moon.write("in.txt", "x\n")
            #expect(try moon.run(["run", "-q"]).status == 0)
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: moon.path(".moon/state.db" + suffix)) }
            let path = moon.path(".moon/" + name)
            if name != "state.db" { try Data().write(to: URL(fileURLWithPath: moon.path(".moon/state.db"))) }
            try Data().write(to: URL(fileURLWithPath: moon.path(".moon/state.db-target")))
            make(path)
            for command in [["run", "--json"], ["status"], ["history"]] {
                let r = try Measured.run(moon, command, limit: 30)
                #expect(r.status == 0, "\(name) \(command): \(r.stderr)")
                #expect(r.stderr.contains(".moon/\(name) \(what)"), "\(name) \(command): \(r.stderr)")
                #expect(r.seconds < 10, "\(name) \(command): \(r.seconds)s")
                if command == ["run", "--json"] { #expect(Moon.Result(stdout: r.stdout, stderr: r.stderr, status: r.status).outcome("gen") == "ran") }
            }
            let target = (try? FileManager.default.attributesOfItem(atPath: moon.path(".moon/state.db-target"))[.size] as? Int) ?? -1
            #expect(target == 0, "the link's target is untouched")
        }
    }

    // MARK: Helpers

    /// Copies the WAL of the store at `database` into its main file (as a
    /// closed store leaves it), then hands `body` the connection.
    static func checkpoint(_ database: String, _ body: (OpaquePointer?) -> Void) {
        var connection: OpaquePointer?
        #expect(sqlite3_open(database, &connection) == SQLITE_OK)
        #expect(sqlite3_exec(connection, "PRAGMA wal_checkpoint(TRUNCATE)", nil, nil, nil) == SQLITE_OK)
        body(connection)
        sqlite3_close(connection)
    }

    /// Writes `byte(i)` for each byte `i` of 4 KiB page `page` (1-based) of `database`.
    static func overwrite(_ database: String, page: Int, byte: (Int) -> UInt8) throws {
        // The page size is the file header's (bytes 16 and 17, big-endian; 1 stands for 65536).
        let header = try Data(contentsOf: URL(fileURLWithPath: database)).prefix(18)
        let size = Int(header[16]) << 8 | Int(header[17])
        let pageSize = size == 1 ? 65536 : size
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: database))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        handle.write(Data((0..<pageSize).map(byte)))
        try handle.close()
    }

}

/// Runs moon (or a shell around it) and measures its wall time and peak
/// memory: the largest `VmHWM` of the process seen while it runs (sampled
/// every few milliseconds; `wait4`'s `ru_maxrss` would count the test
/// process's own memory, which a spawned child inherits until it execs).
enum Measured {
    struct Result {
        var stdout: String
        var stderr: String
        var status: Int32
        var seconds: Double
        /// Peak resident set size seen, in KiB.
        var peakKiB: Int
    }

    static func run(_ moon: Moon, _ arguments: [String], limit: TimeInterval = 60) throws -> Result {
        try measure(moon.start(arguments), limit: limit)
    }

    /// `script` with bash in the test's directory, `$MOON` the binary
    /// (`shell` of MoonProcessRunner), timed; its memory is not measured.
    static func shell(_ script: String, in moon: Moon, limit: TimeInterval = 60) throws -> Result {
        let started = Date()
        let result = try MoonCLITests.shell(script, in: moon, bash: true, limit: limit)
        return Result(stdout: result.stdout, stderr: result.stderr, status: result.status,
                      seconds: Date().timeIntervalSince(started), peakKiB: 0)
    }

    private static func measure(_ running: Moon.Running, limit: TimeInterval) throws -> Result {
        let started = Date()
        var peak = 0
        while running.process.isRunning && Date().timeIntervalSince(started) < limit {
            peak = max(peak, highWaterMark(running.pid))
            usleep(2_000)
        }
        let result = try running.wait(limit: max(1, limit - Date().timeIntervalSince(started)))
        return Result(stdout: result.stdout, stderr: result.stderr, status: result.status,
                      seconds: Date().timeIntervalSince(started), peakKiB: peak)
    }

    /// `VmHWM` of `pid` in KiB (0 once it is gone).
    private static func highWaterMark(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}
