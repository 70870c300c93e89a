import Foundation
import Glibc
import GRDB
import GRDBSQLite

/// One graph's node states and durations as the store held them, in one
/// file read at once (`.moon/noop/<graph file name>`), so that a no-op
/// neither opens SQLite nor starts GRDB (docs/decisions.md).
///
/// It stands only while the store is byte for byte what it was read from:
/// the stamps (device, inode, size and mtime in ns) of `state.db` and its
/// WAL are kept beside the rows and compared at every use. Every commit of
/// any writer appends to the WAL and every checkpoint writes the database,
/// each changing a stamp; a snapshot is made only of files last written at
/// least `racyWindow` earlier, so that a later write within the same clock
/// tick cannot leave every stamp as it was. (Not the ctime: SQLite running
/// as root gives the WAL its database's owner at every opening, a change
/// of ctime without one of the contents.) The header of the WAL's index
/// (`-shm`) is kept and compared too: every commit changes it (a counter,
/// the last frame and its checksum), whatever the clock, so while it can be
/// read whole a snapshot needs no settled files, and the run that wrote
/// the store can leave one for the next. Anything that does
/// not match or does not parse is no snapshot: the store is read as always.
enum NoopSnapshot {
    /// What a snapshot holds, decoded.
    struct Contents {
        let graph: String
        let states: [String: StoredNode]
        let durations: [String: Int]
        /// The largest peak of the graph's newest runs in the store
        /// (`StateStore.storedPeak`); nil when one has none recorded.
        let peak: Int64?
    }

    /// A file's identity and last change, or its absence.
    struct Stamp: Equatable {
        var exists = false
        var device: UInt64 = 0
        var inode: UInt64 = 0
        var size: Int64 = 0
        var mtime: Int64 = 0

        init(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            exists = true
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            mtime = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }

        init() {}

