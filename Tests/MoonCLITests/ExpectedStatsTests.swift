import Foundation
import Testing

/// A graph with enough files that a second thread stats them ahead of the
/// checks (`StatPrefetch`, from the last file back, while the checks go
/// from the first): an edit, a deleted output or a touched file is seen
/// wherever it falls, by either thread, and a no-op runs nothing.
@Suite struct ExpectedStatsTests {
    static let count = 260
    static let headers = 40

    static var graph: String {
        var text = "version: 1\nnodes:\n"
        for i in 0..<count {
            let (a, b) = (i % headers, (i * 7 + 3) % headers)
            text += """
              n\(i):
                sources: [src/\(i).c]
                generates: [out/\(i).o]
                depfile: out/\(i).d
                run: |
                  mkdir -p out && printf 'out/\(i).o: src/\(i).c inc/\(a).h inc/\(b).h\\n' > out/\(i).d && cat src/\(i).c inc/\(a).h inc/\(b).h > out/\(i).o

            """
        }
        return text
    }

    /// The nodes a `--json` run completed, by name.
    private func ran(_ output: String) -> Set<String> {
        var names = Set<String>()
        for line in output.split(separator: "\n") where line.contains("\"event\":\"complete\"") {
            if let range = line.range(of: "\"node\":\""), let end = line[range.upperBound...].firstIndex(of: "\"") {
                names.insert(String(line[range.upperBound..<end]))
            }
        }
        return names
    }

    @Test func editsAreSeenWhereverTheyFall() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("src")
        try moon.makeDirectory("inc")
        for i in 0..<Self.count { try moon.write("src/\(i).c", "int x\(i);\n") }
        for h in 0..<Self.headers { try moon.write("inc/\(h).h", "#define H\(h)\n") }
        #expect(try moon.run(["run", "-j", "2"]).status == 0)
        // Settled: the next runs read the state the first one wrote.
        let noop = try moon.run(["run", "-j", "2", "--no-cache", "--json"])
        #expect(noop.status == 0, "\(noop.stderr)")
        #expect(ran(noop.stdout).isEmpty, "\(noop.stdout)")

        // The first and last source in the checks' order, a header some nodes list, and an output.
        try moon.write("src/0.c", "int x0 = 1;\n")
        try moon.write("src/\(Self.count - 1).c", "int last = 1;\n")
        try moon.write("inc/17.h", "#define H17 2\n")
        try FileManager.default.removeItem(atPath: moon.path("out/130.o"))
        // Without the output cache, which would restore the deleted output rather than run its node.
        let edit = try moon.run(["run", "-j", "2", "--no-cache", "--json"])
        #expect(edit.status == 0, "\(edit.stderr)")
        var expected: Set<String> = ["n0", "n\(Self.count - 1)", "n130"]
        for i in 0..<Self.count where i % Self.headers == 17 || (i * 7 + 3) % Self.headers == 17 { expected.insert("n\(i)") }
        #expect(ran(edit.stdout) == expected)
        #expect(moon.read("out/\(Self.count - 1).o")?.hasPrefix("int last = 1;\n") == true)

        // A touch without a change is no edit; the run after the edit runs nothing.
        let now = Date()
        for i in [1, 200, Self.count - 2] {
            try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(5)], ofItemAtPath: moon.path("src/\(i).c"))
        }
        let after = try moon.run(["run", "-j", "2", "--no-cache", "--json"])
        #expect(after.status == 0, "\(after.stderr)")
        #expect(ran(after.stdout).isEmpty, "\(after.stdout)")
    }

    /// The first CPU this process may use (`Cpus_allowed_list`), or nil.
    private static var firstCPU: String? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        let list = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        let first = list.prefix { $0.isNumber }
        return first.isEmpty ? nil : String(first)
    }

    /// `moon` with `arguments` in `moon`'s directory, allowed only `cpu`
    /// (`taskset`), as on a one-CPU machine: its status and standard output.
    private func onOneCPU(_ cpu: String, _ moon: Moon, _ arguments: [String]) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        process.arguments = ["-c", cpu, Moon.binary] + arguments
        process.currentDirectoryURL = moon.directory
        var environment = ProcessInfo.processInfo.environment
        environment["MOON_CACHE_DIR"] = moon.path(".cache")
        process.environment = environment
        let out = moon.directory.appendingPathComponent(".stdout-one-cpu")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: out, encoding: .utf8)) ?? "")
    }

    /// On one CPU (a one-CPU machine, container or cpuset) no second thread
    /// can run beside the checks: none is started, and the same runs give
    /// the same results (a thread that could not start once freed its
    /// buffer twice, and moon aborted).
    @Test func onOneCPUTheChecksStatAlone() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), let cpu = Self.firstCPU else { return }
        // Where the host refuses the affinity (a sandbox), there is nothing to test.
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        probe.arguments = ["-c", cpu, "/bin/true"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else { return }
        let moon = try Moon(graph: Self.graph + "  cpus:\n    run: grep Cpus_allowed_list /proc/self/status > cpus.txt\n")
        try moon.makeDirectory("src")
        try moon.makeDirectory("inc")
        for i in 0..<Self.count { try moon.write("src/\(i).c", "int x\(i);\n") }
        for h in 0..<Self.headers { try moon.write("inc/\(h).h", "#define H\(h)\n") }
        #expect(try onOneCPU(cpu, moon, ["run", "-j", "2", "-q"]).status == 0)
        #expect(moon.read("cpus.txt")?.hasSuffix("\t\(cpu)\n") == true, "\(moon.read("cpus.txt") ?? "")")
        let noop = try onOneCPU(cpu, moon, ["run", "-j", "2", "--no-cache", "--json"])
        #expect(noop.status == 0)
        #expect(ran(noop.stdout) == ["cpus"], "\(noop.stdout)")
        try moon.write("src/\(Self.count - 1).c", "int last = 1;\n")
        let edit = try onOneCPU(cpu, moon, ["run", "-j", "2", "--no-cache", "--json"])
        #expect(edit.status == 0)
        #expect(ran(edit.stdout) == ["n\(Self.count - 1)", "cpus"], "\(edit.stdout)")
        let status = try onOneCPU(cpu, moon, ["status"])
        #expect(status.status == 0)
    }
}
