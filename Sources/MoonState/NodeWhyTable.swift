import Foundation
import GRDB

/// `moon why`'s record of each node (`node_why`): the fingerprint's parts
/// at its last success and at the one before it, written with the node's
/// state by a run in which it succeeded, read only by `moon why`.
extension StateStore {
    /// Keeps the parts of the nodes that carry them; the parts a node had
    /// become its `previous`.
    static func saveParts(graph: String, _ nodes: [(String, String)], in db: Database) throws {
        guard !nodes.isEmpty else { return }
        try SQLiteRows.runEach(db, """
            INSERT INTO node_why (graph, node, parts, previous) VALUES (?, ?, ?, NULL)
            ON CONFLICT (graph, node) DO UPDATE SET previous = node_why.parts, parts = excluded.parts
            """, nodes) { [graph.databaseValue, $0.0.databaseValue, $0.1.databaseValue] }
    }

    /// The parts of node `node`'s last success and of the one before it;
    /// nil when none are recorded (or the store predates `node_why`).
    public func whyParts(graph: String, node: String) throws -> (last: FingerprintParts?, previous: FingerprintParts?)? {
        try reading { db in
            let row: Row?
            do {
                row = try Row.fetchOne(db, sql: "SELECT parts, previous FROM node_why WHERE graph = ? AND node = ?",
                                       arguments: [graph, node])
            } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
                return nil
            }
            guard let row else { return nil }
            let last: String? = row[0]
            let previous: String? = row[1]
            return (last.flatMap { FingerprintParts(json: $0) }, previous.flatMap { FingerprintParts(json: $0) })
        }
    }
}
