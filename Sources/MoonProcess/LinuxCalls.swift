import Glibc

/// Linux calls the Glibc module does not import, looked up with `dlsym`:
/// GNU extensions (the module is built without `_GNU_SOURCE`), headers that
/// are not in its module map, and variadic functions; all of them are in
/// glibc 2.36. (The spawn itself is C: the CMoonSpawn target.)
enum LinuxCalls {
    /// `prctl` is variadic in C; for integer arguments on x86_64 and aarch64
    /// Linux, calling it through a fixed-arity pointer is ABI-compatible.
    private typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    private static let pipe2Function: Pipe2? = symbol("pipe2")

    /// `pipe2(2)`; fills `fds` (read end, write end).
    static func pipe2(_ fds: inout [Int32], _ flags: Int32) -> Int32 {
        guard let function = pipe2Function else {
            errno = ENOSYS
            return -1
        }
        return fds.withUnsafeMutableBufferPointer { function($0.baseAddress!, flags) }
    }

    private static let prctlFunction: Prctl? = symbol("prctl")

    static let PR_SET_CHILD_SUBREAPER: Int32 = 36

    private static func symbol<F>(_ name: String) -> F? {
        guard let address = dlsym(nil, name) else { return nil }
        return unsafeBitCast(address, to: F.self)
    }

    static func prctl(_ option: Int32, _ argument: UInt) -> Int32 {
        guard let function = prctlFunction else {
            errno = ENOSYS
            return -1
        }
        return function(option, argument, 0, 0, 0)
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The pids of this process's direct children, from
    /// `/proc/self/task/*/children` (a child belongs to the thread that
    /// forked it, or to some thread when it was re-parented here).
    static func childPids() -> [pid_t] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var pids: [pid_t] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            guard name.first?.isNumber == true else { continue }
            let text = readSmallFile("/proc/self/task/\(name)/children")
            pids += text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
        }
        return pids
    }

    /// Reads a /proc file (whose size reads as 0) to EOF.
    static func readSmallFile(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += buffer[0..<count]
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
