import ArgumentParser
import MoonGraph
import MoonSession

/// `--set` and `--exclude`: how `graph` and `status` read the plan of
/// `[FILE] [NODE...]`, as a run with the same words would.
struct PlanOptions: ParsableArguments {
    @OptionGroup var vars: VarOverrides

    @OptionGroup var selection: SelectionOptions

    /// The plan `arguments` select (a missing parameter is no error: nothing runs).
    func plan(_ arguments: [String], passthrough: [String]) throws -> Plan {
        try GraphFileLocator.load(arguments, passthrough: passthrough, overrides: try vars.values(), selection: selection,
                                  requireAll: false).plan
    }
}
