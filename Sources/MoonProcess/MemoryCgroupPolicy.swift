import Glibc

/// Which nodes' processes start in a memory cgroup of their own
/// (`ProcessSpec.memoryCgroup`), from `MOON_CGROUP`: by default the nodes
/// that declare memory (`resources: {memory}`), where an exact peak and an
/// OOM verdict of their own matter and a cgroup's cost (about 0.2 ms per
/// process, a mkdir and an rmdir) is small beside their work; `all` (or
/// `1`) every node; `off` (or `0`) none.
public enum MemoryCgroupPolicy: Sendable, Equatable {
    case declared
    case all
    case off

    public init(_ value: String?) {
        switch value {
        case "all", "1": self = .all
        case "off", "0": self = .off
        default: self = .declared
        }
    }

    /// moon's `MOON_CGROUP`, read once.
    public static let current = MemoryCgroupPolicy(getenv("MOON_CGROUP").map { String(cString: $0) })

    /// Whether a node's process gets a cgroup.
    public func applies(declaresMemory: Bool) -> Bool {
        switch self {
        case .declared: return declaresMemory
        case .all: return true
        case .off: return false
        }
    }
}
