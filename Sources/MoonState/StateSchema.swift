import GRDB

/// The tables of `.moon/state.db` and their migrations. The version is
/// SQLite's `PRAGMA user_version`; a store of an older schema is brought up
/// to this one on its first open by a writer, keeping what it holds, and a
/// store of a newer one is left alone.
enum StateSchema {
    /// The schema this moon writes. 2 added `node_durations`; 3 `run_nodes`
    /// (a run's nodes in one row; the `node_runs` rows of earlier runs are
    /// still read); 4 `node_state.deps` (what a node's depfile listed); 5
    /// `run_traces` (what `moon trace --run N` draws of a run).
    /// `node_state.patterns` (and `runs.peak`, `addRunPeaks`) came later
    /// without a new version: a moon that does not know it writes NULL
    /// there, which only means "not known", so older moons keep using the
    /// store; it is added wherever it is missing.
    /// `node_why` (the parts of each node's last two successes, for `moon
    /// why`) came the same way: an older moon leaves it alone, and the
    /// fingerprint its rows hold tells parts an older moon outdated.
    static let version = 5

    /// The tables of this schema, probed at every open.
    static let tables = ["files", "node_state", "runs", "node_runs", "run_nodes", "node_durations", "run_traces", "sqlite_sequence",
                         "node_why"]

    /// Brings the store to `version`, inside the caller's write transaction.
    static func migrate(_ db: Database) throws {
        let found = Int.fromDatabaseValue(try StateStore.firstValue(db, sql: "PRAGMA user_version")) ?? 0
        guard found < version else {
            if found > version {
                throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "made by a newer moon (schema \(found))")
            }
            if try !hasPatterns(db) {
                try db.execute(sql: "ALTER TABLE node_state ADD COLUMN patterns BLOB")
            }
            try addRunPeaks(db)
            try db.execute(sql: nodeWhyTable)
            return
        }
        try db.execute(sql: createTables + "PRAGMA user_version = \(version);")
        let columns = try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info('node_state')")
            .compactMap { String.fromDatabaseValue($0[0]) }
        if !columns.contains("deps") {
            try db.execute(sql: "ALTER TABLE node_state ADD COLUMN deps BLOB")
        }
        if !columns.contains("patterns") {
            try db.execute(sql: "ALTER TABLE node_state ADD COLUMN patterns BLOB")
        }
        try addRunPeaks(db)
        if found == 1 {
            // Each node's newest success, from the history so far.
            try db.execute(sql: """
                INSERT OR REPLACE INTO node_durations (graph, node, duration_ms, run_id)
                SELECT r.graph, n.node, n.duration_ms, n.run_id FROM node_runs n JOIN runs r ON r.id = n.run_id
                WHERE n.result = 'succeeded' AND n.duration_ms IS NOT NULL ORDER BY n.run_id
                """)
        }
    }

    /// Adds `runs.peak` where it is missing: the largest peak memory of a
    /// run's nodes (`RunRecord.peak`), which tells learning whether it can
    /// matter without reading each node. It came without a new version: a
    /// moon that does not know it leaves NULL, "not known", and learning
    /// then reads the nodes.
    static func addRunPeaks(_ db: Database) throws {
        let columns = try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info('runs')").compactMap { String.fromDatabaseValue($0[0]) }
        if !columns.contains("peak") {
            try db.execute(sql: "ALTER TABLE runs ADD COLUMN peak INTEGER")
        }
    }

    /// Whether the store is of this schema, with every table (and
    /// `node_state.patterns`), so that nothing is to migrate, in one
    /// statement that also probes each table (see `StateStore.probe`).
    /// False when a table or the column is missing (the statement does not
    /// compile) or the version differs: `migrate` then decides. Throws what
    /// else SQLite says (corruption, busy).
    static func isCurrent(_ db: Database) throws -> Bool {
        do {
            return try SQLiteRows.firstInteger(db, currentProbe) == Int64(version)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            return false
        }
    }

    /// The version and the first row of each table (`node_state`'s names
    /// `patterns`, and `runs`'s `peak`).
    /// `node_why` and `run_traces` are only named (the statement does not compile without
    /// it), not read: a run that records nothing never touches its pages.
    /// Built by a loop: the generic `joined` costs every opening more than the statement.
    private static let currentProbe: String = {
        var sql = "SELECT user_version"
        for table in tables {
            switch table {
            case "node_state": sql += ", (SELECT patterns IS NULL FROM node_state)"
            case "runs": sql += ", (SELECT peak IS NULL FROM runs)"
            case "node_why", "run_traces": sql += ", (SELECT 1 FROM " + table + " WHERE 0)"
            default: sql += ", (SELECT 1 FROM " + table + ")"
            }
        }
        return sql + " FROM pragma_user_version"
    }()

    /// Whether `node_state` has its `patterns` column: one look at the
    /// table's definition, no scan.
    static func hasPatterns(_ db: Database) throws -> Bool {
        let definition = String.fromDatabaseValue(try StateStore.firstValue(db, sql: """
            SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'node_state'
            """)) ?? ""
        return definition.contains("patterns")
    }

    /// `moon why`'s record of a node: the parts (`FingerprintParts.json`)
    /// of its last success and of the one before it.
    static let nodeWhyTable = """
        CREATE TABLE IF NOT EXISTS node_why (
            graph TEXT NOT NULL,
            node TEXT NOT NULL,
            parts TEXT NOT NULL,
            previous TEXT,
            PRIMARY KEY (graph, node)
        ) WITHOUT ROWID;
        """

    /// Every table of the schema, each made only when missing.
    private static let createTables = """
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
            patterns BLOB,
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
            canceled INTEGER NOT NULL,
            peak INTEGER
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
        CREATE TABLE IF NOT EXISTS run_traces (
            run_id INTEGER PRIMARY KEY NOT NULL,
            graph TEXT NOT NULL,
            trace TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS run_traces_by_graph ON run_traces (graph, run_id);
        \(nodeWhyTable)
        CREATE TABLE IF NOT EXISTS node_durations (
            graph TEXT NOT NULL,
            node TEXT NOT NULL,
            duration_ms INTEGER NOT NULL,
            run_id INTEGER NOT NULL,
            PRIMARY KEY (graph, node)
        ) WITHOUT ROWID;

        """
}
