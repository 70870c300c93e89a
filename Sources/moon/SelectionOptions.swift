import ArgumentParser

/// `--exclude PATTERN` (repeatable): nodes taken out of the selection.
/// `run`, `graph`, `status` and `export` share it, as they share the
/// `[FILE] [NODE...]` they select from.
struct SelectionOptions: ParsableArguments {
    @Option(name: .customLong("exclude"),
            help: ArgumentHelp("Leave out the nodes PATTERN matches: a name or a quoted glob such as 'test[*]' "
                + "(repeatable). A node that a selected node needs still runs.", valueName: "pattern"))
    var exclude: [String] = []
}
