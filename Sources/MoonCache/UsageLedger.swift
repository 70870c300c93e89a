import Foundation
import Glibc

/// What the cache holds, kept as a running estimate so that a run which
/// stored something lists the cache (a stat of every entry and blob, which
/// grows with the cache, not with the run) only when the cache may be past
/// its limit. `v1/usage` holds the total the last listing found and when,
/// then a line per run adding what it wrote, appended, so runs at once add
/// without a lock. It errs high (a blob stored twice counts twice), and low
/// only by what another run adds while one lists (its line goes with the old
/// ledger) or an older moon stores; a ledger older than a day, missing,
/// malformed, too large, not a plain file of the user's says nothing, and
/// the next run lists the cache.
enum UsageLedger {
    static let name = "usage"
    /// Older than this, the ledger is listed again: a moon that does not keep it (an older one) may have stored since.
    static let maxAge: TimeInterval = 86_400
    /// A ledger grows ~12 bytes per run; past this it is listed again and rewritten.
    static let maxSize = 64 << 10
    static let header = "moon-cache-usage 1"

    /// The bytes the cache may hold now; nil when the ledger cannot say.
    static func estimate(_ cache: CacheDirectory, now: Date = Date()) -> Int64? {
        guard let top = (try? cache.area(.top, create: false)) ?? nil else { return nil }
        let fd = openat(top, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, isOurs(info), info.st_size <= maxSize else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count == bytes.count else { return nil }
        return parse(String(decoding: bytes, as: UTF8.self), now: now)
    }

    /// The ledger's text read: the listed total plus every addition, when
    /// the header is sound and recent and every line is an addition.
    static func parse(_ text: String, now: Date) -> Int64? {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.last == "" else { return nil }
        lines.removeLast()
        guard let first = lines.first else { return nil }
        let fields = first.split(separator: " ")
        guard fields.count == 4, fields[0] + " " + fields[1] == header, let total = Int64(fields[2]), total >= 0,
              let seconds = Double(fields[3]), seconds.isFinite else { return nil }
        let age = now.timeIntervalSince1970 - seconds
        guard age >= -60, age < maxAge else { return nil }
        var sum = total
        for line in lines.dropFirst() {
            guard line.first == "+", let added = Int64(line.dropFirst()), added >= 0 else { return nil }
            let (next, overflow) = sum.addingReportingOverflow(added)
            guard !overflow else { return nil }
            sum = next
        }
        return sum
    }

    /// A regular file of this user's with one name: not a FIFO or a device,
    /// nor another user's file (or one of ours) hard-linked in as the ledger.
    private static func isOurs(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && info.st_nlink == 1
    }

    /// Notes `bytes` more in the ledger, if there is one of ours.
    static func add(_ bytes: Int64, to cache: CacheDirectory) {
        guard bytes > 0, let top = (try? cache.area(.top, create: false)) ?? nil else { return }
        let fd = openat(top, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, isOurs(info) else { return }
        let line = Array("+\(bytes)\n".utf8)
        // One write: an append of a few bytes lands whole, whatever other runs append.
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// Starts the ledger afresh from a listing's `total`, replacing it whole.
    static func reset(_ cache: CacheDirectory, total: Int64, now: Date = Date()) {
        guard let top = (try? cache.area(.top, create: false)) ?? nil, let temp = try? cache.temporaryLocation() else { return }
        let text = "\(header) \(total) \(Int64(now.timeIntervalSince1970))\n"
        do {
            try BlobCopy.write(Data(text.utf8), to: temp)
            if renameat(temp.directory, temp.name, top, name) != 0 { temp.unlink() }
        } catch {
            temp.unlink()
        }
    }

    /// The bytes an entry of `entryBytes` and its `files` take on disk, each
    /// rounded up to a block as a listing counts them. An entry from a
    /// remote cache states its files' sizes: a size near `Int64.max` saturates.
    static func footprint(of files: [CacheEntry.File], entryBytes: Int) -> Int64 {
        files.reduce(blocks(Int64(entryBytes))) { sum, file in adding(blocks(file.size ?? 0), to: sum) }
    }

    /// `bytes` rounded up to whole 4 KiB blocks (at least one), saturating.
    static func blocks(_ bytes: Int64) -> Int64 {
        let (padded, overflow) = max(bytes, 1).addingReportingOverflow(4095)
        return overflow ? Int64.max : padded / 4096 * 4096
    }

    /// `a + b`, saturating at `Int64.max` (both at least 0).
    static func adding(_ a: Int64, to b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int64.max : sum
    }
}
