import ArgumentParser

/// `--set KEY=VALUE` (repeatable): a var of the file overridden, or added.
/// `run`, `graph`, `status` and `export` share it, so the commands that read
/// a graph without running it show the graph that run would.
struct VarOverrides: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp("Override a var of the file.", valueName: "KEY=VALUE"))
    var assignments: [String] = []

    func values() throws -> [String: String] { try Self.parse(assignments) }

    /// The assignments as a dictionary; of two for one name, the later wins.
    static func parse(_ assignments: [String]) throws -> [String: String] {
        var result: [String: String] = [:]
        for assignment in assignments {
            guard let eq = assignment.firstIndex(of: "="), eq != assignment.startIndex else {
                throw ValidationError("--set expects KEY=VALUE, got '\(assignment)'")
            }
            result[String(assignment[..<eq])] = String(assignment[assignment.index(after: eq)...])
        }
        return result
    }
}
