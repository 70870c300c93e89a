import Foundation
import Testing
import MoonState
@testable import MoonSystem

/// The learned-memory rule and the default memory budget's reading.
@Suite struct LearnedResourcesTests {
    @Test func theLargestOfTheLastFivePeaksPlusTwentyPercent() {
        #expect(LearnedResources.memory(fromPeaks: []) == nil)
        #expect(LearnedResources.memory(fromPeaks: [100]) == 120)
        // The sixth-latest (1000) no longer counts.
        #expect(LearnedResources.memory(fromPeaks: [1000, 100, 200, 500, 300, 400]) == 600)
        #expect(LearnedResources(memory: ["a": 5]).learnedMemory(node: "a") == 5)
        #expect(LearnedResources(memory: [:]).learnedMemory(node: "a") == nil)
    }

    /// A Slurm time limit: twice the longest of the last five successful runs, at least 5 minutes.
    @Test func theTimeLimitIsTwiceTheLongestOfTheLastFiveAndAtLeastFiveMinutes() {
        #expect(LearnedResources.time(fromDurations: []) == nil)
        #expect(LearnedResources.time(fromDurations: [1000]) == .seconds(300))
        #expect(LearnedResources.time(fromDurations: [100_000, 200_000, 150_000]) == .seconds(400))
        // The sixth-latest (1,000 s) no longer counts.
        #expect(LearnedResources.time(fromDurations: [1_000_000, 160_000, 200_000, 500_000, 300_000, 400_000]) == .seconds(1000))
    }

    @Test func memAvailableIsReadInBytes() {
        let meminfo = "MemTotal:       24000000 kB\nMemFree:         1000 kB\nMemAvailable:   2048 kB\n"
        #expect(SystemMemory.memAvailable(meminfo: meminfo) == Int64(2048) * 1024)
        #expect(SystemMemory.memAvailable(meminfo: "MemTotal: 1 kB\n") == nil)
    }

    @Test func theOOMKillCountIsTheNumberOnItsOwnLine() {
        let vmstat = "oom_kill_disable 1\npgfault 99\noom_kill 16\nworkingset 3\n"
        #expect(SystemMemory.number(after: "oom_kill", in: vmstat) == 16)
        #expect(SystemMemory.number(after: "oom_kill", in: "pgfault 99\n") == nil)
        #expect(SystemMemory.number(after: "oom_kill", in: "oom_kill\n") == nil)
        #expect(SystemMemory.number(after: "oom_kill", in: "oom_kill x\n") == nil)
        #expect(SystemMemory.number(after: "MemAvailable:", in: "MemAvailable:\t 7 kB") == 7)
        #expect(SystemMemory.oomKills() != nil, "this kernel has /proc/vmstat's oom_kill")
    }

    @Test func theCgroupWithTheLeastRoomBounds() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/a/b", withIntermediateDirectories: true)
        try "max\n".write(toFile: root + "/a/b/memory.max", atomically: true, encoding: .utf8)
        try "5\n".write(toFile: root + "/a/b/memory.current", atomically: true, encoding: .utf8)
        #expect(SystemMemory.cgroupRoom(path: "/a/b", root: root) == nil, "no limit anywhere")
        try "1000\n".write(toFile: root + "/a/memory.max", atomically: true, encoding: .utf8)
        try "300\n".write(toFile: root + "/a/memory.current", atomically: true, encoding: .utf8)
        #expect(SystemMemory.cgroupRoom(path: "/a/b", root: root) == 700, "the parent's limit less what it uses")
    }
}
