import Foundation
import GRDB
import GRDBSQLite
import MoonGraph
import Synchronization

/// moon's memory of a directory of graphs: `.moon/state.db` beside the graph
/// file, an SQLite database in WAL mode through one GRDB queue, so two moon
/// processes on the same graph read while one writes and wait for each
/// other's short write transactions instead of corrupting the file. Its
/// tables, each in a file of its own: the stat cache (`FileCacheTable`),
/// each node's last success (`NodeStateTable`) and the history of runs
/// (`RunHistory`); `StateSchema` makes and migrates them.
///
/// A store that cannot be used is never fatal: `open` returns nil and a
/// warning, and moon runs everything. A corrupt file is moved aside
/// (`state.db.corrupt`) and a new one started. Every method throws
/// `DatabaseError`; callers turn that into a warning.
public final class StateStore: @unchecked Sendable {
    public let path: String
    /// The GRDB queue, opened at the first use when the store was opened
    /// from a snapshot (`NoopSnapshot`): a no-op then never starts GRDB.
    var db: DatabaseQueue {
        get throws {
            try queueLock.withLock { _ in
                if let queue { return queue }
                let made = try Self.makeQueueWaiting(path: path, busyTimeout: busyTimeout, readonly: readonly, fresh: false).queue
                queue = made
                return made
            }
        }
    }
    private var queue: DatabaseQueue?
    private let queueLock = Mutex(())

    /// Runs `body`, which only reads, on the store's connection, in one
    /// deferred transaction (one snapshot of the rows). Not GRDB's `read`:
    /// on a writable connection that sets `PRAGMA query_only` on and off
    /// around each read, and setting a flag pragma expires every prepared
    /// statement, so each read prepared all its statements again (a
    /// restore's look-ups of the stat cache, one read each).
    func reading<T>(_ body: (Database) throws -> T) throws -> T {
        try db.writeWithoutTransaction { db in
            if db.isInsideTransaction { return try body(db) }
            return try SQLiteRows.transaction(db, immediate: false) { try body(db) }
        }
    }
    /// Whether SQLite was opened (a store read from a snapshot opens it at its first use).
    var hasOpenedDatabase: Bool { queueLock.withLock { _ in queue != nil } }

    /// Whether this process changed the store's rows (SQLite's count of
    /// rows its connection inserted, updated or deleted; none before it
    /// opened one). A run that did not records its history in the journal
    /// (`HistoryJournal`) and may leave the no-op snapshot for the next.
    public var changedHere: Bool {
        guard let queue = queueLock.withLock({ _ in queue }) else { return false }
        return queue.writeWithoutTransaction { sqlite3_total_changes64($0.sqliteConnection) > 0 }
    }
    private let busyTimeout: TimeInterval
    /// The node states and durations of one graph, from a snapshot that matched the store's files.
    let snapshot: NoopSnapshot.Contents?
    /// Whether this run read its node states from a no-op's snapshot.
    public var readFromSnapshot: Bool { snapshot != nil }
    /// Opened only to read (`moon status`, `moon history`): such a store
    /// leaves a corrupt file where it is, for `moon run` to move.
    let readonly: Bool
    /// Whether `node_state` has its `patterns` column (a store an older
    /// moon made lacks it until a writer opens it; readers read NULL).
    let hasPatterns: Bool

    private let lock = Mutex(())
    private var movedAside = false
    /// What `lastDurations` returned per graph in this process: `record`
    /// leaves durations that are close to these.
    private var durationsRead: [String: [String: Int]] = [:]
    /// The node state rows `nodeStates` last read, as a snapshot holds them.
    private var rowsRead: NoopSnapshot.RowsRead?
    /// The graph whose rows `nodeStates` keeps: a run's (`noopSnapshot`),
    /// which may save a snapshot of them; no other reader keeps a copy.
    private var rowsKept: String?

    private init(path: String, db: DatabaseQueue?, readonly: Bool, hasPatterns: Bool, busyTimeout: TimeInterval,
                 snapshot: NoopSnapshot.Contents? = nil) {
        self.path = path
        self.queue = db
        self.readonly = readonly
        self.hasPatterns = hasPatterns
        self.busyTimeout = busyTimeout
        self.snapshot = snapshot
    }

