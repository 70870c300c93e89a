import Foundation

/// Finds the graph file on the command line: FILE is optional, and without it
/// moon looks for `moon.yaml` or `moon.yml` in the current directory. The first
/// argument is taken as FILE when it ends in `.yaml`/`.yml` or names an
/// existing file (DESIGN.md §4); the rest are node names.
enum GraphFileLocator {
    static let defaultNames = ["moon.yaml", "moon.yml"]

    static func isFileArgument(_ argument: String) -> Bool {
        if argument.hasSuffix(".yaml") || argument.hasSuffix(".yml") { return true }
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// Splits `[FILE] [NODE...]` into the file path and the node names.
    static func split(_ arguments: [String]) throws -> (file: String, rest: [String]) {
        if let first = arguments.first, isFileArgument(first) {
            return (first, Array(arguments.dropFirst()))
        }
        return (try defaultFile(), arguments)
    }

    static func defaultFile() throws -> String {
        for name in defaultNames where FileManager.default.fileExists(atPath: name) {
            return name
        }
        throw CLIError("no graph file given and no moon.yaml or moon.yml in \(FileManager.default.currentDirectoryPath)",
                       help: "pass a file (`moon run path/to/graph.yaml`) or create moon.yaml here")
    }
}

/// A command-line problem: printed as `moon: error: ...`, exit code 2.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    var help: String?
    init(_ message: String, help: String? = nil) {
        self.message = message
        self.help = help
    }
    var description: String {
        help.map { "\(message)\nhelp: \($0)" } ?? message
    }
}
