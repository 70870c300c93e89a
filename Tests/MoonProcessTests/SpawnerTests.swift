import Foundation
import Glibc
import Testing
@testable import MoonProcess

/// What moon's own spawner (CMoonSpawn) guarantees each child, beyond the
/// descriptor and error tests of ProcessLauncherTests.
@Suite struct SpawnerTests {
    @Test func eachChildLeadsItsOwnGroupInMoonsSession() async throws {
        // Fields 5 and 6 of /proc/PID/stat: process group and session.
        let (recorder, termination) = try await run(shell("echo $$ $(cut -d' ' -f5,6 /proc/$$/stat)"))
        #expect(termination == .exited(0))
        let fields = try #require(recorder.texts(.stdout).first).split(separator: " ")
        try #require(fields.count == 3)
        #expect(fields[0] == fields[1])
        #expect(pid_t(fields[2]) == getsid(0))
    }

    @Test func environmentLayersAreHandedOverWithoutDuplicates() async throws {
        let base = ProcessEnvironment.Base(["PATH": "/usr/bin:/bin", "A": "base", "B": "base", "LC_ALL": "C"])
        var environment = ProcessEnvironment(base: base)
        environment.set("B", "node")
        environment.set("C", "node")
        environment.set("B", "moon")  // a later layer wins over an earlier override
        let spec = ProcessSpec(executable: "/usr/bin/env", processEnvironment: environment)
        let (recorder, termination) = try await run(spec)
        #expect(termination == .exited(0))
        #expect(recorder.texts(.stdout).sorted() == ["A=base", "B=moon", "C=node", "LC_ALL=C", "PATH=/usr/bin:/bin"])
        #expect(spec.environment == ["PATH": "/usr/bin:/bin", "A": "base", "B": "moon", "C": "node", "LC_ALL": "C"])
    }

    @Test func anEmptyEnvironmentAndEmptyArguments() async throws {
        let (recorder, termination) = try await run(ProcessSpec(executable: "/usr/bin/env", environment: [:]))
        #expect(termination == .exited(0))
        #expect(recorder.lines.isEmpty)
        let (echo, _) = try await run(ProcessSpec(executable: "/bin/echo", arguments: ["", "é", ""], environment: [:]))
        #expect(echo.texts(.stdout) == [" é "])
    }

    @Test func execFailuresAreErrorsAndTheFailedChildIsReaped() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Executable, but neither a binary nor a script: execve says ENOEXEC.
        let garbage = directory + "/garbage"
        try Data([0x7F, 0x45, 0x4C, 0x46, 0, 1, 2, 3]).write(to: URL(fileURLWithPath: garbage))
        chmod(garbage, 0o755)
        do {
            _ = try launcher.launch(ProcessSpec(executable: garbage, environment: testEnvironment), onOutput: { _ in }, onExit: { _ in })
            Issue.record("launch succeeded")
        } catch let error as ProcessLaunchError {
            #expect(error.kind == .notExecutable)
            #expect(error.errno == ENOEXEC)
            #expect(error.message == "cannot run '\(garbage)': exec: Exec format error")
        }
    }

    @Test func aProgramOpenForWritingFailsAfterRetries() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = directory + "/script"
        try "#!/bin/sh\ntrue\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let writer = open(script, O_WRONLY | O_APPEND | O_CLOEXEC)
        try #require(writer >= 0)
        defer { close(writer) }
        do {
            _ = try launcher.launch(ProcessSpec(executable: script, environment: testEnvironment), onOutput: { _ in }, onExit: { _ in })
            Issue.record("launch succeeded")
        } catch let error as ProcessLaunchError {
            #expect(error.errno == ETXTBSY)
            #expect(error.kind == .notExecutable)
        }
    }
}

@Suite struct ProcessEnvironmentTests {
    @Test func overridesBeatTheBaseAndReadBack() {
        let base = ProcessEnvironment.Base(["HOME": "/root", "PATH": "/bin"])
        var environment = ProcessEnvironment(base: base)
        #expect(environment["HOME"] == "/root")
        environment.set("HOME", "/home/node")
        environment.set("NEW", "1")
        #expect(environment["HOME"] == "/home/node")
        #expect(environment["NEW"] == "1")
        #expect(environment["PATH"] == "/bin")
        #expect(environment["MISSING"] == nil)
        #expect(environment.dictionary == ["HOME": "/home/node", "PATH": "/bin", "NEW": "1"])
        #expect(base.values == ["HOME": "/root", "PATH": "/bin"])
        // Equal to the same entries as a plain dictionary, whatever the layers.
        #expect(environment == ProcessEnvironment(["HOME": "/home/node", "PATH": "/bin", "NEW": "1"]))
        #expect(environment.hashValue == ProcessEnvironment(["HOME": "/home/node", "PATH": "/bin", "NEW": "1"]).hashValue)
    }

    @Test func theEncodedVectorHasEveryEntryOnce() {
        let base = ProcessEnvironment.Base(["A": "1", "B": "2", "C": "", "Ü": "ü=x"])
        var environment = ProcessEnvironment(base: base)
        environment.set("B", "two")
        environment.set("D", "4")
        let entries: [String] = environment.withEnvp { envp in
            var entries: [String] = []
            var index = 0
            while let entry = envp[index] {
                entries.append(String(cString: entry))
                index += 1
            }
            return entries
        }
        #expect(entries.sorted() == ["A=1", "B=two", "C=", "D=4", "Ü=ü=x"])
    }

    @Test func aSpecsEnvironmentCanBeReadAndReplacedAsADictionary() {
        var environment = ProcessEnvironment(base: ProcessEnvironment.Base(["A": "1"]))
        environment.set("B", "2")
        var spec = ProcessSpec(executable: "/bin/true", processEnvironment: environment)
        #expect(spec.environment == ["A": "1", "B": "2"])
        spec.environment["A"] = nil
        #expect(spec.environment == ["B": "2"])
        #expect(spec.processEnvironment.base == nil)
        #expect(spec == ProcessSpec(executable: "/bin/true", environment: ["B": "2"]))
    }
}

@Suite struct EnvironmentBaseTests {
    @Test func everyNameOfTheBaseIsFoundAndOthersAreNot() {
        var values: [String: String] = [:]
        for index in 0..<500 { values["NAME_\(index)"] = "\(index)" }
        values[""] = "empty name"
        values["É"] = "non-ASCII"
        let base = ProcessEnvironment.Base(values)
        for name in values.keys {
            #expect(base.position(of: name).map { String(cString: base.pointers[$0]!) } == name + "=" + values[name]!)
        }
        for index in 500..<1000 {
            #expect(base.position(of: "NAME_\(index)") == nil)
        }
        #expect(base.position(of: "MOON_NODE") == nil)
    }
}
