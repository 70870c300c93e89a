import MoonDocument

/// `resources:` of a node (or of `defaults:`): what it needs to start.
/// `memory` is admitted against the run's memory budget (`--memory`);
/// `cpus` is how many slots it takes, of `-j` and of its queue's
/// concurrency alike (a queue's width counts slots, as `-j` does).
public struct ResourceSpec: Sendable, Hashable, Codable {
    /// Bytes; nil: not declared (a learned value may stand in).
    public var memory: Int64?
    /// Slots; nil: one.
    public var cpus: Int?

    public init(memory: Int64? = nil, cpus: Int? = nil) {
        self.memory = memory
        self.cpus = cpus
    }

    public var isEmpty: Bool { memory == nil && cpus == nil }

    /// This spec with each key it leaves out taken from `defaults`.
    public func over(_ defaults: ResourceSpec) -> ResourceSpec {
        ResourceSpec(memory: memory ?? defaults.memory, cpus: cpus ?? defaults.cpus)
    }

    /// `{memory: 2G, cpus: 2}`; every bad value is an error at its place.
    static func decode(_ node: YAMLNode, _ values: inout ValueDecoding) -> ResourceSpec? {
        if node.isNull { return nil }
        guard let pairs = values.mapping(node, expecting: "a mapping of resources like {memory: 2G, cpus: 2}") else { return nil }
        let keys = values.checkKeys(pairs, allowed: GraphKeys.resources, context: "in resources", synonyms: GraphKeys.resourceSynonyms)
        var spec = ResourceSpec()
        if let m = keys["memory"], !m.value.isNull {
            // A bare number is refused: bytes or megabytes (Slurm's `mem`) would both be a guess.
            if values.integer(m.value) == nil, let text = m.value.scalar, let bytes = ByteSize.parse(text), bytes > 0,
               text.contains(where: \.isLetter) {
                spec.memory = bytes
            } else {
                let slip = m.value.scalar.flatMap(ByteSize.slip).map { " (\($0))" } ?? ""
                values.error("invalid memory \(values.describe(m.value))\(slip); write a size with its unit, like 512M, 2G or 1.5GiB",
                             at: m.value.span)
            }
        }
        if let c = keys["cpus"], !c.value.isNull {
            if let n = values.integer(c.value), (1...4096).contains(n) {
                spec.cpus = n
            } else {
                values.error("invalid cpus \(values.describe(c.value)); write how many of the run's slots (-j) the node takes, an integer from 1 to 4096",
                             at: c.value.span)
            }
        }
        return spec
    }
}
