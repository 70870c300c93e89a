import CMoonSystem
import Glibc

/// Linux calls the Glibc module does not import (GNU extensions: the
/// module is built without `_GNU_SOURCE`; a variadic `prctl`), through C
/// wrappers in the CMoonSystem target (`moon_system.h`), and a few helpers.
/// (Not `dlsym`, which finds nothing in a static executable.)
public enum LinuxCalls {
    /// `pipe2(2)`; fills `fds` (read end, write end).
    public static func pipe2(_ fds: inout [Int32], _ flags: Int32) -> Int32 {
        fds.withUnsafeMutableBufferPointer { moon_pipe2($0.baseAddress!, flags) }
    }

    /// The working directory (`getcwd(3)`), or nil when it is gone or unreadable.
    /// Not `FileManager.default`, whose first use costs a run's start more than the call.
    public static func workingDirectory() -> String? {
        guard let cwd = getcwd(nil, 0) else { return nil }
        defer { free(cwd) }
        return String(cString: cwd)
    }

    /// `prctl(PR_SET_CHILD_SUBREAPER, 1)`.
    public static func becomeSubreaper() -> Int32 {
        moon_become_subreaper()
    }

    /// Whether `path` is a directory on a memory file system (tmpfs) this
    /// process may create entries in.
    public static func isWritableMemoryFileSystem(_ path: String) -> Bool {
        moon_is_writable_tmpfs(path) == 1
    }

    /// The magic number of the file system `fd` is on (`f_type`), or nil.
    public static func fileSystemType(_ fd: Int32) -> Int? {
        let type = moon_file_system_type(fd)
        return type == -1 ? nil : type
    }

    /// The CPUs this process may use (affinity, capped by a cgroup CPU
    /// quota): `moon_cpu_count`.
    public static func processorCount() -> Int {
        Int(moon_cpu_count())
    }

    /// `CLOCK_MONOTONIC` in nanoseconds: the clock of the event loop's
    /// timers and of every deadline in the launcher.
    public static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The pids of this process's direct children, from
    /// `/proc/self/task/*/children` (a child belongs to the thread that
    /// forked it, or to some thread when it was re-parented here).
    public static func childPids() -> [pid_t] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var pids: [pid_t] = []
        while let entry = readdir(directory) {
            guard let name = FileName.withName(of: entry, { name, _ in name }), name.first?.isNumber == true else { continue }
            let text = readSmallFile("/proc/self/task/\(name)/children")
            pids += text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
        }
        return pids
    }

    /// The bytes of the regular file `path`, read whole through the system
    /// calls (FileManager's reading costs more than the read, once per file);
    /// nil when it cannot be opened or read, is not a regular file or holds
    /// more than `limit` bytes. The type is checked on the descriptor, which
    /// is opened without waiting: a FIFO put in the file's place after a
    /// `stat` blocks nothing.
    public static func readRegularFile(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= limit else { return nil }
        // One byte more than the size, so that a file that grew is seen to.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= limit else { return nil }
                bytes += [UInt8](repeating: 0, count: min(count, limit + 1 - count))
            }
            let read = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if read < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if read == 0 { break }
            count += read
        }
        guard count <= limit else { return nil }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Reads a /proc file (whose size reads as 0) to EOF.
    public static func readSmallFile(_ path: String) -> String {
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

    /// Writes all of `text` to `fd`, again after EINTR and short writes;
    /// stops at the first other failure (a closed terminal or pipe).
    public static func writeAll(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
