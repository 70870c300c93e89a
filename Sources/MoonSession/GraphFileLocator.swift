import Foundation
import MoonCommand
import MoonGraph
import MoonSystem
import Synchronization

/// Finds the graph file on the command line, one rule for every command
/// that takes `[FILE] [NODE...]` (run, status, graph and export). FILE is
/// optional; without it, moon reads the nearest moon.yaml or moon.yml: in
/// the current directory or the closest directory above it, as git, go-task
/// and just find theirs (`discovered()`). The first argument is FILE when
/// 1. it ends in `.yaml` or `.yml`, or has a `/` before any `[` (`./lua`,
///    `sub/graph`): a path, never a node name (node names have no `/`; an
///    instance's label may, inside its brackets: `obj[src/lapi.c]`);
/// 2. else, when a graph file is found here or above, it is a NODE of that
///    file, even when a file of that name exists: a build graph names its
///    nodes after their outputs (`moon run lua` beside the built `lua`), and
///    the file it meant is the one the graph describes;
/// 3. else it is FILE when a file of that name exists.
/// Nothing is read to decide. A node name that is not in the graph but names a file gets a
/// hint (`plan(for:targets:color:)`).
package enum GraphFileLocator {
    package static let defaultNames = ["moon.yaml", "moon.yml"]

    /// Whether `argument`, first on the command line, is the graph file.
    package static func isFileArgument(_ argument: String) throws -> Bool {
        // An instance of a for-each over paths has its `/`s inside brackets (`obj[src/lapi.c]`).
        let beforeBrackets = argument.prefix { $0 != "[" }
        if argument.hasSuffix(".yaml") || argument.hasSuffix(".yml") || beforeBrackets.contains("/") { return true }
        if try discovered() != nil { return false }
        return isFile(argument)
    }

    /// Splits `[FILE] [NODE...]` into the file path and the node names.
    package static func split(_ arguments: [String]) throws -> (file: String, rest: [String]) {
        if let first = arguments.first, try isFileArgument(first) {
            return (first, Array(arguments.dropFirst()))
        }
        return (try defaultFile(), arguments)
    }

    package static func defaultFile() throws -> String {
        if let path = try discovered() { return path }
        throw CLIError("no graph file given and no moon.yaml or moon.yml in \(FileManager.default.currentDirectoryPath) or a directory above it",
                       help: "pass a file (`moon run path/to/graph.yaml`) or create moon.yaml here")
    }

    /// The nearest moon.yaml or moon.yml, as a path from the current
    /// directory (`moon.yaml`, `../../moon.yml`), so node directories, the
    /// state store and messages stay relative to the file as for any FILE
    /// given. The search stops below a directory owned by another user (as
    /// go-task's does) or writable by others (sticky or not, as /tmp): a
    /// moon.yaml left in a shared directory is never run by someone working
    /// beneath it. A file found that another user owns or can change is an
    /// error that says how to read it on purpose (`DiscoveryTrust`).
    package static func discovered() throws(CLIError) -> String? {
        // System calls, not FileManager: its first use costs a start more than the search.
        // An unreadable working directory still has its own moon.yaml looked for (relative paths).
        var directory = LinuxCalls.workingDirectory() ?? ""
        let user = geteuid()
        var up = ""
        while true {
            if let name = defaultNames.first(where: { exists(up + $0) }) {
                let path = up + name
                if let problem = DiscoveryTrust.problem(path) {
                    throw CLIError("moon found \(path) by searching upward and does not read it: \(problem)",
                                   help: "moon reads a graph file it finds only when you (or root) own it and no other user can change "
                                       + "it or its directory; to read this one on purpose, name it: moon run \(path) (or moon check \(path))")
                }
                discoveredPaths.withLock { _ = $0.insert(path) }
                return path
            }
            guard directory != "/", let slash = directory.lastIndex(of: "/") else { return nil }
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
            var info = stat()
            guard stat(directory, &info) == 0, info.st_uid == user, !DiscoveryTrust.writableByOthers(info) else { return nil }
            up += "../"
        }
    }

    /// The graph files `discovered()` returned: their includes and dotenv
    /// files are read only when they pass `DiscoveryTrust` too.
    private static let discoveredPaths = Mutex<Set<String>>([])

    /// Whether `path` is a graph file moon found by searching, not one named on the command line.
    package static func wasDiscovered(_ path: String) -> Bool {
        discoveredPaths.withLock { $0.contains(path) }
    }

    /// Whether something is at `path` (a link is followed, as for a file read).
    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` is there and no directory (a link is followed).
    private static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR
    }

    /// For a file given as a path that is no valid graph (`moon run ./lua`,
    /// the built binary): when the default file here has a node of that
    /// name, how to select it. Read only on this error path.
    package static func nodeHint(forInvalidFile path: String) -> String? {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard !name.hasSuffix(".yaml"), !name.hasSuffix(".yml"), Node.isValidName(name),
              let defaultFile = (try? discovered()) ?? nil, defaultFile != path,
              let parsed = try? GraphFile.parse(defaultFile),
              parsed.result.graph?.nodes.contains(where: { $0.name == name }) == true else { return nil }
        return "help: \(defaultFile) here has a node '\(name)'; to select it, give its name without a path: "
            + "moon run \(name) (or moon run \(defaultFile) \(name))"
    }

    /// `[FILE] [NODE...]` with `overrides`: the file loaded (diagnostics
    /// printed) and the plan of the nodes selected (`NodeSelection`).
    package static func load(_ arguments: [String], passthrough: [String] = [], overrides: [String: String], exclude: [String],
                     requireAll: Bool, commands: [String]) throws -> (file: GraphFile, plan: Plan) {
        let (path, words) = try split(arguments)
        let file = try GraphFile.load(path, overrides: overrides)
        return (file, try plan(for: file, words: words, passthrough: passthrough, exclude: exclude, requireAll: requireAll,
                               color: Terminal.stderrColor, commands: commands))
    }

    /// The plan of the nodes `words` and `selection` select in `file`, each
    /// given its parameters and the `passthrough` words (`NodeSelection`);
    /// prints its errors and throws `PrintedErrors` when a word
    /// selects nothing or a parameter does not fit, and notes each excluded
    /// node that runs anyway. `requireAll`: a missing required parameter is
    /// an error (for the commands that run or export commands). An unknown
    /// name that names a file here was read as a node by rule 2: the error
    /// says how to use the file instead; one close to a name of `commands`
    /// (moon's subcommands) says how to run that.
    package static func plan(for file: GraphFile, words: [String], passthrough: [String] = [], exclude: [String],
                     requireAll: Bool, weights: [Int]? = nil, color: Bool, commands: [String]) throws -> Plan {
        do {
            let selection = try NodeSelection.make(names: words, passthrough: passthrough, exclude: exclude, graph: file.graph)
            var plan = try Plan.make(graph: file.graph, targets: selection.targets, weights: weights)
            if selection.needsBinding(file.graph) {
                let graph = try selection.bound(file.graph, plan: plan, requireAll: requireAll)
                plan = try Plan.make(graph: graph, targets: selection.targets, weights: weights)
            }
            for note in selection.notes(for: plan) { Console.note(note) }
            return plan
        } catch {
            var items = error.items
            if let first = words.first, let index = items.firstIndex(where: { $0.message.hasPrefix("unknown node '\(first)'") }),
               !first.contains("/"), isFile(first) {
                items[index].notes.append("help: '\(first)' is also a file here; a name without a '/' is a node of "
                    + "\(file.source.path), so to read the file as the graph, write ./\(first)")
            }
            // `moon chekc` is read as `moon run chekc`: a word close to a
            // subcommand's name is more likely a typo of it than of a node.
            if let first = words.first, let index = items.firstIndex(where: { $0.message.hasPrefix("unknown node '\(first)'") }),
               let command = Suggestion.closest(to: first, in: commands) {
                items[index].notes.append("help: moon's subcommand is '\(command)': moon \(command) ...")
            }
            GraphFile.print(items, source: file.source, color: color)
            throw PrintedErrors()
        }
    }
}

/// A problem moon reports as `moon: error: ...` (`Moon.main` prints it):
/// exit code 2 for the command line or a file it names, 1 for a run that
/// cannot start.
package struct CLIError: Error, CustomStringConvertible {
    package var message: String
    package var help: String?
    package var exitCode: Int32
    package init(_ message: String, help: String? = nil, exitCode: Int32 = PrintedErrors.invalidInput) {
        self.message = message
        self.help = help
        self.exitCode = exitCode
    }
    package var description: String {
        help.map { "\(message)\nhelp: \($0)" } ?? message
    }
}

/// Errors moon has printed already (a graph file's diagnostics): it exits
/// with `exitCode` and says nothing more.
package struct PrintedErrors: Error {
    /// The graph file, a recording or the command line is invalid (moon's
    /// contract: 2, as most Unix tools).
    package static let invalidInput: Int32 = 2

    package var exitCode: Int32 = invalidInput

    package init() {}
}
