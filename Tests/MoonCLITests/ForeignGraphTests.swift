import Foundation
import Testing

/// moonrepo's `moon` (moonrepo.dev) reads `moon.yml` and keeps `.moon/`
/// too: its files are named as such in one line, its `.moon/` is never
/// written into, and `--version` says which moon this is.
@Suite struct ForeignGraphTests {
    static let moonrepoProject = """
        $schema: 'https://moonrepo.dev/schemas/project.json'
        language: 'typescript'
        dependsOn: ['utils']
        fileGroups:
          sources: ['src/**/*']
        tasks:
          build:
            command: 'vite build'
            inputs: ['@group(sources)']
        """

    @Test func aMoonrepoProjectFileIsNamedAsSuchInOneLine() throws {
        let moon = try Moon(graph: Self.moonrepoProject, file: "moon.yml")
        for arguments in [["run"], ["check"], ["run", "moon.yml", "build"], ["list"]] {
            let result = try moon.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("moon.yml looks like a moonrepo (moonrepo.dev) project file, not a moon task graph"), "\(result.stderr)")
            #expect(!result.stderr.contains("unknown key"), "\(result.stderr)")
        }
        // Found by searching upward from a subdirectory, too.
        try moon.makeDirectory("src")
        let below = try moon.run(["run"], in: "src")
        #expect(below.status == 2)
        #expect(below.stderr.contains("moonrepo"), "\(below.stderr)")
    }

    @Test func eachKindOfEvidenceIsEnoughAndVersionOneIsMoonsOwn() throws {
        let moon = try Moon(graph: "tasks:\n  build:\n    command: make\n", file: "graph.yml")
        let tasks = try moon.run(["check", "graph.yml"])
        #expect(tasks.status == 2 && tasks.stderr.contains("moonrepo"), "\(tasks.stderr)")
        try moon.write("workspace.yml", "projects:\n  - 'apps/*'\nvcs:\n  manager: git\n")
        let workspace = try moon.run(["check", "workspace.yml"])
        #expect(workspace.stderr.contains("workspace.yml looks like a moonrepo (moonrepo.dev) workspace file"), "\(workspace.stderr)")
        // A file with `version:` is moon's own: its unknown keys are listed as ever.
        try moon.write("mine.yml", "version: 1\nlanguage: rust\nnodes:\n  a: { run: 'true' }\n")
        let mine = try moon.run(["check", "mine.yml"])
        #expect(mine.status == 2)
        #expect(!mine.stderr.contains("moonrepo"), "\(mine.stderr)")
        // go-task's tasks (cmds) are not moonrepo's.
        try moon.write("Taskfile.yml", "tasks:\n  build:\n    cmds: [make]\n")
        let gotask = try moon.run(["check", "Taskfile.yml"])
        #expect(!gotask.stderr.contains("moonrepo"), "\(gotask.stderr)")
    }

    @Test func aMoonrepoWorkspaceDirectoryIsNeverWrittenInto() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              build:
                sources: [in.txt]
                run: touch built
            """, file: "graph.yml")
        try moon.write("in.txt", "x")
        try moon.makeDirectory(".moon")
        try moon.write(".moon/workspace.yml", "projects: ['apps/*']\n")
        let before = try FileManager.default.contentsOfDirectory(atPath: moon.path(".moon")).sorted()
        let result = try moon.run(["run", "graph.yml"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(".moon/workspace.yml belongs to moonrepo's moon"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: moon.path(".moon")).sorted() == before)
        #expect(!FileManager.default.fileExists(atPath: moon.path("built")))
        // toolchain.yml alone is moonrepo's too.
        try FileManager.default.removeItem(atPath: moon.path(".moon/workspace.yml"))
        try moon.write(".moon/toolchain.yml", "node:\n  version: '20'\n")
        let toolchain = try moon.run(["run", "graph.yml"])
        #expect(toolchain.status == 2 && toolchain.stderr.contains("toolchain.yml"), "\(toolchain.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: moon.path(".moon")) == ["toolchain.yml"])
        // The dry run writes nothing anyway and still plans.
        #expect(try moon.run(["run", "-n", "graph.yml"]).status == 0)
    }

    @Test func versionSaysWhichMoonThisIs() throws {
        let moon = try Moon()
        let result = try moon.run(["--version"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stdout)")
        #expect(result.stdout.hasPrefix("moon 0."), "\(result.stdout)")
        #expect(result.stdout.contains("not moonrepo"), "\(result.stdout)")
    }
}
