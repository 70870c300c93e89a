import ArgumentParser
import MoonGraph
import MoonReport
import MoonSession

extension GraphRenderer.Format: ExpressibleByArgument {}

/// `moon graph [FILE] [NODE...] --format text|dot|mermaid|json`: the DAG.
struct GraphCommand: SelectingCommand {
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print the graph: as text, Graphviz dot, Mermaid or JSON.",
        discussion: "moon graph moon.yaml --format dot | dot -Tsvg > graph.svg. A for-each or matrix node that needs a whole one "
            + "goes through one point, 'all of NAME'.")

    @Argument(help: ArgumentHelp("The graph file, then nodes to show with their needs (default: all), each followed by its "
                                 + "NAME=VALUE parameters. After --, words for the last node's ${{ args }}.", valueName: "file-or-node"),
              completion: .custom(NameCompletion.complete))
    var arguments: [String] = []

    @Option(name: .shortAndLong, help: "text, dot, mermaid or json.")
    var format: GraphRenderer.Format = .text

    @Flag(name: .long, help: "One node per for-each or matrix node, with its number of instances (as snakemake --rulegraph).")
    var templates = false

    @OptionGroup var options: PlanOptions

    func run(passthrough: [String]) throws {
        let plan = try options.plan(arguments, passthrough: passthrough)
        let text = templates ? GraphRenderer.templates(plan, format: format) : GraphRenderer.render(plan, format: format)
        Console.write(text.hasSuffix("\n") ? text : text + "\n")
    }
}
