import ArgumentParser
import Foundation
import MoonGraph
import MoonSession

/// `moon check FILE...`: validates each file and prints every problem.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate graph files and print every error with its location.",
        discussion: """
        Exits with 0 when every file is valid, 2 otherwise. A graph file is a file or a pipe \
        (`<(...)`, /dev/stdin) of at most 64 MiB; a device is refused, and so is a FIFO nobody writes to.
        """)

    @Argument(help: "Graph files (default: the nearest moon.yaml or moon.yml, here or above).")
    var files: [String] = []

    @Flag(name: .shortAndLong, help: "Print nothing for valid files.")
    var quiet = false

    func run() throws {
        let paths = files.isEmpty ? [try GraphFileLocator.defaultFile()] : files
        var invalid = 0
        for path in paths {
            do {
                let file = try GraphFile.load(path)
                if !quiet {
                    let n = file.graph.nodes.count
                    Console.line("\(path): ok (\(n) node\(n == 1 ? "" : "s"))")
                }
            } catch let error as CLIError {
                Console.error("\(error)")
                invalid += 1
            } catch {
                invalid += 1
            }
        }
        if invalid > 0 { throw ExitCode.invalidInput }
    }
}
