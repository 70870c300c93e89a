import ArgumentParser
import Foundation
import MoonGraph
import MoonRun
import MoonSession
import MoonState

/// `moon export --format sbatch [FILE] [NODE...]`: the graph as a shell
/// script that submits it to Slurm (docs/slurm.md).
struct ExportCommand: SelectingCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case sbatch
    }

    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the graph as a script for another engine: sbatch (Slurm).",
        discussion: """
        moon export --format sbatch moon.yaml -o submit.sh && sh submit.sh

        The script submits one batch job per node with sbatch --parsable (a \
        for-each or matrix fan-out as one job array, --array=0-N), each held \
        with --dependency=afterok:... until its needs have ended, so the \
        graph runs on the cluster without moon. Values passed between nodes \
        (needs.X.outputs) and built-ins other than sleep, echo, fail, \
        write-file and exists cannot be exported: moon says which and exits 2.
        """)

    @Argument(help: ArgumentHelp("The graph file, then nodes to export with their needs (default: all), each followed by its "
                                 + "NAME=VALUE parameters. After --, words for the last node's ${{ args }}.", valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    @Option(name: .shortAndLong, help: "The script's format: sbatch.")
    var format: Format = .sbatch

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the script to this file (made executable) instead of stdout; "
                                                    + "a device or a FIFO is written into, never replaced.", valueName: "path"))
    var output: String?

    @OptionGroup var vars: VarOverrides

    @OptionGroup var selection: SelectionOptions

    func run(passthrough: [String]) throws {
        let (_, plan) = try GraphFileLocator.load(arguments, passthrough: passthrough, overrides: try vars.values(),
                                                  selection: selection, requireAll: true)
        // What recent runs used: `--mem` and `--time` for nodes that declare none.
        let store = StateStore.open(graphDirectory: plan.graph.directory, create: false).store
        let learned = LearnedResources(graph: plan.graph, store: store)
        let script: String
        do {
            script = try SlurmExport.script(for: plan, learned: SlurmExport.Learned(memory: learned.memory, time: learned.time))
        } catch let refusals as SlurmExport.Refusals {
            for item in refusals.items { Console.error("\(item)") }
            throw ExitCode.invalidInput
        }
        guard let output else {
            // The script as it is for a file or a pipe (its bytes are the
            // commands); on a terminal, read by a person, as every text moon prints.
            if isatty(1) == 1 { Console.write(script) } else { Console.standardOutput.write(script) }
            return
        }
        try OutputPath.write(script, to: output, permissions: 0o755)
    }
}
