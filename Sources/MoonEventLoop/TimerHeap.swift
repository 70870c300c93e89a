import HeapModule

/// The event loop's timers, earliest deadline first, first come first
/// served among equal deadlines.
struct TimerHeap {
    private struct Entry: Comparable {
        let deadline: UInt64
        let order: UInt64
        let action: () -> Void

        static func < (a: Entry, b: Entry) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.order < b.order
        }

        static func == (a: Entry, b: Entry) -> Bool {
            a.deadline == b.deadline && a.order == b.order
        }
    }

    private var heap = Heap<Entry>()
    private var counter: UInt64 = 0

    var nextDeadline: UInt64? { heap.min?.deadline }

    mutating func push(_ deadline: UInt64, _ action: @escaping () -> Void) {
        counter &+= 1
        heap.insert(Entry(deadline: deadline, order: counter, action: action))
    }

    /// Removes and returns the earliest action due at `now`, if any.
    mutating func popDue(now: UInt64) -> (() -> Void)? {
        guard let first = heap.min, first.deadline <= now else { return nil }
        return heap.removeMin().action
    }
}
