import MoonDocument

/// Files of moonrepo's `moon` (moonrepo.dev), a Rust monorepo tool that
/// also reads `moon.yml` and keeps `.moon/workspace.yml` and
/// `.moon/toolchain.yml`: told apart from a moon task graph so the user
/// gets one line naming the other tool, not a list of unknown keys.
public enum ForeignGraphFile {
    /// Keys of moonrepo's project file (`moon.yml`) and workspace files that
    /// a moon graph never has. (`tasks` alone is go-task's too: see `isMoonrepo`.)
    static let moonrepoKeys: Set<String> = [
        "fileGroups", "dependsOn", "language", "layer", "stack", "platform", "owners", "toolchain", "workspace", "project",
        "projects", "vcs", "runner", "pipeline", "generator", "hasher", "constraints", "notifier", "versionConstraint",
        "codeowners", "telemetry", "experiments",
    ]

    /// The one-line message for a file of moonrepo's, or nil for anything
    /// else. A file with `version:` is moon's own, whatever else it has.
    public static func moonrepoMessage(_ root: YAMLNode, path: String) -> String? {
        guard let evidence = moonrepoEvidence(root) else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let kind = name.hasPrefix("workspace.") || name.hasPrefix("toolchain.") ? "workspace" : "project"
        return "\(name) looks like a moonrepo (moonrepo.dev) \(kind) file, not a moon task graph: it has \(evidence) and no 'version: 1'; "
            + "moonrepo's moon is another tool (this moon reads task graphs, see moon.yaml(5))"
    }

    /// What marks `root` as moonrepo's: a key of its, or a `$schema` of its
    /// (`https://moonrepo.dev/schemas/project.json`), or `tasks` whose
    /// entries have a `command` or `script` (go-task's have `cmds`).
    static func moonrepoEvidence(_ root: YAMLNode) -> String? {
        guard let pairs = root.pairs else { return nil }
        var keys: [String: YAMLNode] = [:]
        for pair in pairs {
            if let key = pair.key.scalar { keys[key] = pair.value }
        }
        if keys["version"] != nil { return nil }
        if let schema = keys["$schema"]?.scalar, schema.lowercased().contains("moonrepo") { return "a moonrepo '$schema'" }
        if let key = keys.keys.sorted().first(where: moonrepoKeys.contains) { return "'\(key)'" }
        if let tasks = keys["tasks"]?.pairs,
           tasks.contains(where: { task in task.value.pairs?.contains { ["command", "script"].contains($0.key.scalar ?? "") } == true }) {
            return "'tasks' with a 'command'"
        }
        return nil
    }

    /// moonrepo's workspace files in a `.moon` directory: moon writes
    /// nothing into a directory that holds one (`StateStore`).
    public static let moonrepoWorkspaceFiles = ["workspace.yml", "workspace.yaml", "toolchain.yml", "toolchain.yaml"]
}
