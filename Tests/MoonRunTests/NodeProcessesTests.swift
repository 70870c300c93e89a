import Foundation
import MoonCommand
import MoonProcess
import Testing
@testable import MoonRun

/// The count of each node's live processes, which a node's slot and its
/// next attempt wait for.
@Suite struct NodeProcessesTests {
    final class Handle: ProcessHandle, @unchecked Sendable {
        let pid: pid_t = 1
        var killed = false
        func terminate(grace: Duration) {}
        func kill() { killed = true }
    }

    @Test func aNodeWithoutProcessesIsSettledAtOnce() {
        let processes = NodeProcesses()
        nonisolated(unsafe) var settled = false
        processes.settled(0).start { if case .completed = $0 { settled = true } }
        #expect(settled)
    }

    @Test func aNodeIsSettledWhenItsLastProcessIsReaped() {
        let processes = NodeProcesses()
        processes.launching(0)
        processes.launched(0, Handle())
        processes.launching(0)
        processes.launched(0, Handle())
        processes.launching(1)
        nonisolated(unsafe) var settled = false
        processes.settled(0).start { if case .completed = $0 { settled = true } }
        processes.ended(0)
        #expect(!settled)
        processes.ended(0)
        #expect(settled)
    }

    @Test func killAllReachesEveryLiveProcess() {
        let processes = NodeProcesses()
        let (a, b) = (Handle(), Handle())
        processes.launching(0)
        processes.launched(0, a)
        processes.launching(3)
        processes.launched(3, b)
        processes.killAll()
        #expect(a.killed && b.killed)
    }
}
