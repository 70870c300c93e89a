/// What a node holds while it runs: memory, and slots of `-j` and of its queue.
public struct ResourceNeed: Sendable, Equatable {
    public var memory: Int64
    public var slots: Int
    /// Index into the budget's queue widths.
    public var queue: Int

    public init(memory: Int64 = 0, slots: Int = 1, queue: Int = 0) {
        self.memory = memory
        self.slots = slots
        self.queue = queue
    }
}

/// The run's admission by memory and slots (`resources:`, `--memory`, `-j`,
/// queue widths), as a value: the runner asks `fits` before it starts a
/// node, `take`s when it starts and `give`s when it ends.
///
/// Two rules keep it from deadlocking or starving:
/// - A need larger than a whole limit fits when nothing holds any of that
///   limit: the node runs alone (by that measure) rather than never.
/// - While the best ready node waits (it does not fit), what ending nodes
///   free is kept for it (`reserved`): nodes behind it may start only in
///   what was free besides (`fitsBeside`). So a stream of small nodes cannot
///   hold a large one back: it starts at the latest when what ran as it
///   began to wait has ended.
public struct ResourceBudget: Sendable, Equatable {
    /// Bytes; `Int64.max`: no memory limit.
    public let memory: Int64
    /// `-j`; `Int.max`: none.
    public let jobs: Int
    /// Each queue's width, in slots.
    public let queues: [Int]
    public private(set) var memoryInUse: Int64 = 0
    public private(set) var slotsInUse = 0
    public private(set) var queueSlotsInUse: [Int]
    /// Kept for the waiting node: memory, slots, and slots of its queue (`reservedQueue`).
    public private(set) var reservedMemory: Int64 = 0
    public private(set) var reservedSlots = 0
    public private(set) var reservedQueueSlots = 0
    public private(set) var reservedQueue: Int?

    public init(memory: Int64 = .max, jobs: Int = .max, queues: [Int]) {
        self.memory = memory
        self.jobs = jobs
        self.queues = queues
        queueSlotsInUse = Array(repeating: 0, count: queues.count)
    }

    /// Whether `need` can start beside what runs now (the reserve is for it).
    public func fits(_ need: ResourceNeed) -> Bool {
        Self.fits(need.memory, inUse: memoryInUse, kept: 0, limit: memory)
            && Self.fits(Int64(need.slots), inUse: Int64(slotsInUse), kept: 0, limit: Int64(jobs))
            && Self.fits(Int64(need.slots), inUse: Int64(queueSlotsInUse[need.queue]), kept: 0, limit: Int64(queues[need.queue]))
    }

    /// Whether `need` can start beside what runs and what is kept for the
    /// waiting node, without the run-alone exception (it would delay it).
    public func fitsBeside(_ need: ResourceNeed) -> Bool {
        let keptInQueue = reservedQueue == need.queue ? reservedQueueSlots : 0
        return Self.fitsStrictly(need.memory, inUse: memoryInUse, kept: reservedMemory, limit: memory)
            && Self.fitsStrictly(Int64(need.slots), inUse: Int64(slotsInUse), kept: Int64(reservedSlots), limit: Int64(jobs))
            && Self.fitsStrictly(Int64(need.slots), inUse: Int64(queueSlotsInUse[need.queue]), kept: Int64(keptInQueue),
                                 limit: Int64(queues[need.queue]))
    }

    /// Whether `need` is larger than a whole limit (it runs alone).
    public func exceedsMemory(_ need: ResourceNeed) -> Bool { need.memory > memory }

    public mutating func take(_ need: ResourceNeed) {
        memoryInUse += need.memory
        slotsInUse += need.slots
        queueSlotsInUse[need.queue] += need.slots
    }

    /// A node ended; what it held goes back, and first to `waiting` (the
    /// best ready node, which did not fit), up to what it needs.
    public mutating func give(_ need: ResourceNeed, waiting: ResourceNeed? = nil) {
        memoryInUse -= need.memory
        slotsInUse -= need.slots
        queueSlotsInUse[need.queue] -= need.slots
        guard let waiting else { return }
        reservedMemory = min(reservedMemory + need.memory, min(waiting.memory, memory))
        reservedSlots = min(reservedSlots + need.slots, min(waiting.slots, jobs))
        if reservedQueue != waiting.queue {
            reservedQueue = waiting.queue
            reservedQueueSlots = 0
        }
        if need.queue == waiting.queue {
            reservedQueueSlots = min(reservedQueueSlots + need.slots, min(waiting.slots, queues[waiting.queue]))
        }
    }

    /// The waiting node started (or none waits): nothing is kept any more.
    public mutating func clearReserve() {
        reservedMemory = 0
        reservedSlots = 0
        reservedQueueSlots = 0
        reservedQueue = nil
    }

    private static func fits(_ need: Int64, inUse: Int64, kept: Int64, limit: Int64) -> Bool {
        need == 0 || inUse == 0 || fitsStrictly(need, inUse: inUse, kept: kept, limit: limit)
    }

    private static func fitsStrictly(_ need: Int64, inUse: Int64, kept: Int64, limit: Int64) -> Bool {
        need == 0 || (inUse <= limit && kept <= limit - inUse && need <= limit - inUse - kept)
    }
}
