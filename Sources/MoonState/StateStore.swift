import Foundation
import GRDB
import GRDBSQLite
import MoonProcess
import MoonSystem

/// moon's memory of a directory of graphs: `.moon/state.db` beside the graph
/// file, an SQLite database in WAL mode (through GRDB; a run's own reads
/// and writes through SQLite's C API, see `quickOpen`), so two moon
/// processes on the same graph read while one writes and wait for each
/// other's short write transactions instead of corrupting the file. Holds
/// the stat cache, the last successful fingerprint of each node with its
/// outputs, and the history of runs.
///
/// A store that cannot be used is never fatal: `open` returns nil and a
/// warning, and moon runs everything. A corrupt file is moved aside
/// (`state.db.corrupt`) and a new one started. Every method throws
/// `DatabaseError`; callers turn that into a warning.
public final class StateStore: @unchecked Sendable {
    /// SQLite's page cache per connection, in KiB (its default is 2000).
    static let pageCacheKiB = 256

    /// The schema this moon writes (`PRAGMA user_version`). 2 added
    /// `node_durations`; 3 `run_nodes` (a run's nodes in one row; the
    /// `node_runs` rows of earlier runs are still read); 4 `node_state.deps`
    /// (what a node's depfile listed).
    static let schemaVersion = 4

    public let path: String
    /// GRDB's queue: made by `make`, or later by `prepareQueue` or the first
    /// method that needs it, after a quick open (`quickOpen`).
    private let queue: SharedJob<Result<DatabaseQueue, Error>>
    /// The connection of a quick open, on SQLite's C API (nil otherwise).
    /// Kept open while the store lives: closing a process's last connection
    /// checkpoints and deletes the WAL.
    private let quick: OpaquePointer?

    var db: DatabaseQueue {
        get throws { try queue.value.get() }
    }

    private init(path: String, queue: SharedJob<Result<DatabaseQueue, Error>>, quick: OpaquePointer? = nil) {
        self.path = path
        self.queue = queue
        self.quick = quick
    }

    deinit {
        // Before the store's own connection goes: not the last one, so
        // closing it does not checkpoint.
        if let connection = checkpointLock.withLock({ checkpointConnection }) { sqlite3_close_v2(connection) }
        if let quick { sqlite3_close_v2(quick) }
    }

    /// Makes GRDB's queue now, on this thread, unless it is made or being
    /// made: for a run whose up-to-date checks will need it (a run without
    /// `sources` never does: durations and history go through SQLite's C API).
    public func prepareQueue() {
        queue.runIfFree()
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
    }

    /// Opens (and with `create`, makes) the store for graphs in `directory`.
    /// Without `create`, a missing store gives nil and no warning. `busyTimeout`:
    /// how long to wait for another moon's write before giving up.
    public static func open(graphDirectory directory: String, create: Bool = true, busyTimeout: TimeInterval = 5) -> Opened {
        let dir = self.directory(besideGraphIn: directory)
        let path = dir + "/state.db"
        if let refusal = notAFile(path) { return Opened(warning: refusal) }
        var info = stat()
        if lstat(path, &info) != 0 {
            guard create else { return Opened() }
            do {
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            } catch {
                return Opened(warning: "cannot create \(dir) (\(Self.reason(error))); running everything, remembering nothing")
            }
        }
        if create, let store = quickOpen(path: path, busyTimeout: busyTimeout) {
            return Opened(store: store)
        }
        do {
            return Opened(store: try makeWaiting(path: path, busyTimeout: busyTimeout, readonly: !create))
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
                let store = try make(path: path, busyTimeout: busyTimeout, readonly: false)
                return Opened(store: store, warning: "\(path) was corrupt (\(Self.reason(error))); moved it to \(aside) and started a new one, so everything runs")
            } catch {
                return Opened(warning: "\(path) was corrupt (moved to \(aside)), and a new one cannot be made (\(Self.reason(error))); running everything, remembering nothing")
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
            return Opened(warning: "\(path) is locked by another process; running everything, remembering nothing")
        } catch {
            return Opened(warning: "cannot open \(path) (\(Self.reason(error))); running everything, remembering nothing")
        }
    }

