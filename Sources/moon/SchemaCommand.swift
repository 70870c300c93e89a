import ArgumentParser
import MoonGraph
import MoonSession

/// `moon schema`: the JSON Schema of graph files, for editors (the same text
/// as schema/moon-graph.schema.json).
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the JSON Schema (2020-12) of graph files, for editors.")

    func run() throws {
        Console.write(GraphSchema.json())
    }
}
