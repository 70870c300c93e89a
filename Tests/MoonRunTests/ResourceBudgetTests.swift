import Testing
@testable import MoonRun

/// The admission arithmetic alone: fits, take, give, and the reserve kept
/// for a node that waits.
@Suite struct ResourceBudgetTests {
    @Test func memoryFitsUpToTheBudgetAndNoFurther() {
        var budget = ResourceBudget(memory: 900, queues: [8])
        let need = ResourceNeed(memory: 300)
        for _ in 0..<3 {
            #expect(budget.fits(need))
            budget.take(need)
        }
        #expect(!budget.fits(need), "a fourth 300 does not fit in 900")
        budget.give(need)
        #expect(budget.fits(need))
        #expect(budget.memoryInUse == 600)
    }

    @Test func aNeedLargerThanTheBudgetFitsOnlyAlone() {
        var budget = ResourceBudget(memory: 1000, queues: [8])
        let big = ResourceNeed(memory: 4000)
        #expect(budget.exceedsMemory(big))
        #expect(budget.fits(big), "nothing runs: it may start, alone")
        budget.take(ResourceNeed(memory: 1))
        #expect(!budget.fits(big))
        budget.give(ResourceNeed(memory: 1))
        budget.take(big)
        #expect(!budget.fits(ResourceNeed(memory: 1)), "nothing that needs memory starts beside it")
        #expect(budget.fits(ResourceNeed(memory: 0)), "a node that declares no memory is not held by it")
    }

    @Test func slotsCountAgainstJobsAndTheQueue() {
        var budget = ResourceBudget(jobs: 4, queues: [8, 2])
        #expect(budget.fits(ResourceNeed(slots: 2, queue: 1)))
        budget.take(ResourceNeed(slots: 2, queue: 1))
        #expect(!budget.fits(ResourceNeed(slots: 1, queue: 1)), "the queue of width 2 is full")
        #expect(budget.fits(ResourceNeed(slots: 2, queue: 0)))
        budget.take(ResourceNeed(slots: 2, queue: 0))
        #expect(!budget.fits(ResourceNeed(slots: 1, queue: 0)), "-j 4 is full")
        // Wider than -j: it runs when nothing else does.
        let wide = ResourceNeed(slots: 6, queue: 0)
        #expect(!budget.fits(wide))
        budget.give(ResourceNeed(slots: 2, queue: 0))
        budget.give(ResourceNeed(slots: 2, queue: 1))
        #expect(budget.fits(wide))
    }

    @Test func whatEndsWhileANodeWaitsIsKeptForIt() {
        var budget = ResourceBudget(memory: 1000, queues: [8])
        let small = ResourceNeed(memory: 300)
        let big = ResourceNeed(memory: 800)
        budget.take(small)
        budget.take(small)
        #expect(!budget.fits(big))
        // 400 is free: a small node may start in it beside the waiting one.
        #expect(budget.fitsBeside(small))
        budget.take(small)
        // One ends: its 300 is kept for the big node, not for another small one.
        budget.give(small, waiting: big)
        #expect(budget.reservedMemory == 300)
        #expect(!budget.fitsBeside(small))
        budget.give(small, waiting: big)
        #expect(budget.reservedMemory == 600)
        #expect(!budget.fits(big), "300 still in use: 800 does not fit yet")
        budget.give(small, waiting: big)
        #expect(budget.fits(big))
        #expect(budget.reservedMemory == 800, "kept up to what it needs")
        budget.clearReserve()
        #expect(budget.reservedMemory == 0)
        #expect(budget.fitsBeside(small))
    }
}
