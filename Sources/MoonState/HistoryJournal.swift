import Foundation
import MoonJSON

/// Runs recorded beside the store instead of in it: `.moon/history.journal`,
/// one JSON line per run. A run that changed no row of the store (its nodes
/// with sources were up to date, and no node with sources needs the others)
/// appends its history here with one `write`, so it changes none of the
/// store's files (it may not even have opened SQLite, having read a no-op
/// snapshot), and the no-op snapshot stands for the next run. The journal's
/// runs move into the store (`take`, then `emptied` after the commit) when a
/// run writes its history there anyway, when a reader (`moon history`,
/// `trace`, `why`, `status`…) opens the store, and when the journal is past
/// `limit`; learning reads them where they are (`peek`).
///
/// Anything in `.moon/` may be hostile: the journal is used only when it is
/// a regular file, opened without following a link, never waited on (its
/// locks are taken without blocking: an appender that finds it locked, or
/// too large, records in the store), and a line that does not parse is
/// left out. Each record starts with a newline, so a torn line (a full
/// disk) ends before the next record.
enum HistoryJournal {
    /// The journal's size past which a run records in the store, which takes the journal's runs with it.
    static let limit = 256 * 1024
    /// How much of a journal is read. Appenders stop at `limit`, and only a
    /// few at the same moment can pass it, each by less than a record: a
    /// longer journal was not written by moon, and what is past this is
    /// dropped when it is emptied.
    static let readLimit = 4 * limit

    /// The journal beside the store at `store` (`.moon/state.db`).
    static func path(store: String) -> String {
        let directory = (store as NSString).deletingLastPathComponent
        return (directory.isEmpty ? "" : directory + "/") + "history.journal"
    }