    /// Whether `error` says the file is not a sound database (a garbage
    /// header, or garbage pages behind a sound one).
    public static func isCorruption(_ error: Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
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
    /// corrupt file (garbage the opening's `probe` did not reach) is moved
    /// aside here, once, and the reason says where; the next run starts a
    /// new store instead of failing on this one at every run. (Not by a
    /// store opened only to read: the reason says `moon run` will.)
    public func failureReason(_ error: Error) -> String {
        let reason = Self.reason(error)
        guard Self.isCorruption(error) else { return reason }
        guard !readonly else { return "\(reason); the next `moon run` moves it aside and starts a new one" }
        let first = movedAsideLock.withLock {
            defer { movedAside = true }
            return !movedAside
        }
        guard first else { return reason }
        guard let aside = try? Self.moveAside(path) else { return reason }
        return "\(reason); moved it to \(aside), and the next run starts a new one"
    }

    private let movedAsideLock = NSLock()
    private var movedAside = false
    /// Opened only to read (`moon status`, `moon history`): such a store
    /// leaves a corrupt file where it is, for `moon run` to move.
    private var readonly = false

    /// Reads the first row of each of moon's tables (their root pages and
    /// the leftmost leaves): a store with garbage pages behind a sound
    /// header opens without complaint, and would fail at its first use in
    /// every run instead of once here. A few page reads. Throws what
    /// SQLite says (a missing table, in an older schema, is not an error).
    static func probe(_ connection: OpaquePointer) throws {
        let tables = try SQLiteStatement(connection, "SELECT name FROM sqlite_master WHERE type = 'table'")
        var names: [String] = []
        while try tables.step() { names.append(tables.text(0)) }
        try probe(connection, tables: names.filter(probedTables.contains))
    }

    /// `probe` of tables known to exist: one statement.
    static func probe(_ connection: OpaquePointer, tables: [String]) throws {
        guard !tables.isEmpty else { return }
        let first = try SQLiteStatement(connection, "SELECT " + tables.map { "(SELECT 1 FROM \($0))" }.joined(separator: ", "))
        _ = try first.step()
    }

    /// The tables of the current schema.
    private static let probedTables = ["files", "node_state", "runs", "node_runs", "run_nodes", "node_durations", "sqlite_sequence"]

    /// A short reason for a store error, for warnings.
    public static func reason(_ error: Error) -> String {
        if let error = error as? DatabaseError { return error.message ?? "\(error.resultCode)" }
        if let error = error as? CocoaError, let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return "\(error)"
    }

    /// `make`, tried again while another moon holds the store. SQLite's
    /// busy timeout does not cover everything when two processes open a new
    /// store at once (switching it to WAL, creating the tables): some of
    /// those steps fail with SQLITE_BUSY at once instead of waiting.
    private static func makeWaiting(path: String, busyTimeout: TimeInterval, readonly: Bool) throws -> StateStore {
        let deadline = Date().addingTimeInterval(busyTimeout)
        var pause: TimeInterval = 0.005
        while true {
            do {
                return try make(path: path, busyTimeout: busyTimeout, readonly: readonly)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                guard Date() < deadline else { throw error }
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.1)
            }
        }
    }

