import ArgumentParser
import MoonGraph
import MoonSession

/// `--exclude PATTERN` (repeatable): nodes taken out of the selection.
/// `run`, `graph`, `status` and `export` share it, as they share the
/// `[FILE] [NODE...]` they select from.
struct SelectionOptions: ParsableArguments {
    @Option(name: .customLong("exclude"),
            help: ArgumentHelp("Leave out the nodes PATTERN matches: a name or a quoted glob such as 'test[*]' "
                + "(repeatable). A node that a selected node needs still runs.", valueName: "pattern"))
    var exclude: [String] = []
}

extension GraphFileLocator {
    /// `load` with the command line's `--exclude`; a word close to a subcommand's name gets a hint.
    static func load(_ arguments: [String], passthrough: [String] = [], overrides: [String: String], selection: SelectionOptions,
                     requireAll: Bool) throws -> (file: GraphFile, plan: Plan) {
        try load(arguments, passthrough: passthrough, overrides: overrides, exclude: selection.exclude, requireAll: requireAll,
                 commands: Moon.commandNames)
    }
}