    /// The key of a graph's entries in its store: the graph file's name.
    /// One store serves every graph file of a directory, and the store is
    /// found beside the file, so the name is all that tells them apart; the
    /// path to the directory (however it is spelled) is not part of it.
    public static func graphKey(forGraphAt path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// `.moon/` in `directory` (the graph file's).
    public static func directory(besideGraphIn directory: String) -> String {
        directory == "." || directory.isEmpty ? ".moon" : (directory.hasSuffix("/") ? directory + ".moon" : directory + "/.moon")
    }

    public struct Opened {
        public var store: StateStore?
        /// Why the store is not used, or what was done to it (moved aside).
        public var warning: String?
        /// The store was refused, not merely unusable: `.moon/` holds
        /// moonrepo's workspace files, and a run must not write there.
        public var refused = false
    }

    /// Opens (and with `create`, makes) the store for graphs in `directory`.
    /// Without `create`, a missing store gives nil and no warning. `busyTimeout`:
    /// how long to wait for another moon's write before giving up.
    /// `noopSnapshot`: the graph whose node states a run reads; when its
    /// snapshot matches the store's files, GRDB waits until something else is asked.
    /// `foldsHistory`: a reader (without `create`) moves the runs of the
    /// history journal into the store first (`HistoryJournal`), so that
    /// it reads every run; a dry run's does not, as it writes nothing.
    public static func open(graphDirectory directory: String, create: Bool = true, busyTimeout: TimeInterval = 5,
                            noopSnapshot graph: String? = nil, foldsHistory: Bool = true) -> Opened {
        let dir = self.directory(besideGraphIn: directory)
        let path = dir + "/state.db"
        if let refusal = notAFile(path) { return Opened(warning: refusal) }
        var info = stat()
        let fresh = lstat(path, &info) != 0
        if !fresh, create, let graph, let contents = NoopSnapshot.load(store: path, graph: graph, schema: StateSchema.version) {
            return Opened(store: StateStore(path: path, db: nil, readonly: false, hasPatterns: true, busyTimeout: busyTimeout, snapshot: contents))
        }
        if fresh {
            guard create else { return Opened() }
            if let foreign = moonrepoFile(in: dir) {
                return Opened(warning: "\(foreign) belongs to moonrepo's moon (moonrepo.dev), another tool; this moon keeps its state in .moon/ beside "
                    + "the graph file and will not write into moonrepo's: put the graph file in another directory", refused: true)
            }
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                return Opened(warning: "cannot create \(dir) (\(Self.reason(error))); running everything, remembering nothing")
            }
        } else if !create, foldsHistory, HistoryJournal.hasRuns(store: path) {
            foldJournal(store: path, busyTimeout: busyTimeout)
        }
        do {
            let store = try makeWaiting(path: path, busyTimeout: busyTimeout, readonly: !create, fresh: fresh)
            if create, let graph { store.keepRows(of: graph) }
            return Opened(store: store)
        } catch let error as DatabaseError where isCorruption(error) {
            guard create else {
                return Opened(warning: "\(path) is corrupt (\(Self.reason(error))); the next `moon run` moves it aside and starts a new one")
            }
            let aside: String
            do {
                aside = try moveAside(path)
            } catch {
                return Opened(warning: "\(path) is corrupt and cannot be moved aside (\(Self.reason(error))); running everything, remembering nothing")
            }
            do {
                let store = try make(path: path, busyTimeout: busyTimeout, readonly: false, fresh: true)
                return Opened(store: store, warning: "\(path) was corrupt (\(Self.reason(error))); moved it to \(aside) and started a new one, so everything runs")
            } catch {
                return Opened(warning: "\(path) was corrupt (moved to \(aside)), and a new one cannot be made (\(Self.reason(error))); running everything, remembering nothing")
            }
        } catch let error as DatabaseError where isBusy(error) {
            return Opened(warning: "\(path) is locked by another process; running everything, remembering nothing")
        } catch {
            return Opened(warning: "cannot open \(path) (\(Self.reason(error))); running everything, remembering nothing")
        }
    }

    /// A moonrepo workspace file in `dir` (`.moon/workspace.yml`…), if any:
    /// asked only before the store is made, so a run with a store pays nothing.
    static func moonrepoFile(in dir: String) -> String? {
        ForeignGraphFile.moonrepoWorkspaceFiles.lazy.map { dir + "/" + $0 }.first { access($0, F_OK) == 0 }
    }

    /// Whether `error` says the file is not a sound database (a garbage
    /// header, or garbage pages behind a sound one).
    public static func isCorruption(_ error: Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    }