        /// The WAL index's header in `store`'s `-shm` file, as a stamp: SQLite
        /// keeps two copies of it (48 bytes each, native byte order), equal
        /// except while a commit writes them. Its bytes 12-39 are kept: the
        /// WAL's last committed frame (`mxFrame`), the running checksum of
        /// the frames up to it and the WAL's salts, which every commit
        /// changes (a restarted WAL gets new salts) and which the index
        /// rebuilt by the next process to open the store (SQLite's recovery)
        /// finds again; not its change counter and own checksum, which that
        /// rebuilding resets. Absent when the file is not a regular one or
        /// the copies differ.
        init(walIndexOf store: String) {
            let fd = open(store + "-shm", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return }
            var header = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                          UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            let complete = withUnsafeMutableBytes(of: &header) { raw -> Bool in
                guard pread(fd, raw.baseAddress, 96, 0) == 96 else { return false }
                // Both copies equal, and the index initialised (`isInit`, byte 12).
                return memcmp(raw.baseAddress!, raw.baseAddress! + 48, 48) == 0 && raw[12] == 1
            }
            guard complete else { return }
            exists = true
            withUnsafeBytes(of: &header) { raw in
                device = NoopSnapshot.checksum(UnsafeRawBufferPointer(rebasing: raw[12..<40]))
                // mxFrame (bytes 16-19) and the first salt (32-35), as they are.
                inode = UInt64(raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self)) << 32
                    | UInt64(raw.loadUnaligned(fromByteOffset: 32, as: UInt32.self))
            }
        }
    }

    static let magic = Array("MOONNOP4".utf8)
    /// How long before a snapshot its store's files must have last changed (ns).
    static let racyWindow: Int64 = 100_000_000
    /// The largest snapshot read (a larger one is no snapshot).
    static let sizeLimit = 256 << 20

    static func path(store: String, graph: String) -> String {
        let slash = store.lastIndex(of: "/").map { String(store[..<$0]) } ?? "."
        return slash + "/noop/" + graph
    }

    /// The stamps of the database, its WAL and its WAL index's header.
    static func stamps(store: String) -> [Stamp] {
        [Stamp(store), Stamp(store + "-wal"), Stamp(walIndexOf: store)]
    }

    /// Whether stamps are old enough, at `now` (ns since the epoch), for a
    /// snapshot to be kept of them: the WAL index's header read whole pins
    /// every commit whatever the clock; without it, the files must have
    /// last changed `racyWindow` before.
    static func settled(_ stamps: [Stamp], now: Int64) -> Bool {
        if stamps.count > 2, stamps[2].exists { return true }
        return stamps.allSatisfy { !$0.exists || $0.mtime < now - racyWindow }
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    // MARK: Writing

    /// The rows of one graph's node states as a run read them (a `Writer`
    /// of rows alone), and the stamps of the store's files through that read.
    struct RowsRead {
        let graph: String
        let stamps: [Stamp]
        let rows: Writer
    }

    /// Bytes in one `malloc`ed block. A snapshot of a few hundred KiB grows
    /// by `realloc`, which moves a large block by remapping its pages, with
    /// neither a copy nor a zeroing of them; an array grown by small appends
    /// costs a few hundred instructions for each, and a row takes a dozen.
    final class Bytes {
        private(set) var base: UnsafeMutableRawPointer?
        private(set) var count = 0
        private var capacity = 0
        /// An allocation failed: the bytes are incomplete, and no snapshot is saved of them.
        private(set) var failed = false

        init(capacity: Int) { reserve(capacity) }

        deinit { free(base) }

        var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

        func fail() { failed = true }

        /// Room for `extra` more bytes, at least doubling the block when it grows.
        @discardableResult
        func reserve(_ extra: Int) -> Bool {
            guard !failed else { return false }
            guard capacity - count < extra else { return true }
            let grown = max(capacity * 2, count + extra, 1 << 12)
            guard let moved = realloc(base, grown) else {
                failed = true
                return false
            }
            (base, capacity) = (moved, grown)
            return true
        }

        func append(_ raw: UnsafeRawBufferPointer) {
            guard let source = raw.baseAddress, raw.count > 0, reserve(raw.count) else { return }
            (base! + count).copyMemory(from: source, byteCount: raw.count)
            count += raw.count
        }

        func append(_ value: UInt64) {
            guard reserve(8) else { return }
            (base! + count).storeBytes(of: value.littleEndian, as: UInt64.self)
            count += 8
        }
    }

    /// Builds a snapshot's bytes: the header, then `durations`, then the rows `body` adds.
    struct Writer {
        private let storage: Bytes

        /// The bytes so far (valid while the writer is).
        var bytes: UnsafeRawBufferPointer { storage.buffer }
        /// Whether every byte appended was kept.
        var complete: Bool { !storage.failed }

        init(stamps: [Stamp], graph: String, schema: Int) {
            storage = Bytes(capacity: 1 << 16)
            NoopSnapshot.magic.withUnsafeBytes { storage.append($0) }
            append(UInt64(schema))
            for stamp in stamps {
                append(UInt64(stamp.exists ? 1 : 0))
                append(stamp.device)
                append(stamp.inode)
                append(UInt64(bitPattern: stamp.size))
                append(UInt64(bitPattern: stamp.mtime))
            }
            append(bytes: Array(graph.utf8))
        }

        /// An empty writer, for rows alone (`RowsRead`).
        init() { storage = Bytes(capacity: 1 << 16) }

        /// Appends another writer's bytes: rows appended to it as to this one.
        mutating func append(rows other: Writer) {
            guard other.complete else { return storage.fail() }
            storage.append(other.bytes)
        }

        mutating func append(_ value: UInt64) {
            storage.append(value)
        }

        mutating func append(bytes value: UnsafeRawBufferPointer?) {
            guard let value else { return append(UInt64.max) }
            append(UInt64(value.count))
            storage.append(value)
        }

        mutating func append(bytes value: [UInt8]) {
            value.withUnsafeBytes { append(bytes: $0) }
        }

        /// Appends the checksum of everything before it (the snapshot's last 8 bytes).
        mutating func seal() {
            append(NoopSnapshot.checksum(bytes))
        }

        mutating func appendDurations(_ durations: [String: Int]) {
            append(UInt64(durations.count))
            for (name, milliseconds) in durations {
                var name = name
                name.withUTF8 { append(bytes: UnsafeRawBufferPointer($0)) }
                append(UInt64(bitPattern: Int64(milliseconds)))
            }
        }

        /// The store's peak (`Contents.peak`), after the durations; UInt64.max for none.
        mutating func appendPeak(_ peak: Int64?) {
            append(peak.map { UInt64(bitPattern: $0) } ?? UInt64.max)
        }

        /// One row of `node_state` as read: the node's name, then columns 1 to 11, NULL kept.
        mutating func appendRow(_ row: SQLiteStatement) {
            for column in Int32(0)...11 {
                if sqlite3_column_type(row, column) == SQLITE_NULL {
                    append(bytes: nil)
                } else if column == 9 {
                    append(UInt64(8))
                    append(sqlite3_column_double(row, column).bitPattern)
                } else {
                    let start = sqlite3_column_blob(row, column)
                    let length = Int(sqlite3_column_bytes(row, column))
                    append(bytes: UnsafeRawBufferPointer(start: length > 0 ? start : nil, count: length))
                }
            }
        }
    }

    /// A check of a snapshot's bytes, kept at its end: a damaged file is no snapshot.
    /// Four independent lanes of multiply-xor over 8-byte words, so that
    /// a file of a few hundred KiB is checked in a fraction of its decoding.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let k: UInt64 = 0x9e37_79b9_7f4a_7c15
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (1, 2, 3, 4)
        var i = 0
        while i + 32 <= bytes.count {
            lanes.0 = (lanes.0 ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* k
            lanes.1 = (lanes.1 ^ bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)) &* k
            lanes.2 = (lanes.2 ^ bytes.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self)) &* k
            lanes.3 = (lanes.3 ^ bytes.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self)) &* k
            lanes.0 ^= lanes.0 >> 29
            lanes.1 ^= lanes.1 >> 29
            lanes.2 ^= lanes.2 >> 29
            lanes.3 ^= lanes.3 >> 29
            i += 32
        }
        var h = UInt64(bytes.count) &* k
        for lane in [lanes.0, lanes.1, lanes.2, lanes.3] { h = (h ^ lane) &* k; h ^= h >> 32 }
        while i < bytes.count {
            h = (h ^ UInt64(bytes[i])) &* k
            h ^= h >> 29
            i += 1
        }
        return h
    }

    /// Whether `directory` is a directory of moon's user that no one else
    /// may write, and not a link: a snapshot says which nodes are up to date,
    /// and one another user could plant (a cloned repository's
    /// `.moon/noop` linking to a shared directory) would say it for them.
    static func isOwnDirectory(_ directory: String) -> Bool {
        var info = stat()
        return lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == geteuid()
            && info.st_mode & (S_IWGRP | S_IWOTH) == 0
    }

    /// Writes the snapshot (with its checksum, appended in place) whole or not at all (a temporary file renamed).
    static func save(_ writer: inout Writer, to path: String) -> Bool {
        writer.seal()
        guard writer.complete else { return false }
        let bytes = writer.bytes
        let directory = String(path[..<path.lastIndex(of: "/")!])
        if mkdir(directory, 0o755) != 0 && errno != EEXIST { return false }
        guard isOwnDirectory(directory) else { return false }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        var written = 0
        var ok = true
        while ok, written < bytes.count {
            let count = write(fd, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { ok = false }
            written += max(count, 0)
        }
        guard close(fd) == 0, ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    // MARK: Reading

    /// The snapshot of `graph` beside `store`, when it parses and its store's files are as it says.
    static func load(store: String, graph: String, schema: Int) -> Contents? {
        let file = path(store: store, graph: graph)
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_size > 0,
              info.st_size <= sizeLimit, isOwnDirectory(String(file[..<file.lastIndex(of: "/")!])) else { return nil }
        let size = Int(info.st_size)
        // Mapped, not read: the rows are decoded from the page cache, with no copy of the file on the heap.
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else { return nil }
        defer { munmap(mapped, size) }
        let mappedFile = UnsafeRawBufferPointer(start: mapped, count: size)
        guard size > 8 else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: mappedFile[..<(size - 8)])
        guard UInt64(littleEndian: mappedFile.loadUnaligned(fromByteOffset: size - 8, as: UInt64.self)) == checksum(body) else { return nil }
        var reader = Reader(body)
        return reader.contents(store: store, graph: graph, schema: schema)
    }

    /// A bounds-checked walk over a snapshot's bytes.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        mutating func number() -> UInt64? {
            guard bytes.count - offset >= 8 else { return nil }
            defer { offset += 8 }
            return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }

        /// A length-prefixed field: `.some(nil)` for NULL, nil when it runs past the end.
        mutating func field() -> UnsafeRawBufferPointer?? {
            guard let count = number() else { return nil }
            if count == UInt64.max { return .some(nil) }
            guard count <= UInt64(bytes.count - offset) else { return nil }
            defer { offset += Int(count) }
            return .some(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(count)]))
        }

        mutating func string() -> String? {
            guard case .some(.some(let field)) = field() else { return nil }
            return String(decoding: field, as: UTF8.self)
        }

        mutating func contents(store: String, graph: String, schema: Int) -> Contents? {
            guard bytes.count >= magic.count, bytes.prefix(magic.count).elementsEqual(magic) else { return nil }
            offset = magic.count
            guard number() == UInt64(schema) else { return nil }
            var recorded: [Stamp] = []
            for _ in 0..<3 {
                var stamp = Stamp()
                guard let exists = number(), let device = number(), let inode = number(), let size = number(),
                      let mtime = number() else { return nil }
                (stamp.exists, stamp.device, stamp.inode) = (exists == 1, device, inode)
                (stamp.size, stamp.mtime) = (Int64(bitPattern: size), Int64(bitPattern: mtime))
                recorded.append(stamp)
            }
            // (Each duration takes at least 16 bytes: a count bounded by them reserves no more than the file.)
            guard recorded == stamps(store: store), string() == graph, let durationCount = number(),
                  durationCount <= UInt64(bytes.count / 16) else { return nil }
            var durations: [String: Int] = [:]
            durations.reserveCapacity(Int(durationCount))
            for _ in 0..<durationCount {
                guard let name = string(), let milliseconds = number() else { return nil }
                durations[name] = Int(truncatingIfNeeded: milliseconds)
            }
            guard let peak = number() else { return nil }
            // The rows, to the end of the file.
            // (A node with a duration mostly has a row too: the count sizes the table once.)
            var states: [String: StoredNode] = [:]
            states.reserveCapacity(Int(durationCount))
            while offset < bytes.count {
                var row = Row()
                for column in 0..<12 {
                    guard case .some(let field) = field() else { return nil }
                    row.columns[column] = field
                }
                guard let name = row.columns[0] else { return nil }
                states[String(decoding: name, as: UTF8.self)] = StateStore.storedNode(row)
            }
            return Contents(graph: graph, states: states, durations: durations, peak: peak == UInt64.max ? nil : Int64(bitPattern: peak))
        }
    }

    /// A row of `node_state` in a snapshot, read as `SQLiteRows` reads one of the table.
    struct Row: NodeStateRow {
        var columns = [UnsafeRawBufferPointer?](repeating: nil, count: 12)

        func blob(_ column: Int32) -> UnsafeRawBufferPointer {
            columns[Int(column)] ?? UnsafeRawBufferPointer(start: nil, count: 0)
        }

        func data(_ column: Int32) -> Data? {
            columns[Int(column)].map(Data.init(copying:))
        }

        func text(_ column: Int32) -> String {
            columns[Int(column)].map { String(decoding: $0, as: UTF8.self) } ?? ""
        }

        func double(_ column: Int32) -> Double {
            guard let field = columns[Int(column)], field.count == 8 else { return 0 }
            return Double(bitPattern: UInt64(littleEndian: field.loadUnaligned(as: UInt64.self)))
        }
    }
}