    /// The writer's open when the file is there, in WAL mode, with the
    /// current schema: SQLite's C API reads and writes what a run needs (the
    /// schema version, `lastDurations`, `record`), and GRDB's queue — ~2 ms
    /// of CPU, mostly the Swift runtime's first look-ups of GRDB's generic
    /// types and conformances — is made only for what needs it: by
    /// `prepareQueue` on a helper thread when the graph has `sources`, or
    /// by the first method that uses it. Anything else
    /// (an older schema, a corrupt file, a lock): nil, and `open` takes the
    /// full way, which migrates, moves a corrupt file aside, and so on.
    private static func quickOpen(path: String, busyTimeout: TimeInterval) -> StateStore? {
        SharedMemoryReset.installed
        var opened: OpaquePointer?
        guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, nil) == SQLITE_OK,
              let connection = opened else {
            sqlite3_close(opened)
            return nil
        }
        sqlite3_busy_timeout(connection, Int32(clamping: Int(busyTimeout * 1000)))
        // The settings of `makeQueue`'s connection (see there), as this one
        // writes the history too.
        let settings = "PRAGMA cache_size = -\(pageCacheKiB); PRAGMA journal_size_limit = \(walSizeLimit); "
            + "PRAGMA synchronous = OFF; PRAGMA wal_autocheckpoint = 0"
        guard sqlite3_exec(connection, settings, nil, nil, nil) == SQLITE_OK,
              let mode = try? SQLiteStatement.single(connection, "PRAGMA journal_mode"), mode == "wal",
              let version = try? SQLiteStatement.single(connection, "PRAGMA user_version"), version == String(schemaVersion),
              (try? probe(connection, tables: probedTables)) != nil else {
            sqlite3_close(connection)
            return nil
        }
        let store = StateStore(path: path, queue: SharedJob { Result { try makeQueue(path: path, busyTimeout: busyTimeout, readonly: false) } },
                               quick: connection)
        store.checkpointInBackground()
        return store
    }

    private static func make(path: String, busyTimeout: TimeInterval, readonly: Bool) throws -> StateStore {
        SharedMemoryReset.installed
        let db = try makeQueue(path: path, busyTimeout: busyTimeout, readonly: readonly)
        let store = StateStore(path: path, queue: SharedJob { .success(db) })
        store.readonly = readonly
        if readonly {
            _ = try db.read { try Int.fetchOne($0, sql: "PRAGMA user_version") }
        } else {
            try store.migrate()
        }
        try db.read { db in try db.sqliteConnection.map(probe) }
        if !readonly { store.checkpointInBackground() }
        return store
    }

    /// GRDB's queue on the store, with moon's settings.
    private static func makeQueue(path: String, busyTimeout: TimeInterval, readonly: Bool) throws -> DatabaseQueue {
        var config = Configuration()
        // The writer turns WAL on itself (below): with `journalMode = .wal`
        // GRDB also reads the -wal file's size through Foundation's URL
        // resource values, which look up the file owner's user and group
        // names (NSS: nscd's socket, /etc/passwd, /etc/group), ~0.3 ms of
        // every start. GRDB's step makes sure a -wal file exists for
        // readers of a DatabasePool; moon reads through this same queue.
        config.journalMode = readonly ? .wal : .default
        config.busyMode = .timeout(busyTimeout)
        config.readonly = readonly
        config.label = "moon.state"
        // SQLite's default page cache (2 MiB per connection) fills up as the
        // history grows (`lastDurations` reads every recorded node run), and
        // it was a visible part of moon's peak RSS. moon's queries are point
        // lookups and one short write transaction per run; the kernel's page
        // cache holds the file anyway.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -\(Self.pageCacheKiB)")
            // A WAL left longer than this is cut back when it restarts.
            try db.execute(sql: "PRAGMA journal_size_limit = \(Self.walSizeLimit)")
            if !readonly {
                // (A no-op read once the file is in WAL mode, which persists.)
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else {
                    throw DatabaseError(message: "cannot turn on WAL mode (journal_mode is \(mode ?? "unknown"))")
                }
            }
        }
        let db = try DatabaseQueue(path: path, configuration: config)
        if !readonly {
            // Commits are not synced to disk, and this connection does not
            // checkpoint: the background checkpoint (`checkpointInBackground`,
            // with full syncs) is what writes the database file. A power loss
            // can then lose the last runs' commits (their history, their
            // nodes' fingerprints: those nodes run again) but not corrupt the
            // file. (ninja never syncs its logs either.) What it saves: a sync
            // of the WAL (1–2 ms here) after the last node, at every run's
            // end.
            try db.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = OFF")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
        }
        return db
    }

    /// The WAL's size after a checkpoint, at most (bytes).
    static let walSizeLimit = 1 << 20

    /// Copies what earlier runs left in the WAL into the database, on a
    /// connection and a thread of its own, while this run goes on.
    ///
    /// Why: moon exits without closing its connection (closing would
    /// checkpoint at the end of every run, with two fsyncs: 1.5–3.5 ms after
    /// the last node), so the WAL keeps every run's writes until SQLite's
    /// automatic checkpoint at 1000 pages. The first connection of a process
    /// reads the whole WAL to rebuild its index: with 4.6 MB left by earlier
    /// runs, opening the store took 4.5 ms of every start. Checkpointed
    /// here, the WAL restarts at this run's own write, and the next start
    /// reads one run's pages. A checkpoint never blocks readers or writers
    /// (PASSIVE), and one cut short by moon's exit is safe (SQLite's
    /// checkpoints are atomic).
    ///
    /// On SQLite's C API and a POSIX thread: a second GRDB queue and the
    /// process's first Foundation `Thread` cost ~1.5 ms of CPU while the
    /// run's first nodes start, for one checkpoint call.
    private func checkpointInBackground() {
        let path = self.path
        let started = BackgroundThread.start(name: "moon.checkpoint") { [self] in
            defer { backgroundCheckpointDone.signal() }
            // SQLITE_OPEN_READWRITE without CREATE: nothing is made if the
            // file is gone meanwhile.
            var connection: OpaquePointer?
            guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
                  let connection else {
                sqlite3_close(connection)
                return
            }
            // The WAL is synced before the database is written, and the
            // database after: a checkpoint cut short by a crash is harmless.
            if sqlite3_exec(connection, "PRAGMA synchronous = FULL", nil, nil, nil) == SQLITE_OK {
                sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            }
            // Kept open, not closed: closing the last connection but one is
            // harmless, but this one goes with the store (closing it here
            // would race moon's exit for nothing).
            checkpointLock.withLock { checkpointConnection = connection }
        }
        if !started { backgroundCheckpointDone.signal() }
    }

    /// Waits at most `seconds` for this store's background checkpoint to end.
    func waitForBackgroundCheckpoint(seconds: Double) {
        if backgroundCheckpointDone.wait(timeout: .now() + seconds) == .success { backgroundCheckpointDone.signal() }
    }

    /// Signalled when the background checkpoint has ended (or never ran).
    private let backgroundCheckpointDone = DispatchSemaphore(value: 0)
    private let checkpointLock = NSLock()
    private var checkpointConnection: OpaquePointer?

    private func migrate() throws {
        try db.write { db in
            let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            guard version < Self.schemaVersion else {
                if version > Self.schemaVersion {
                    throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "made by a newer moon (schema \(version))")
                }
                return
            }
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS files (
                    path TEXT PRIMARY KEY NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    racy INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS node_state (
                    graph TEXT NOT NULL,
                    node TEXT NOT NULL,
                    fingerprint BLOB NOT NULL,
                    command BLOB NOT NULL,
                    environment BLOB NOT NULL,
                    needs BLOB NOT NULL,
                    sources BLOB NOT NULL,
                    manifest BLOB NOT NULL,
                    outputs TEXT NOT NULL,
                    node_values TEXT NOT NULL,
                    updated_at REAL NOT NULL,
                    deps BLOB,
                    PRIMARY KEY (graph, node)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS runs (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    graph TEXT NOT NULL,
                    started_at REAL NOT NULL,
                    duration_ms INTEGER NOT NULL,
                    ok INTEGER NOT NULL,
                    forced INTEGER NOT NULL,
                    succeeded INTEGER NOT NULL,
                    failed INTEGER NOT NULL,
                    skipped INTEGER NOT NULL,
                    up_to_date INTEGER NOT NULL,
                    canceled INTEGER NOT NULL
                );
                CREATE INDEX IF NOT EXISTS runs_by_graph ON runs (graph, id);
                CREATE TABLE IF NOT EXISTS node_runs (
                    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                    node TEXT NOT NULL,
                    started_at REAL,
                    duration_ms INTEGER,
                    result TEXT NOT NULL,
                    attempts INTEGER NOT NULL,
                    PRIMARY KEY (run_id, node)
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS run_nodes (
                    run_id INTEGER PRIMARY KEY NOT NULL,
                    nodes TEXT NOT NULL
                );
                CREATE TABLE IF NOT EXISTS node_durations (
                    graph TEXT NOT NULL,
                    node TEXT NOT NULL,
                    duration_ms INTEGER NOT NULL,
                    run_id INTEGER NOT NULL,
                    PRIMARY KEY (graph, node)
                ) WITHOUT ROWID;
                PRAGMA user_version = \(Self.schemaVersion);
                """)
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('node_state')")
            if !columns.contains("deps") {
                try db.execute(sql: "ALTER TABLE node_state ADD COLUMN deps BLOB")
            }
            if version == 1 {
                // Each node's newest success, from the history so far.
                try db.execute(sql: """
                    INSERT OR REPLACE INTO node_durations (graph, node, duration_ms, run_id)
                    SELECT r.graph, n.node, n.duration_ms, n.run_id FROM node_runs n JOIN runs r ON r.id = n.run_id
                    WHERE n.result = 'succeeded' AND n.duration_ms IS NOT NULL ORDER BY n.run_id
                    """)
            }
        }
    }

    /// `PRAGMA integrity_check`: "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try db.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") ?? "?" }
    }

    // MARK: - Stat cache

    public func loadFileCache() throws -> [String: StatCache.Entry] {
        try db.read { db in
            var result: [String: StatCache.Entry] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT path, size, mtime_ns, inode, hash, racy FROM files")
            while let row = try rows.next() {
                let hashData: Data = row[4]
                guard let hash = ContentHash(bytes: hashData) else { continue }
                let inode: Int64 = row[3]
                let stat = FileStat(size: row[1], mtimeNanoseconds: row[2], inode: UInt64(bitPattern: inode))
                result[row[0]] = StatCache.Entry(stat: stat, hash: hash, racy: row[5])
            }
            return result
        }
    }

    static func saveFiles(_ entries: [String: StatCache.Entry], in db: Database) throws {
        guard !entries.isEmpty else { return }
        let statement = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO files (path, size, mtime_ns, inode, hash, racy) VALUES (?, ?, ?, ?, ?, ?)
            """)
        for (path, entry) in entries {
            try statement.execute(arguments: [path, entry.stat.size, entry.stat.mtimeNanoseconds,
                                              Int64(bitPattern: entry.stat.inode), Data(entry.hash.bytes), entry.racy])
        }
    }

    public func saveFileCache(_ entries: [String: StatCache.Entry]) throws {
        guard !entries.isEmpty else { return }
        try db.write { try Self.saveFiles(entries, in: $0) }
    }

    // MARK: - Node state

    public func nodeState(graph: String, node: String) throws -> StoredNode? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT \(Self.nodeStateColumns) FROM node_state WHERE graph = ? AND node = ?
                """, arguments: [graph, node]) else { return nil }
            return Self.storedNode(row)
        }
    }

    /// Every node state of `graph`, by node name, in one read: a run that
    /// checks many nodes spares a transaction and a statement per node.
    public func nodeStates(graph: String) throws -> [String: StoredNode] {
        try db.read { db in
            var result: [String: StoredNode] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT node, \(Self.nodeStateColumns) FROM node_state WHERE graph = ?",
                                           arguments: [graph])
            while let row = try rows.next() {
                result[row[0]] = Self.storedNode(row, from: 1)
            }
            return result
        }
    }

    private static let nodeStateColumns = "fingerprint, command, environment, needs, sources, manifest, outputs, node_values, updated_at, deps"

    private static func storedNode(_ row: Row, from o: Int = 0) -> StoredNode {
        func hash(_ i: Int) -> ContentHash { ContentHash(bytes: row[o + i] as Data) ?? .zero }
        let fingerprint = NodeFingerprint(command: hash(1), environment: hash(2), needs: hash(3), sources: hash(4),
                                          manifest: Manifest(encoded: row[o + 5]), combined: hash(0))
        return StoredNode(fingerprint: fingerprint, outputs: decodePairs(row[o + 6]), values: decodeList(row[o + 7]),
                          updatedAt: Date(timeIntervalSince1970: row[o + 8]), deps: (row[o + 9] as Data?).map(decodePaths))
    }

    /// Marks the last successes of these nodes as unfinished (their
    /// fingerprint all zeros; the manifest stays, so their files need not
    /// be read again): they started again, and until they succeed they are
    /// not up to date.
    public func markUnfinished(graph: String, nodes: [String]) throws {
        try db.write { db in
            let statement = try db.cachedStatement(sql: "UPDATE node_state SET fingerprint = ? WHERE graph = ? AND node = ?")
            let zero = Data(count: 32)
            for node in nodes { try statement.execute(arguments: [zero, graph, node]) }
        }
    }

    /// Saves the fingerprints and outputs of nodes that succeeded, with the
    /// stat cache entries hashed since the last save, in one transaction.
    public func saveNodeStates(graph: String, _ nodes: [(String, StoredNode)], files: [String: StatCache.Entry]) throws {
        try db.write { db in
            try Self.saveFiles(files, in: db)
            let statement = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO node_state
                (graph, node, fingerprint, command, environment, needs, sources, manifest, outputs, node_values, updated_at, deps)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for (node, state) in nodes {
                let f = state.fingerprint
                try statement.execute(arguments: [
                    graph, node, Data(f.combined.bytes), Data(f.command.bytes), Data(f.environment.bytes),
                    Data(f.needs.bytes), Data(f.sources.bytes), f.manifest.encoded,
                    Self.encodePairs(state.outputs), Self.encodeList(state.values), state.updatedAt.timeIntervalSince1970,
                    state.deps.map(Self.encodePaths),
                ])
            }
        }
    }

    /// A depfile's paths, each ended by a NUL byte (no path holds one).
    static func encodePaths(_ paths: [String]) -> Data {
        var out: [UInt8] = []
        for path in paths {
            out.append(contentsOf: path.utf8)
            out.append(0)
        }
        return Data(out)
    }

    static func decodePaths(_ data: Data) -> [String] {
        // Over the bytes in place: `Data.split` makes a generic slice per
        // path, and every run decodes the lists of all the graph's nodes.
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [String] in
            var paths: [String] = []
            var start = 0
            for end in 0...raw.count where end == raw.count || raw[end] == 0 {
                if end > start { paths.append(String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<end]), as: UTF8.self)) }
                start = end + 1
            }
            return paths
        }
    }

    static func encodePairs(_ pairs: [(String, String)]) -> String {
        let data = try? JSONSerialization.data(withJSONObject: pairs.map { [$0.0, $0.1] })
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    static func decodePairs(_ text: String) -> [(String, String)] {
        // Most nodes have none: no JSON parser for them.
        if text == "[]" { return [] }
        guard let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String]] else { return [] }
        return array.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    static func encodeList(_ list: [String]) -> String {
        let data = try? JSONSerialization.data(withJSONObject: list)
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    static func decodeList(_ text: String) -> [String] {
        if text == "[]" { return [] }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String]) ?? []
    }

    // MARK: - History

    /// How many runs of a graph the history keeps.
    public static let historyLimit = 500

    public func record(_ run: RunRecord) throws {
        // Through SQLite's C API: GRDB parsed the SQL (three statements) and
        // matched its arguments by name at every run's end. On the quick
        // open's connection when there is one: no GRDB queue to make for a
        // run that needed none, and no GRDB authorizer called back for
        // every column the statements touch.
        if let quick {
            try SQLiteStatement.inTransaction(quick) { try write(run, on: quick) }
        } else {
            try db.write { db in
                guard let connection = db.sqliteConnection else { return }
                try write(run, on: connection)
            }
        }
        try checkpointIfLarge()
    }

    private func write(_ run: RunRecord, on connection: OpaquePointer) throws {
        let insert = try SQLiteStatement(connection, """
            INSERT INTO runs (graph, started_at, duration_ms, ok, forced, succeeded, failed, skipped, up_to_date, canceled)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(1, run.graph)
        insert.bind(2, run.startedAt.timeIntervalSince1970)
        let counts = [run.durationMilliseconds, run.ok ? 1 : run.interrupted ? 2 : 0, run.forced ? 1 : 0, run.succeeded, run.failed, run.skipped,
                      run.upToDate, run.canceled]
        for (offset, value) in counts.enumerated() { insert.bind(Int32(3 + offset), Int64(value)) }
        try insert.run()
        let id = sqlite3_last_insert_rowid(connection)
        try Self.insertNodeRuns(run.nodes, runID: id, graph: run.graph, known: readDurations(run.graph), on: connection)
        // Keep the newest runs only.
        let oldest = id - Int64(Self.historyLimit)
        for sql in ["DELETE FROM run_nodes WHERE run_id IN (SELECT id FROM runs WHERE graph = ? AND id <= ?)",
                    "DELETE FROM node_runs WHERE run_id IN (SELECT id FROM runs WHERE graph = ? AND id <= ?)",
                    "DELETE FROM runs WHERE graph = ? AND id <= ?"] {
            let delete = try SQLiteStatement(connection, sql)
            delete.bind(1, run.graph)
            delete.bind(2, oldest)
            try delete.run()
        }
    }

    /// The WAL size (bytes) beyond which a run's end checkpoints itself.
    public var walCheckpointLimit = 8 << 20

    /// The background checkpoint of `checkpointInBackground` can be cut
    /// short when moon exits first (a run of a few milliseconds on a slow
    /// disk), and this connection does not checkpoint by itself: should the
    /// WAL still grow, every start would read more of it. Past
    /// `walCheckpointLimit` the run's end checkpoints it here, with syncs,
    /// and truncates it. (One `stat` otherwise.)
    func checkpointIfLarge() throws {
        var info = stat()
        guard stat(path + "-wal", &info) == 0, Int(info.st_size) > walCheckpointLimit else { return }
        // Not while this run's background checkpoint still works (it would
        // make this one fail with SQLITE_BUSY).
        waitForBackgroundCheckpoint(seconds: 1)
        if let quick {
            try SQLiteStatement.execute(quick, "PRAGMA synchronous = FULL")
            defer { try? SQLiteStatement.execute(quick, "PRAGMA synchronous = OFF") }
            let code = sqlite3_wal_checkpoint_v2(quick, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil)
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(quick)))
            }
            return
        }
        try db.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            defer { try? db.execute(sql: "PRAGMA synchronous = OFF") }
            try db.checkpoint(.truncate)
        }
    }

    /// Whether a node's new duration is near enough the recorded one to
    /// leave it (within 1 ms or 10%): the weights are rough, and most of a
    /// run's upserts of durations were of values that had not changed.
    static func close(_ duration: Int, _ recorded: Int?) -> Bool {
        guard let recorded else { return false }
        return abs(duration - recorded) <= max(1, recorded / 10)
    }

    /// Run `runID`'s nodes (one `run_nodes` row, see `NodeRunsText`), and
    /// the duration of each node that succeeded and is not `close` to what
    /// `known` (the durations read at the start) has (`node_durations`, which
    /// `lastDurations` reads), through SQLite's C API. (A row per node,
    /// through GRDB's generic arguments, took 1.3 ms of a 1000-node run's
    /// end; through the C API still ~1 ms.)
    static func insertNodeRuns(_ nodes: [NodeRunRecord], runID: Int64, graph: String, known: [String: Int],
                               on connection: OpaquePointer) throws {
        let runs = try SQLiteStatement(connection, "INSERT OR REPLACE INTO run_nodes (run_id, nodes) VALUES (?, ?)")
        runs.bind(1, runID)
        runs.bind(2, NodeRunsText.encode(nodes))
        try runs.run()
        let durations = try SQLiteStatement(connection, """
            INSERT OR REPLACE INTO node_durations (graph, node, duration_ms, run_id) VALUES (?, ?, ?, ?)
            """)
        for node in nodes {
            if node.result == .succeeded, let duration = node.durationMilliseconds, !Self.close(duration, known[node.node]) {
                durations.bind(1, graph)
                durations.bind(2, node.node)
                durations.bind(3, Int64(duration))
                durations.bind(4, runID)
                try durations.run()
            }
        }
    }

    /// The newest `limit` runs of `graph`, newest first, with their nodes.
    public func recentRuns(graph: String, limit: Int) throws -> [RunRecord] {
        try db.read { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT id, started_at, duration_ms, ok, forced, succeeded, failed, skipped, up_to_date, canceled
                FROM runs WHERE graph = ? ORDER BY id DESC LIMIT ?
                """, arguments: [graph, limit])
            return try rows.map { row in
                let outcome: Int = row[3]
                var run = RunRecord(graph: graph, startedAt: Date(timeIntervalSince1970: row[1]), durationMilliseconds: row[2],
                                    ok: outcome == 1, forced: row[4])
                run.interrupted = outcome == 2
                run.id = row[0]
                run.succeeded = row[5]
                run.failed = row[6]
                run.skipped = row[7]
                run.upToDate = row[8]
                run.canceled = row[9]
                if let text = try String.fetchOne(db, sql: "SELECT nodes FROM run_nodes WHERE run_id = ?", arguments: [run.id]) {
                    // Ordered as the rows were: started first, by start, then by name.
                    run.nodes = NodeRunsText.decode(text).sorted { a, b in
                        switch (a.startedAt, b.startedAt) {
                        case let (x?, y?) where x != y: return x < y
                        case (nil, _?): return false
                        case (_?, nil): return true
                        default: return a.node < b.node
                        }
                    }
                    return run
                }
                // A run recorded before schema 3: a row per node.
                let nodes = try Row.fetchAll(db, sql: """
                    SELECT node, started_at, duration_ms, result, attempts FROM node_runs WHERE run_id = ? ORDER BY started_at IS NULL, started_at, node
                    """, arguments: [run.id])
                run.nodes = nodes.map { n in
                    let started: Double? = n[1]
                    return NodeRunRecord(node: n[0], startedAt: started.map(Date.init(timeIntervalSince1970:)),
                                         durationMilliseconds: n[2], result: NodeRunRecord.Result(rawValue: n[3]) ?? .failed,
                                         attempts: n[4])
                }
                return run
            }
        }
    }

    /// For each node of `graph`, how long its latest successful run took (ms).
    public func lastDurations(graph: String) throws -> [String: Int] {
        // Each node's newest success is kept as it happens (`node_durations`):
        // one row per node, no sorting of ten runs' rows (which took 3 ms of
        // every start of a 1000-node graph).
        func read(_ connection: OpaquePointer) throws -> [String: Int] {
            let query = try SQLiteStatement(connection, "SELECT node, duration_ms FROM node_durations WHERE graph = ?")
            query.bind(1, graph)
            var result: [String: Int] = [:]
            while try query.step() {
                result[query.text(0)] = Int(query.int64(1))
            }
            return result
        }
        // On the quick open's connection when there is one: GRDB's queue may
        // not be made yet.
        let result: [String: Int]
        if let quick {
            result = try read(quick)
        } else {
            result = try db.read { db in try db.sqliteConnection.map(read) ?? [:] }
        }
        durationsLock.withLock { durationsRead[graph] = result }
        return result
    }

    /// What `lastDurations` returned for `graph` in this process ([:] if not
    /// asked): `record` leaves durations that are `close` to these.
    private func readDurations(_ graph: String) -> [String: Int] {
        durationsLock.withLock { durationsRead[graph] ?? [:] }
    }

    private let durationsLock = NSLock()
    private var durationsRead: [String: [String: Int]] = [:]
}

/// What the store keeps of a node's last successful run.
public struct StoredNode: Sendable {
    public var fingerprint: NodeFingerprint
    public var outputs: [(String, String)]
    public var values: [String]
    public var updatedAt: Date
    /// For a node with a `depfile`, the files it listed after this success
    /// (relative to the graph file's directory); nil when it was not read.
    public var deps: [String]?

    /// The node started after this success and has not succeeded since (`markUnfinished`).
    public var unfinished: Bool { fingerprint.combined == ContentHash.zero }

    public init(fingerprint: NodeFingerprint, outputs: [(String, String)], values: [String], updatedAt: Date, deps: [String]? = nil) {
        self.fingerprint = fingerprint
        self.deps = deps
        self.outputs = outputs
        self.values = values
        self.updatedAt = updatedAt
    }
}
