import Foundation
import GRDB
import GRDBSQLite

/// The history of runs (`runs`, with each run's nodes in one `run_nodes`
/// row) and each node's newest successful duration (`node_durations`), which
/// the next run's priorities weigh.
extension StateStore {
    /// How many runs of a graph the history keeps.
    public static let historyLimit = 500

    /// Adds `run` to the history, updates the durations of its nodes that
    /// succeeded, and drops the runs past `historyLimit`, in one transaction.
    /// A run that changed nothing in the store appends it to the journal
    /// instead (`HistoryJournal`); one that writes here takes the journal's
    /// runs with it, before its own.
    public func record(_ run: RunRecord) throws {
        if !changedHere, HistoryJournal.append(run, store: path) { return }
        let journal = HistoryJournal.take(store: path)
        // The journal's runs replace the durations read at the start: this run's are all written after them.
        let known = journal == nil ? durationsRead(graph: run.graph) : [:]
        // Straight through SQLite (`SQLiteRows.run`): a run that ran one
        // command writes this and nothing else.
        try db.writeWithoutTransaction { db in
            try SQLiteRows.transaction(db) {
                if let journal { try Self.fold(journal.runs, in: db) }
                let id = try Self.insert(run, known: known, in: db)
                try Self.prune(graph: run.graph, newest: id, in: db)
            }
        }
        journal?.emptied()
    }

    /// Moves the journal's runs into the store, for a reader of the history
    /// (`open` without `create`); nothing when there are none, or the
    /// journal is locked or the store cannot take them (they wait there).
    static func foldJournal(store path: String, busyTimeout: TimeInterval) {
        guard let journal = HistoryJournal.take(store: path) else { return }
        do {
            let queue = try makeQueueWaiting(path: path, busyTimeout: busyTimeout, readonly: false, fresh: false).queue
            try queue.writeWithoutTransaction { db in try SQLiteRows.transaction(db) { try fold(journal.runs, in: db) } }
            journal.emptied()
            // Left open until the process exits, as the run's own: the last
            // connection's closing would checkpoint the WAL, with its syncs.
            _ = Unmanaged.passRetained(queue)
        } catch {
            journal.release()
        }
    }

    /// Moves the journal's runs in before a read of the history: a reader's
    /// opening moved them, a writer (the run's own store) does it here.
    /// The durations (`lastDurations`) are read without: a run's weights
    /// may lag the runs in the journal.
    func foldJournalHere() {
        guard !readonly, let journal = HistoryJournal.take(store: path) else { return }
        do {
            try db.writeWithoutTransaction { db in try SQLiteRows.transaction(db) { try Self.fold(journal.runs, in: db) } }
            journal.emptied()
        } catch {
            journal.release()
        }
    }

    /// Inserts the journal's runs (oldest first) and drops the runs past
    /// the limit. A run already in the store (the same graph, start,
    /// duration and nodes: a journal taken before, whose emptying did not
    /// happen) is not taken twice.
    static func fold(_ runs: [RunRecord], in db: Database) throws {
        var newest: [String: Int64] = [:]
        for run in runs {
            var stored = false
            try SQLiteRows.each(db, sql: """
                SELECT 1 FROM runs r JOIN run_nodes n ON n.run_id = r.id
                WHERE r.graph = ? AND r.started_at = ? AND r.duration_ms = ? AND n.nodes = ? LIMIT 1
                """, arguments: [run.graph, run.startedAt.timeIntervalSince1970, run.durationMilliseconds,
                                 NodeRunsText.encode(run.nodes)]) { _ in stored = true }
            guard !stored else { continue }
            newest[run.graph] = try insert(run, known: [:], in: db)
        }
        for (graph, id) in newest { try prune(graph: graph, newest: id, in: db) }
    }

