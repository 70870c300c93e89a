import MoonSystem
import Testing

/// What moon reads to give a node a memory cgroup of its own: where moon
/// sits (/proc/self/cgroup), where the v1 memory hierarchy is mounted
/// (/proc/self/mountinfo), a cgroup's numbers and OOM kills, and the names
/// of moons' directories.
@Suite struct CgroupFilesTests {
    @Test func membershipOfAV1HostAHybridAndAPureV2One() {
        let hybrid = """
            12:pids:/
            9:name=systemd:/
            7:cpu,cpuacct:/user.slice
            4:memory:/process_api/860fe1f7c8b03f67371fd2af40a78069
            0::/
            """
        #expect(CgroupFiles.membership(hybrid) == .init(memory: "/process_api/860fe1f7c8b03f67371fd2af40a78069", unified: "/"))
        #expect(CgroupFiles.membership("5:cpu,memory:/a/b:c\n").memory == "/a/b:c")
        #expect(CgroupFiles.membership("0::/user.slice/user-0.slice/session-1.scope\n")
                == .init(memory: nil, unified: "/user.slice/user-0.slice/session-1.scope"))
        #expect(CgroupFiles.membership("") == .init())
        #expect(CgroupFiles.membership("garbage\n3:memory\n").memory == nil)
    }

    @Test func theMemoryMountAmongOthers() {
        let mountinfo = """
            25 30 0:23 / /sys rw,nosuid shared:7 - sysfs sysfs rw
            33 25 0:28 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
            36 33 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct
            38 33 0:33 /docker/abc /sys/fs/cgroup/memory rw,nosuid,nodev master:3 shared:16 - cgroup cgroup rw,memory
            40 33 0:35 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw
            """
        let mount = CgroupFiles.memoryMount(mountinfo: mountinfo)
        #expect(mount == .init(root: "/docker/abc", point: "/sys/fs/cgroup/memory"))
        #expect(CgroupFiles.memoryMount(mountinfo: "40 33 0:35 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,memory_recursiveprot\n") == nil)
        // A mount point with a space is written \040.
        #expect(CgroupFiles.memoryMount(mountinfo: "1 2 0:1 / /cg\\040x rw - cgroup cgroup rw,memory\n")?.point == "/cg x")
    }

    @Test func aCgroupsDirectoryUnderItsMount() {
        let whole = CgroupFiles.Mount(root: "/", point: "/sys/fs/cgroup/memory")
        #expect(CgroupFiles.directory(of: "/process_api/x", under: whole) == "/sys/fs/cgroup/memory/process_api/x")
        #expect(CgroupFiles.directory(of: "/", under: whole) == "/sys/fs/cgroup/memory")
        let subtree = CgroupFiles.Mount(root: "/docker/abc", point: "/sys/fs/cgroup/memory/")
        #expect(CgroupFiles.directory(of: "/docker/abc", under: subtree) == "/sys/fs/cgroup/memory")
        #expect(CgroupFiles.directory(of: "/docker/abc/x", under: subtree) == "/sys/fs/cgroup/memory/x")
        // Outside what the mount shows: no directory.
        #expect(CgroupFiles.directory(of: "/docker/abcd", under: subtree) == nil)
        #expect(CgroupFiles.directory(of: "/other", under: subtree) == nil)
    }

    @Test func oomKillsAndNumbers() {
        #expect(CgroupFiles.oomKills("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3)
        #expect(CgroupFiles.oomKills("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n") == 1)
        #expect(CgroupFiles.oomKills("oom_kill_disable 0\nunder_oom 0\n") == nil)
        #expect(CgroupFiles.oomKills("") == nil)
        #expect(CgroupFiles.number("2965504\n") == 2_965_504)
        #expect(CgroupFiles.number("max\n") == nil)
        #expect(CgroupFiles.number("") == nil)
    }

    @Test func startTimeAndTheNamesOfMoonsDirectories() {
        let stat = "5278 (a) b) c) S 1 5278 5278 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 4762230 123 456\n"
        #expect(CgroupFiles.startTime(stat: stat) == 4_762_230)
        #expect(CgroupFiles.startTime(stat: "12 (x) S 1") == nil)
        #expect(CgroupFiles.startTime(stat: "") == nil)
        let name = CgroupFiles.ownerName(pid: 5278, start: 4_762_230)
        #expect(name == "moon-5278-4762230")
        #expect(CgroupFiles.owner(ofName: name)?.pid == 5278)
        #expect(CgroupFiles.owner(ofName: name)?.start == 4_762_230)
        for other in ["moon-test-oom-12", "moon-12", "moon--1-2", "moon-0-5", "moon-1-2-3", "other-1-2", "1"] {
            #expect(CgroupFiles.owner(ofName: other) == nil, "\(other)")
        }
    }
}
