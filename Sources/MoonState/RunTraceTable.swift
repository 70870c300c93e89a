import GRDB

/// The traces of recent runs (`run_traces`: a row per run that ran
/// something, written with its `runs` row), for `moon trace --run N`. Only
/// the newest `traceLimit` runs of a graph keep theirs: a trace holds every
/// attempt and its command, and is read far less often than the history.
extension StateStore {
    public static let traceLimit = 50

    /// Stores run `runID`'s trace and drops the graph's traces past
    /// `traceLimit`, inside the caller's transaction.
    static func insertTrace(_ trace: String, runID: Int64, graph: String, in db: Database) throws {
        try SQLiteRows.run(db, "INSERT OR REPLACE INTO run_traces (run_id, graph, trace) VALUES (?, ?, ?)",
                           [runID.databaseValue, graph.databaseValue, trace.databaseValue])
        try SQLiteRows.run(db, "DELETE FROM run_traces WHERE graph = ? AND run_id <= ?",
                           [graph.databaseValue, (runID - Int64(traceLimit)).databaseValue])
    }

    /// The trace of run `id` of `graph`, or of its newest run that has one
    /// (`id` nil); nil when there is none. The run's id comes with it.
    public func trace(graph: String, run id: Int64?) throws -> (id: Int64, trace: String)? {
        foldJournalHere()
        return try reading { db in
            let row: Row?
            if let id {
                row = try Row.fetchOne(db, sql: "SELECT run_id, trace FROM run_traces WHERE graph = ? AND run_id = ?", arguments: [graph, id])
            } else {
                row = try Row.fetchOne(db, sql: "SELECT run_id, trace FROM run_traces WHERE graph = ? ORDER BY run_id DESC LIMIT 1",
                                       arguments: [graph])
            }
            return row.map { (id: $0[0], trace: $0[1]) }
        }
    }

    /// Whether run `id` of `graph` is in the history (to tell "no such run" from "no trace kept").
    public func hasRun(graph: String, id: Int64) throws -> Bool {
        foldJournalHere()
        return try reading { db in
            try Int.fetchOne(db, sql: "SELECT 1 FROM runs WHERE graph = ? AND id = ?", arguments: [graph, id]) != nil
        }
    }
}
