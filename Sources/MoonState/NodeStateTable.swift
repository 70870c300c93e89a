import Foundation
import GRDB
import GRDBSQLite
import MoonJSON

/// A row of `node_state`, from SQLite or from a snapshot (`NoopSnapshot`).
protocol NodeStateRow {
    /// A column's bytes (empty for NULL), valid while the row is.
    func blob(_ column: Int32) -> UnsafeRawBufferPointer
    /// A column's bytes as a Data, nil for NULL.
    func data(_ column: Int32) -> Data?
    func text(_ column: Int32) -> String
    func double(_ column: Int32) -> Double
}

/// A row SQLite is on.
struct SQLiteRow: NodeStateRow {
    let statement: SQLiteStatement
    init(_ statement: SQLiteStatement) { self.statement = statement }
    func blob(_ column: Int32) -> UnsafeRawBufferPointer { SQLiteRows.blob(statement, column) }
    func data(_ column: Int32) -> Data? { SQLiteRows.data(statement, column) }
    func text(_ column: Int32) -> String { SQLiteRows.text(statement, column) }
    func double(_ column: Int32) -> Double { SQLiteRows.double(statement, column) }
}

/// Each node's last success (`node_state`): its fingerprint, outputs,
/// values and depfile dependencies, per graph file.
extension StateStore {
    /// Every node state of `graph`, by node name, in one read: a run that
    /// checks many nodes spares a transaction and a statement per node.
    public func nodeStates(graph: String) throws -> [String: StoredNode] {
        if let snapshot, snapshot.graph == graph { return snapshot.states }
        // A run's store keeps the rows as read for a snapshot it may save
        // after writing nothing, when the store's files were settled and
        // stayed as they were through the read (`saveNoopSnapshot`).
        let before = NoopSnapshot.stamps(store: path)
        let keep = keepsRows(of: graph) && before[0].exists && NoopSnapshot.settled(before, now: NoopSnapshot.now())
        var rows = keep ? NoopSnapshot.Writer() : nil
        let states = try reading { db in
            var result: [String: StoredNode] = [:]
            try SQLiteRows.each(db, sql: "SELECT node, \(nodeStateColumns) FROM node_state WHERE graph = ?", arguments: [graph]) { row in
                result[SQLiteRows.text(row, 0)] = Self.storedNode(SQLiteRow(row))
                rows?.appendRow(row)
            }
            return result
        }
        if let rows, NoopSnapshot.stamps(store: path) == before {
            keepRowsRead(NoopSnapshot.RowsRead(graph: graph, stamps: before, rows: rows))
        }
        return states
    }

    /// The same rows, as they are, into a snapshot (`NoopSnapshot.Writer.appendRow`).
    func nodeStateRows(graph: String, into writer: inout NoopSnapshot.Writer) throws {
        try reading { db in
            try SQLiteRows.each(db, sql: "SELECT node, \(nodeStateColumns) FROM node_state WHERE graph = ?", arguments: [graph]) { row in
                writer.appendRow(row)
            }
        }
    }

    /// The five digests as their own columns, each read in place: joining
    /// them in SQL (`a || b || …`) costs SQLite more than five reads.
    private var nodeStateColumns: String {
        "fingerprint, command, environment, needs, sources, manifest, outputs, node_values, updated_at, deps, "
            + (hasPatterns ? "patterns" : "NULL")
    }

    /// A node state from its row (columns as `nodeStateColumns` lists them, after the name).
    static func storedNode<Row: NodeStateRow>(_ row: Row) -> StoredNode {
        func hash(_ column: Int32) -> ContentHash {
            let digest = row.blob(column)
            return digest.count == 32 ? ContentHash(raw: digest) ?? .zero : .zero
        }
        let (manifest, stamp) = Manifest.decode(row.blob(6))
        let fingerprint = NodeFingerprint(command: hash(2), environment: hash(3), needs: hash(4), sources: hash(5),
                                          manifest: manifest, combined: hash(1))
        return StoredNode(fingerprint: fingerprint, outputs: decodePairs(row.text(7)),
                          values: decodeList(row.text(8)), updatedAt: Date(timeIntervalSince1970: row.double(9)),
                          listed: row.data(10), patterns: row.data(11), stamp: stamp)
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
    /// `parts`: `moon why`'s parts of the nodes that ran (`NodeWhyTable`).
    public func saveNodeStates(graph: String, _ nodes: [(String, StoredNode)], files: [String: StatCache.Entry],
                               parts: [(String, String)] = []) throws {
        // Straight through SQLite (`SQLiteRows`): a restore of a fresh
        // checkout writes a row per node and per file here, at its end.
        try db.writeWithoutTransaction { db in
            try SQLiteRows.transaction(db) {
                try Self.saveFiles(files, in: db)
                try SQLiteRows.runEach(db, """
                    INSERT OR REPLACE INTO node_state
                    (graph, node, fingerprint, command, environment, needs, sources, manifest, outputs, node_values, updated_at, deps,
                     patterns)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, nodes) { node, state in
                    let f = state.fingerprint
                    return [graph.databaseValue, node.databaseValue, f.combined.data.databaseValue, f.command.data.databaseValue,
                            f.environment.data.databaseValue, f.needs.data.databaseValue, f.sources.data.databaseValue,
                            f.manifest.encoded(stamp: state.stamp).databaseValue, Self.encodePairs(state.outputs).databaseValue,
                            Self.encodeList(state.values).databaseValue, state.updatedAt.timeIntervalSince1970.databaseValue,
                            state.listed.databaseValue, state.patterns.databaseValue]
                }
                try Self.saveParts(graph: graph, parts, in: db)
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

    // The lists below are JSON text in the database (readable with
    // `sqlite3`): `JSONString` writes them and `JSONParser` reads them.

    static func encodePairs(_ pairs: [(String, String)]) -> String {
        // Most nodes have none: no JSON writer for them.
        if pairs.isEmpty { return "[]" }
        return "[" + pairs.map { JSONString.array([$0.0, $0.1]) }.joined(separator: ",") + "]"
    }

    static func decodePairs(_ text: String) -> [(String, String)] {
        // Most nodes have none: no JSON parser for them.
        if text == "[]" { return [] }
        guard case .array(let items)? = try? JSONParser.parse(text) else { return [] }
        return items.compactMap { item in
            guard let pair = item.stringArray, pair.count == 2 else { return nil }
            return (pair[0], pair[1])
        }
    }

    static func encodeList(_ list: [String]) -> String {
        if list.isEmpty { return "[]" }
        return JSONString.array(list)
    }

    static func decodeList(_ text: String) -> [String] {
        if text == "[]" { return [] }
        return (try? JSONParser.parse(text))?.stringArray ?? []
    }
}
