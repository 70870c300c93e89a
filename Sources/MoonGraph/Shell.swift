/// The shell that runs shell-form `run:` scripts.
public enum Shell: String, Sendable, Hashable, CaseIterable, Codable {
    case sh, bash

    /// The argv that runs `script` with this shell: `-e` so the first failing
    /// command fails the node, and for bash `pipefail` so a failing pipeline does too.
    public func arguments(for script: String) -> [String] {
        switch self {
        case .sh: return ["sh", "-e", "-c", script]
        case .bash: return ["bash", "-e", "-o", "pipefail", "-c", script]
        }
    }
}