    /// Inserts `run` (its row, its nodes, its trace); its id.
    private static func insert(_ run: RunRecord, known: [String: Int], in db: Database) throws -> Int64 {
        try SQLiteRows.run(db, """
            INSERT INTO runs (graph, started_at, duration_ms, ok, forced, succeeded, failed, skipped, up_to_date, canceled, peak)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [run.graph.databaseValue, run.startedAt.timeIntervalSince1970.databaseValue,
                  run.durationMilliseconds.databaseValue, (run.ok ? 1 : run.interrupted ? 2 : 0).databaseValue,
                  run.forced.databaseValue, run.succeeded.databaseValue, run.failed.databaseValue,
                  run.skipped.databaseValue, run.upToDate.databaseValue, run.canceled.databaseValue, run.peak.databaseValue])
        let id = sqlite3_last_insert_rowid(db.sqliteConnection)
        try insertNodeRuns(run.nodes, runID: id, graph: run.graph, known: known, in: db)
        if let trace = run.trace { try insertTrace(trace, runID: id, graph: run.graph, in: db) }
        return id
    }

    /// Drops `graph`'s runs past `historyLimit` before run `id`, with their nodes and traces.
    private static func prune(graph: String, newest id: Int64, in db: Database) throws {
        // A store's first runs have none to drop, and no statement to prepare for it.
        let oldest = id - Int64(historyLimit)
        guard oldest > 0 else { return }
        try SQLiteRows.run(db, "DELETE FROM runs WHERE graph = ? AND id <= ?", [graph.databaseValue, oldest.databaseValue])
        // Their nodes, only when runs went (most runs drop none): no
        // run of any graph at or below `oldest` has its nodes without
        // its `runs` row, as every drop ends here.
        guard sqlite3_changes(db.sqliteConnection) > 0 else { return }
        for table in ["run_nodes", "node_runs", "run_traces"] {
            try SQLiteRows.run(db, "DELETE FROM " + table + " WHERE run_id <= ? AND run_id NOT IN (SELECT id FROM runs)",
                               [oldest.databaseValue])
        }
    }

    /// Whether a node's new duration is near enough the recorded one to
    /// leave it (within 1 ms or 10%): the weights are rough, and most
    /// durations would be rewritten with a value that has not changed.
    static func close(_ duration: Int, _ recorded: Int?) -> Bool {
        guard let recorded else { return false }
        return abs(duration - recorded) <= max(1, recorded / 10)
    }

    /// Run `runID`'s nodes (one `run_nodes` row, see `NodeRunsText`), and
    /// the duration of each node that succeeded and is not `close` to what
    /// `known` (the durations read at the start) has.
    static func insertNodeRuns(_ nodes: [NodeRunRecord], runID: Int64, graph: String, known: [String: Int], in db: Database) throws {
        try SQLiteRows.run(db, "INSERT OR REPLACE INTO run_nodes (run_id, nodes) VALUES (?, ?)",
                           [runID.databaseValue, NodeRunsText.encode(nodes).databaseValue])
        // One prepared statement for every row, prepared only when a duration changed.
        var durations: Statement?
        for node in nodes {
            if node.result == .succeeded, let duration = node.durationMilliseconds, !Self.close(duration, known[node.node]) {
                let statement = try durations ?? db.cachedStatement(sql: """
                    INSERT OR REPLACE INTO node_durations (graph, node, duration_ms, run_id) VALUES (?, ?, ?, ?)
                    """)
                durations = statement
                statement.setUncheckedArguments([graph, node.node, duration, runID])
                try statement.execute()
            }
        }
    }

    /// The newest `limit` runs of `graph`, newest first, with their nodes.
    public func recentRuns(graph: String, limit: Int) throws -> [RunRecord] {
        foldJournalHere()
        return try reading { db in
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
                run.nodes = try Self.nodes(ofRun: run.id, in: db)
                return run
            }
        }
    }

    /// The largest peak memory (`RunRecord.peak`) of the graph's newest
    /// `limit` runs in the store and of its runs in the journal, read
    /// without their nodes: no node learns more than it from what
    /// `recentSuccesses` reads. nil when a run has none recorded (an older
    /// moon's, or the store's `runs` lacks the column) or the store cannot be read.
    /// A store read from a no-op snapshot answers from the peak the
    /// snapshot keeps (the store is what it was then): no SQLite.
    public func recentPeak(graph: String, limit: Int) -> Int64? {
        guard let journaled = HistoryJournal.peaks(store: path, graph: graph) else { return nil }
        let stored: Int64?
        if let snapshot, snapshot.graph == graph, limit == LearnedResources.searched {
            stored = snapshot.peak
        } else {
            stored = try? storedPeak(graph: graph, limit: limit)
        }
        return stored.map { max($0, journaled.max() ?? 0) }
    }

    /// The largest peak of the graph's newest `limit` runs in the store; nil
    /// when one has none recorded (an older moon's, or `runs` lacks the column).
    func storedPeak(graph: String, limit: Int) throws -> Int64? {
        try reading { db in
            var peak: Int64? = 0
            do {
                try SQLiteRows.each(db, sql: "SELECT peak FROM runs WHERE graph = ? ORDER BY id DESC LIMIT ?", arguments: [graph, limit]) { row in
                    peak = sqlite3_column_type(row, 0) == SQLITE_NULL ? nil : peak.map { max($0, sqlite3_column_int64(row, 0)) }
                }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
                return nil
            }
            return peak
        }
    }

    /// The nodes that succeeded in the graph's newest `limit` runs, oldest
    /// run first: name, duration and peak memory. What learning reads
    /// (`LearnedResources`), without making a record of every node of every run.
    /// The journal's runs count as the newest, read without taking them
    /// in: learning happens as a run starts, which then writes nothing.
    public func recentSuccesses(graph: String, limit: Int) throws -> [(node: String, milliseconds: Int, peak: Int64?)] {
        let journaled = HistoryJournal.peek(store: path).filter { $0.graph == graph }.suffix(limit).map { run in
            run.nodes.compactMap { node in
                node.result == .succeeded ? node.durationMilliseconds.map { (node: node.node, milliseconds: $0, peak: node.maxRSSBytes) } : nil
            }
        }
        let stored = try reading { db in
            var runs: [[(node: String, milliseconds: Int, peak: Int64?)]] = []
            try SQLiteRows.each(db, sql: """
                SELECT r.id, n.nodes FROM runs r LEFT JOIN run_nodes n ON n.run_id = r.id WHERE r.graph = ? ORDER BY r.id DESC LIMIT ?
                """, arguments: [graph, max(0, limit - journaled.count)]) { row in
                var successes: [(node: String, milliseconds: Int, peak: Int64?)] = []
                if sqlite3_column_type(row, 1) == SQLITE_NULL {
                    // A run recorded before schema 3: a row per node.
                    for node in try Self.nodes(ofRun: sqlite3_column_int64(row, 0), in: db) where node.result == .succeeded {
                        if let duration = node.durationMilliseconds { successes.append((node.node, duration, node.maxRSSBytes)) }
                    }
                } else {
                    NodeRunsText.successes(SQLiteRows.blob(row, 1).assumingMemoryBound(to: UInt8.self)) { successes.append(($0, $1, $2)) }
                }
                runs.append(successes)
            }
            return runs.reversed()
        }
        return (stored + journaled).suffix(limit).flatMap { $0 }
    }

    /// A run's nodes: started first, by start, then by name.
    private static func nodes(ofRun id: Int64, in db: Database) throws -> [NodeRunRecord] {
        if let text = try String.fetchOne(db, sql: "SELECT nodes FROM run_nodes WHERE run_id = ?", arguments: [id]) {
            return NodeRunsText.decode(text).sorted { a, b in
                switch (a.startedAt, b.startedAt) {
                case let (x?, y?) where x != y: return x < y
                case (nil, _?): return false
                case (_?, nil): return true
                default: return a.node < b.node
                }
            }
        }
        // A run recorded before schema 3: a row per node.
        let rows = try Row.fetchAll(db, sql: """
            SELECT node, started_at, duration_ms, result, attempts FROM node_runs WHERE run_id = ? ORDER BY started_at IS NULL, started_at, node
            """, arguments: [id])
        return rows.map { n in
            let started: Double? = n[1]
            return NodeRunRecord(node: n[0], startedAt: started.map(Date.init(timeIntervalSince1970:)),
                                 durationMilliseconds: n[2], result: NodeRunRecord.Result(rawValue: n[3]) ?? .failed,
                                 attempts: n[4])
        }
    }

    /// For each node of `graph`, how long its latest successful run took (ms).
    public func lastDurations(graph: String) throws -> [String: Int] {
        if let snapshot, snapshot.graph == graph {
            rememberDurations(snapshot.durations, graph: graph)
            return snapshot.durations
        }
        let result = try storedDurations(graph: graph)
        rememberDurations(result, graph: graph)
        return result
    }

    /// `graph`'s durations as the store holds them now (never a snapshot's).
    private func storedDurations(graph: String) throws -> [String: Int] {
        try reading { db in
            var result: [String: Int] = [:]
            try SQLiteRows.each(db, sql: "SELECT node, duration_ms FROM node_durations WHERE graph = ?", arguments: [graph]) { row in
                result[SQLiteRows.text(row, 0)] = SQLiteRows.int(row, 1)
            }
            return result
        }
    }

    /// After a run: keeps a snapshot of `graph`'s node states and durations
    /// (`NoopSnapshot`) for the next run to read without SQLite (the rows
    /// this run read, when the store's files are as they were then; else
    /// read again), unless this run read one and wrote nothing (it stands),
    /// the store's files are not settled at `now` (ns; the clock's by
    /// default: `NoopSnapshot.settled`), or they changed while being read.
    /// Returns whether one was written.
    @discardableResult
    public func saveNoopSnapshot(graph: String, now: Int64? = nil) -> Bool {
        guard !readonly else { return false }
        // A run that read a snapshot answers from it: after writing, only the store itself is current.
        let wrote = changedHere
        guard snapshot == nil || wrote else { return false }
        let before = NoopSnapshot.stamps(store: path)
        guard before[0].exists, NoopSnapshot.settled(before, now: now ?? NoopSnapshot.now()) else { return false }
        var writer = NoopSnapshot.Writer(stamps: before, graph: graph, schema: StateSchema.version)
        do {
            writer.appendDurations(wrote ? try storedDurations(graph: graph) : try lastDurations(graph: graph))
            writer.appendPeak(try storedPeak(graph: graph, limit: LearnedResources.searched))
            if !wrote, let read = rowsRead(graph: graph), read.stamps == before {
                writer.append(rows: read.rows)
            } else {
                try nodeStateRows(graph: graph, into: &writer)
            }
        } catch {
            return false
        }
        guard NoopSnapshot.stamps(store: path) == before else { return false }
        return NoopSnapshot.save(&writer, to: NoopSnapshot.path(store: path, graph: graph))
    }
}