    /// Appends `run`; false when it is not kept (the journal is not a
    /// regular file, is at its limit, is locked or cannot be written), and
    /// the caller records it in the store.
    static func append(_ run: RunRecord, store: String) -> Bool {
        let line = encode(run)
        guard line.count <= limit else { return false }
        let path = path(store: store)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard isOurs(info), info.st_size <= limit - line.count else { return false }
        }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // Shared: appenders do not exclude each other; `take` excludes them.
        guard fstat(fd, &info) == 0, isOurs(info), info.st_size <= limit - line.count, flock(fd, LOCK_SH | LOCK_NB) == 0 else { return false }
        // Made by root (`sudo moon run`): the store's owner's, as SQLite gives the WAL.
        if info.st_uid == 0, geteuid() == 0 {
            var database = stat()
            if stat(store, &database) == 0, database.st_uid != 0 { _ = fchown(fd, database.st_uid, database.st_gid) }
        }
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        return written == line.count
    }

    /// The journal's runs, oldest first, with the journal locked until
    /// `emptied` or `release`: no run is appended between reading it and
    /// emptying it.
    final class Held {
        let runs: [RunRecord]
        private var fd: Int32

        fileprivate init(fd: Int32, runs: [RunRecord]) {
            self.fd = fd
            self.runs = runs
        }

        deinit { release() }

        /// The runs are in the store (committed): the journal starts again.
        func emptied() {
            guard fd >= 0 else { return }
            _ = ftruncate(fd, 0)
            release()
        }

        /// Leaves the journal as it is (its runs were not stored).
        func release() {
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    /// Whether there is a journal with something in it (one `lstat`).
    static func hasRuns(store: String) -> Bool {
        var info = stat()
        return lstat(path(store: store), &info) == 0 && isOurs(info) && info.st_size > 0
    }

    /// A regular file with one name, this user's (any, for root): a hard
    /// link another user made to a file of theirs is neither appended to
    /// nor emptied.
    private static func isOurs(_ info: stat) -> Bool {
        info.st_mode & S_IFMT == S_IFREG && info.st_nlink == 1 && (info.st_uid == geteuid() || geteuid() == 0)
    }

    /// The journal, locked, and its runs; nil when there is none, it is
    /// empty, it is not a regular file, or another process holds its lock.
    static func take(store: String) -> Held? {
        guard hasRuns(store: store) else { return nil }
        let fd = open(path(store: store), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, isOurs(info), flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return Held(fd: fd, runs: decode(readAll(fd)))
    }

    /// The journal's runs, oldest first, read without its lock (a record
    /// being appended is a torn line, left out); none when it is not a regular file.
    static func peek(store: String) -> [RunRecord] {
        decode(contents(store: store))
    }

    /// The peak of each of `graph`'s runs in the journal (`RunRecord.peak`),
    /// read from the head of its record, before its nodes; nil when a
    /// record of the graph has none (an older moon wrote it). A line whose
    /// head does not read is left out, as `decode` leaves it out.
    static func peaks(store: String, graph: String) -> [Int64]? {
        var peaks: [Int64] = []
        let bytes = contents(store: store)
        return bytes.withUnsafeBufferPointer { bytes -> [Int64]? in
            guard let base = bytes.baseAddress else { return [] }
            // Lines are found with `memchr`: the heads are a small part of the journal.
            var start = 0
            while start < bytes.count {
                let end = memchr(base + start, 0x0A, bytes.count - start).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? bytes.count
                defer { start = end + 1 }
                guard end > start, let head = try? JSONParser.members(UnsafeBufferPointer(rebasing: bytes[start..<end]), before: "nodes"),
                      head.contains(where: { $0.0 == "graph" && $0.1.string == graph }) else { continue }
                guard let peak = head.first(where: { $0.0 == "peak" }), case .int(let value) = peak.1 else { return nil }
                peaks.append(Int64(value))
            }
            return peaks
        }
    }

    /// The journal's bytes, read without its lock; none when it is not a regular file.
    private static func contents(store: String) -> [UInt8] {
        guard hasRuns(store: store) else { return [] }
        let fd = open(path(store: store), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, isOurs(info) else { return [] }
        return readAll(fd)
    }

    /// What `fd` holds, up to `readLimit`.
    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count < readLimit {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }

    /// One record: a newline, then a JSON object.
    static func encode(_ run: RunRecord) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\n")]
        out.reserveCapacity(256 + (run.trace?.utf8.count ?? 0))
        func key(_ name: String) {
            out.append(out.count == 1 ? UInt8(ascii: "{") : UInt8(ascii: ","))
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: "\":".utf8)
        }
        func number(_ name: String, _ value: Int) {
            key(name)
            NodeRunsText.appendDecimal(Int64(value), to: &out)
        }
        key("graph")
        JSONString.quote(run.graph, into: &out)
        // As text: a Double's description reads back to the same Double,
        // which is how a run taken twice is known (`StateStore.fold`).
        key("started")
        JSONString.quote(run.startedAt.timeIntervalSince1970.description, into: &out)
        number("ms", run.durationMilliseconds)
        number("ok", run.ok ? 1 : run.interrupted ? 2 : 0)
        number("forced", run.forced ? 1 : 0)
        number("succeeded", run.succeeded)
        number("failed", run.failed)
        number("skipped", run.skipped)
        number("upToDate", run.upToDate)
        number("canceled", run.canceled)
        // Before the nodes, so that learning reads it without them (`peaks`).
        key("peak")
        NodeRunsText.appendDecimal(run.peak, to: &out)
        key("nodes")
        JSONString.quote(NodeRunsText.encode(run.nodes), into: &out)
        if let trace = run.trace {
            key("trace")
            JSONString.quote(trace, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The records of `bytes`, in order; a line that is not one is left out.
    static func decode(_ bytes: [UInt8]) -> [RunRecord] {
        var runs: [RunRecord] = []
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            // An array's slice is contiguous: no copy of the line.
            let value = line.withContiguousStorageIfAvailable { try? JSONParser.parse($0) } ?? nil
            guard let value, let run = record(value) else { continue }
            runs.append(run)
        }
        return runs
    }

    private static func record(_ value: JSONValue) -> RunRecord? {
        func int(_ name: String) -> Int? {
            if case .int(let number)? = value[name] { return number }
            return nil
        }
        // Within what a run can be (any year to 5000, up to a year long):
        // the journal is a file a checkout may bring, and what is read here
        // is printed, summed and learned from.
        guard let graph = value["graph"]?.string, let started = value["started"]?.string.flatMap(Double.init),
              (0...95_617_584_000).contains(started), let milliseconds = int("ms"), (0...31_622_400_000).contains(milliseconds),
              let outcome = int("ok"), (0...2).contains(outcome), let forced = int("forced"),
              let nodes = value["nodes"]?.string else { return nil }
        var run = RunRecord(graph: graph, startedAt: Date(timeIntervalSince1970: started), durationMilliseconds: milliseconds,
                            ok: outcome == 1, forced: forced != 0)
        run.interrupted = outcome == 2
        run.succeeded = int("succeeded") ?? 0
        run.failed = int("failed") ?? 0
        run.skipped = int("skipped") ?? 0
        run.upToDate = int("upToDate") ?? 0
        run.canceled = int("canceled") ?? 0
        run.nodes = NodeRunsText.decode(nodes)
        run.trace = value["trace"]?.string
        return run
    }
}
