import MoonDocument

/// A named execution queue: how many nodes it runs at once and where.
public struct QueueSpec: Sendable, Hashable, Codable {
    public enum Concurrency: Sendable, Hashable, Codable {
        /// As many as the machine has CPUs.
        case auto
        /// At most this many (always positive; 1 makes a serial queue).
        case fixed(Int)

        /// The limit on a machine with `cpus` processors.
        public func limit(cpus: Int) -> Int {
            switch self {
            case .auto: return max(1, cpus)
            case .fixed(let n): return n
            }
        }
    }

    public enum Executor: Sendable, Hashable, Codable {
        case local
        case slurm(SlurmOptions)

        public var name: String {
            switch self {
            case .local: return "local"
            case .slurm: return "slurm"
            }
        }
    }

    /// The queue every node runs on unless it (or `defaults`) names another.
    public static let defaultName = "default"

    public var name: String
    public var concurrency: Concurrency
    public var executor: Executor
    /// Where the queue is declared; nil for the implicit `default` queue.
    public var span: SourceSpan?

    public init(name: String, concurrency: Concurrency = .auto, executor: Executor = .local, span: SourceSpan? = nil) {
        self.name = name
        self.concurrency = concurrency
        self.executor = executor
        self.span = span
    }

    /// The queue's Slurm options, or nil when it runs locally.
    public var slurm: SlurmOptions? {
        if case .slurm(let options) = executor { return options }
        return nil
    }
}
