/// What a node does: exactly one of `run` (shell or exec form) or `uses`.
public enum NodeAction: Sendable, Hashable {
    /// `run: SCRIPT` — run by the node's `shell` (`sh -e -c SCRIPT`).
    case shell(String)
    /// `run: [PROGRAM, ARG...]` — spawned directly, no shell (never empty).
    case exec([String])
    /// `uses: NAME` with its validated `with:` arguments.
    case builtin(String, with: [String: BuiltinArgument])

    /// `shell`, `exec` or `builtin`, as listings and JSON call it.
    public var kind: String {
        switch self {
        case .shell: return "shell"
        case .exec: return "exec"
        case .builtin: return "builtin"
        }
    }

    /// One line a person can read: the script (first line, `…` if more),
    /// the argv quoted as a shell would need, or `uses NAME (k: v, …)`.
    public var summary: String {
        switch self {
        case .shell(let script):
            let lines = script.split(separator: "\n", omittingEmptySubsequences: true)
            guard let first = lines.first else { return "" }
            return lines.count > 1 ? "\(first) …" : String(first)
        case .exec(let argv):
            return argv.map(ShellQuoting.quote).joined(separator: " ")
        case .builtin(let name, let with):
            guard !with.isEmpty else { return "uses \(name)" }
            let args = with.keys.sorted().map { "\($0): \(with[$0]!.text)" }
            return "uses \(name) (\(args.joined(separator: ", ")))"
        }
    }
}

/// Quoting for display only (never for execution: exec-form argv is passed as is).
enum ShellQuoting {
    static func quote(_ word: String) -> String {
        if !word.isEmpty, word.unicodeScalars.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacing("'", with: "'\\''") + "'"
    }

    private static let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@%".unicodeScalars)
}