    static func isBusy(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// The warning for a store file (the database, its WAL or its shared
    /// memory) that is there but not a regular file: SQLite would wait on a
    /// FIFO for good, read a device, or — through a symbolic link — write a
    /// database into whatever the link names. Nil when each is a regular
    /// file or absent. Checked before SQLite opens anything.
    static func notAFile(_ path: String) -> String? {
        for file in [path, path + "-wal", path + "-shm"] {
            var info = stat()
            guard lstat(file, &info) == 0 else { continue }
            let what: String
            switch info.st_mode & S_IFMT {
            case S_IFREG: continue
            case S_IFLNK: what = "is a symbolic link, which moon does not follow (SQLite would write into its target)"
            case S_IFIFO: what = "is a FIFO, not a database file"
            case S_IFCHR: what = "is a character device, not a database file"
            case S_IFBLK: what = "is a block device, not a database file"
            case S_IFSOCK: what = "is a socket, not a database file"
            case S_IFDIR: what = "is a directory, not a database file"
            default: what = "is not a regular file"
            }
            return "\(file) \(what); running everything, remembering nothing (remove it, and moon makes a new store)"
        }
        return nil
    }

    /// Moves a corrupt store to `PATH.corrupt` (replacing an older one) and
    /// removes its WAL and shared memory, which must never be read with a
    /// new database of the same name. Returns where it went. Connections
    /// this process still has keep the old files, out of everyone's way.
    @discardableResult
    public static func moveAside(_ path: String) throws -> String {
        let aside = path + ".corrupt"
        try? FileManager.default.removeItem(atPath: aside)
        try FileManager.default.moveItem(atPath: path, toPath: aside)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return aside
    }

    /// The reason of a failure of this store in use, for a warning: a
    /// corrupt file (garbage the opening's probe did not reach) is moved
    /// aside here, once, and the reason says where; the next run starts a
    /// new store instead of failing on this one at every run. (Not by a
    /// store opened only to read: the reason says `moon run` will.)
    public func failureReason(_ error: Error) -> String {
        let reason = Self.reason(error)
        guard Self.isCorruption(error) else { return reason }
        guard !readonly else { return "\(reason); the next `moon run` moves it aside and starts a new one" }
        let first = lock.withLock { _ in
            defer { movedAside = true }
            return !movedAside
        }
        guard first else { return reason }
        guard let aside = try? Self.moveAside(path) else { return reason }
        return "\(reason); moved it to \(aside), and the next run starts a new one"
    }

    /// A short reason for a store error, for warnings.
    public static func reason(_ error: Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return "\(error)"
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try reading { try String.fetchOne($0, sql: "PRAGMA integrity_check") ?? "?" }
    }

    /// Remembers the durations `lastDurations` read for `graph`.
    func rememberDurations(_ durations: [String: Int], graph: String) {
        lock.withLock { _ in durationsRead[graph] = durations }
    }

    /// Has `nodeStates` keep the rows it reads of `graph`, for `saveNoopSnapshot`.
    func keepRows(of graph: String) {
        lock.withLock { _ in rowsKept = graph }
    }

    /// Whether `nodeStates` keeps the rows it reads of `graph`.
    func keepsRows(of graph: String) -> Bool {
        lock.withLock { _ in rowsKept == graph }
    }

    /// Keeps the node state rows this process read, for `saveNoopSnapshot`.
    func keepRowsRead(_ read: NoopSnapshot.RowsRead) {
        lock.withLock { _ in rowsRead = read }
    }

    /// The node state rows of `graph` this process last read, with the stamps they were read under.
    func rowsRead(graph: String) -> NoopSnapshot.RowsRead? {
        lock.withLock { _ in rowsRead?.graph == graph ? rowsRead : nil }
    }

    /// What `lastDurations` returned for `graph` in this process ([:] if not asked).
    func durationsRead(graph: String) -> [String: Int] {
        lock.withLock { _ in durationsRead[graph] ?? [:] }
    }

    // MARK: - Opening

    /// `make`, tried again while another moon holds the store. SQLite's
    /// busy timeout does not cover everything when two processes open a new
    /// store at once (switching it to WAL, creating the tables): some of
    /// those steps fail with SQLITE_BUSY at once instead of waiting.
    private static func makeWaiting(path: String, busyTimeout: TimeInterval, readonly: Bool, fresh: Bool) throws -> StateStore {
        let (queue, hasPatterns) = try makeQueueWaiting(path: path, busyTimeout: busyTimeout, readonly: readonly, fresh: fresh)
        return StateStore(path: path, db: queue, readonly: readonly, hasPatterns: hasPatterns, busyTimeout: busyTimeout)
    }

    static func makeQueueWaiting(path: String, busyTimeout: TimeInterval, readonly: Bool,
                                         fresh: Bool) throws -> (queue: DatabaseQueue, hasPatterns: Bool) {
        let deadline = Date().addingTimeInterval(busyTimeout)
        var pause: TimeInterval = 0.005
        while true {
            do {
                return try makeQueue(path: path, busyTimeout: busyTimeout, readonly: readonly, fresh: fresh)
            } catch let error as DatabaseError where isBusy(error) {
                guard Date() < deadline else { throw error }
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.1)
            }
        }
    }

