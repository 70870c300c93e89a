import GRDBSQLite
import Glibc

/// How the store's first connection resets SQLite's wal-index (`state.db-shm`).
///
/// The first connection of a WAL database (every `moon run` opens one)
/// truncates the -shm file to 3 bytes, so the index is rebuilt from zeros,
/// and the file grows back as it is mapped. Truncating frees its blocks: on
/// ext4 mounted with `discard` (common on VMs, and this machine) the kernel
/// then waits for the disk to discard them, ~2.5 ms at every start of moon.
/// Installed here, through SQLite's documented `xSetSystemCall` hook of its
/// unix VFS, that one truncation zeroes the file's bytes in place instead
/// (one `pwrite`, no blocks freed). SQLite reads an all-zero index as it
/// reads a truncated one: invalid, to be rebuilt from the WAL. No other
/// process or connection has the file mapped then (SQLite truncates only
/// while it holds the exclusive "first connection" lock), and every other
/// truncation (the database, the WAL: never to 3 bytes) is passed through.
enum SharedMemoryReset {
    private typealias Truncate = @convention(c) (Int32, off_t) -> Int32

    /// SQLite's own `ftruncate`, for every other truncation.
    nonisolated(unsafe) private static var original: Truncate?

    /// The size SQLite truncates a -shm file to (os_unix.c: "3 bytes, an
    /// arbitrary small number, less than the -shm header size").
    static let resetSize: off_t = 3

    /// Installs the hook once, before the store's first connection opens.
    static let installed: Void = {
        guard let vfs = sqlite3_vfs_find(nil), vfs.pointee.iVersion >= 3,
              let get = vfs.pointee.xGetSystemCall, let set = vfs.pointee.xSetSystemCall,
              let current = get(vfs, "ftruncate") else { return }
        original = unsafeBitCast(current, to: Truncate.self)
        let replacement: Truncate = { fd, size in
            if size == SharedMemoryReset.resetSize, SharedMemoryReset.zero(fd) { return 0 }
            return SharedMemoryReset.original?(fd, size) ?? ftruncate(fd, size)
        }
        _ = set(vfs, "ftruncate", unsafeBitCast(replacement, to: sqlite3_syscall_ptr.self))
    }()

    /// Writes zeros over the whole file, keeping its size; false (and the
    /// caller truncates) when the file is small, large or a write fails.
    static func zero(_ fd: Int32) -> Bool {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > resetSize, info.st_size <= 16 << 20 else { return false }
        let chunk = 32 << 10
        return withUnsafeTemporaryAllocation(byteCount: chunk, alignment: 16) { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            memset(base, 0, chunk)
            var offset: off_t = 0
            while offset < info.st_size {
                let count = min(chunk, Int(info.st_size - offset))
                let written = pwrite(fd, base, count, offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return false }
                offset += off_t(written)
            }
            return true
        }
    }
}