    /// Opens the queue, brings the schema up to date (a writer) or checks
    /// it can be read (a reader), and probes the tables for garbage.
    /// `fresh`: the file is being made now (see `configuration`).
    private static func make(path: String, busyTimeout: TimeInterval, readonly: Bool, fresh: Bool) throws -> StateStore {
        let (queue, hasPatterns) = try makeQueue(path: path, busyTimeout: busyTimeout, readonly: readonly, fresh: fresh)
        return StateStore(path: path, db: queue, readonly: readonly, hasPatterns: hasPatterns, busyTimeout: busyTimeout)
    }

    private static func makeQueue(path: String, busyTimeout: TimeInterval, readonly: Bool,
                                  fresh: Bool) throws -> (queue: DatabaseQueue, hasPatterns: Bool) {
        let db = try DatabaseQueue(path: path, configuration: configuration(path: path, busyTimeout: busyTimeout, readonly: readonly, fresh: fresh))
        var hasPatterns = true
        if readonly {
            hasPatterns = try db.read { db in
                _ = try firstValue(db, sql: "PRAGMA user_version")
                try probe(db)
                return try StateSchema.hasPatterns(db)
            }
        } else {
            // A store this moon made, at its version, is read once (`isCurrent`);
            // any other goes through the migration and the probe.
            let current = try !fresh && db.writeWithoutTransaction { try StateSchema.isCurrent($0) }
            if !current {
                try db.write { db in
                    try StateSchema.migrate(db)
                    try probe(db)
                }
            }
            if fresh { try db.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = NORMAL") } }
            try checkpointIfLarge(db, path: path, busyTimeout: busyTimeout)
        }
        return (db, hasPatterns)
    }

    /// The page size of a store made now (SQLite's default is 4 KiB; a store
    /// keeps the size it was made with): a run that writes a whole project's
    /// rows at its end (a fresh checkout's restore, a first build) writes
    /// them in fewer pages and WAL frames, and a run that reads every node's
    /// state reads fewer pages, while a run that writes a few rows is no
    /// slower (docs/decisions.md).
    static let pageSize = 16384

    /// SQLite's page cache per connection, in KiB (its default is 2000).
    /// Its pages are taken as they are used, so most runs hold a few; a
    /// flush that writes a whole project's rows (a fresh checkout's
    /// restore, a first build) keeps them here instead of spilling them to
    /// the WAL mid-transaction and reading them back.
    static let pageCacheKiB = 8192

    /// moon's settings of its connection.
    private static func configuration(path: String, busyTimeout: TimeInterval, readonly: Bool, fresh: Bool) -> Configuration {
        var config = Configuration()
        // The writer turns WAL on with its own pragma (below): GRDB's `.wal`
        // also reads the -wal file's attributes through Foundation, which
        // looks up the owner's user and group names, for readers of a
        // `DatabasePool`; moon reads through this one queue.
        config.journalMode = readonly ? .wal : .default
        config.busyMode = .timeout(busyTimeout)
        config.readonly = readonly
        config.label = "moon.state"
        // moon deletes a run's rows itself (`record`); GRDB's default would
        // set the pragma at every open.
        config.foreignKeysEnabled = false
        config.prepareDatabase { db in
            try SQLiteRows.execute(db, "PRAGMA cache_size = -\(Self.pageCacheKiB); PRAGMA journal_size_limit = \(Self.walSizeLimit)")
            guard !readonly else { return }
            // A store made now holds nothing yet: it is made and given its
            // tables without a sync (`make` turns them on after), as a
            // power loss in that moment leaves at worst a file that the next
            // run moves aside, and a fresh checkout's first run need not
            // wait for the flushes of an empty file.
            if fresh { try SQLiteRows.execute(db, "PRAGMA synchronous = OFF; PRAGMA page_size = \(Self.pageSize)") }
            // WAL mode persists, and SQLite opens a file whose header says
            // so in it: the pragma is needed only for a file not yet in it.
            if fresh || !Self.headerSaysWAL(path) {
                let mode = String.fromDatabaseValue(try firstValue(db, sql: "PRAGMA journal_mode = WAL"))
                guard mode == "wal" else {
                    throw DatabaseError(message: "cannot turn on WAL mode (journal_mode is \(mode ?? "unknown"))")
                }
            }
            // In WAL mode: commits are not synced, checkpoints are (the WAL
            // before the database is written, the database after), so a
            // run's end waits for no sync. A power loss can lose the last
            // runs' commits (their history, their nodes' fingerprints: those
            // nodes run again), never corrupt the file.
            // Checkpoints happen at the opening (`checkpointIfLarge`).
            try SQLiteRows.execute(db, (fresh ? "" : "PRAGMA synchronous = NORMAL; ") + "PRAGMA wal_autocheckpoint = 0")
        }
        return config
    }

    /// Whether the database file's header marks it a WAL database (its
    /// read and write versions, bytes 18 and 19, are 2).
    static func headerSaysWAL(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var versions: (UInt8, UInt8) = (0, 0)
        let count = withUnsafeMutableBytes(of: &versions) { pread(fd, $0.baseAddress, 2, 18) }
        return count == 2 && versions.0 == 2 && versions.1 == 2
    }

    /// The WAL's size (bytes) past which the opening checkpoints it: an
    /// edit's run or two (a header edit of 13 nodes writes some 950 KiB
    /// with 16 KiB pages, 400 KiB with 4 KiB ones), so the run after an
    /// edit, a no-op most often, does not wait for a checkpoint's syncs;
    /// rebuilding the index of a WAL this size at the opening costs less
    /// than they do.
    static let walCheckpointSize = 1 << 20

    /// Checkpoints the WAL when it is past `walCheckpointSize`. moon exits
    /// without closing its connection (closing would checkpoint at every
    /// run's end), and the first connection of each process reads the whole
    /// WAL to rebuild its index, so the WAL must be kept short; a checkpoint
    /// at a run's end does not restart it (the next process's index does
    /// not know it was copied), one here does. TRUNCATE empties the WAL at
    /// once, so a run that writes nothing after it (a no-op) leaves no WAL
    /// that the next process would copy into the database again, changing
    /// its stamp and the no-op snapshot's with it, no-op after no-op. It
    /// never waits for another moon: with no busy timeout, a reader or
    /// another checkpoint makes it as much as PASSIVE does, and no more.
    private static func checkpointIfLarge(_ db: DatabaseQueue, path: String, busyTimeout: TimeInterval) throws {
        var info = stat()
        guard stat(path + "-wal", &info) == 0, Int(info.st_size) > walCheckpointSize else { return }
        do {
            _ = try db.writeWithoutTransaction { db in
                sqlite3_busy_timeout(db.sqliteConnection, 0)
                defer { sqlite3_busy_timeout(db.sqliteConnection, Int32(min(busyTimeout * 1000, Double(Int32.max)))) }
                return try db.checkpoint(.truncate)
            }
        } catch let error as DatabaseError where isBusy(error) {}
    }

    /// The WAL's size once a checkpoint restarted it (bytes): zero, so that
    /// its size is what runs wrote since, and `checkpointIfLarge` does not
    /// checkpoint at every start a WAL that only once grew large.
    static let walSizeLimit = 0

    /// The first column of the first row (NULL when there is none). The
    /// opening reads through `Row` only, as the tables do: each other type
    /// fetched (`String.fetchOne`, `Int.fetchOne`) makes the Swift runtime
    /// instantiate one more generic cursor at every start, searching the
    /// binary's conformances for its requirements.
    static func firstValue(_ db: Database, sql: String) throws -> DatabaseValue {
        try Row.fetchOne(db, sql: sql).map { $0[0] as DatabaseValue } ?? .null
    }

    /// Reads the first row of each of moon's tables (their root pages and
    /// the leftmost leaves): a store with garbage pages behind a sound
    /// header opens without complaint, and would fail at its first use in
    /// every run instead of once here. A few page reads. Throws what
    /// SQLite says (a missing table, in an older schema, is not an error).
    static func probe(_ db: Database) throws {
        let names = Set(try Row.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            .compactMap { String.fromDatabaseValue($0[0]) })
        let tables = StateSchema.tables.filter(names.contains)
        guard !tables.isEmpty else { return }
        _ = try Row.fetchOne(db, sql: "SELECT " + tables.map { "(SELECT 1 FROM \($0))" }.joined(separator: ", "))
    }
}
