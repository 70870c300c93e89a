import Foundation

/// A run's node records as one text value, one line per node:
/// `node TAB started TAB duration TAB result TAB attempts`, then, for a node
/// whose usage was measured, `TAB cpu_ms TAB max_rss_bytes` (an empty field
/// for a missing start or duration; `started` in whole milliseconds since
/// 1970, an integer, cheaper to print than a `Double`). Lines of 5 fields,
/// written before moon measured usage, still read.
///
/// One value per run, not a row per node: a run's end writes it after the
/// last node, while the user waits, and one row is written in a fraction of
/// the time of a row per node. Node names cannot hold a tab or a newline
/// (the graph file's name rule); should one, it is escaped (`\t`, `\n`, `\\`).
enum NodeRunsText {
    static func encode(_ nodes: [NodeRunRecord]) -> String {
        // Built as bytes, not by String appends and `String(Int)` per field:
        // this runs after the last node, for every node of the run.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nodes.count * 48)
        let tab = UInt8(ascii: "\t")
        for node in nodes {
            bytes.append(contentsOf: escaped(node.node).utf8)
            bytes.append(tab)
            if let started = node.startedAt { appendDecimal(Int64((started.timeIntervalSince1970 * 1000).rounded()), to: &bytes) }
            bytes.append(tab)
            if let duration = node.durationMilliseconds { appendDecimal(Int64(duration), to: &bytes) }
            bytes.append(tab)
            bytes.append(contentsOf: node.result.rawValue.utf8)
            bytes.append(tab)
            appendDecimal(Int64(node.attempts), to: &bytes)
            if let cpu = node.cpuMilliseconds, let rss = node.maxRSSBytes {
                bytes.append(tab)
                appendDecimal(Int64(cpu), to: &bytes)
                bytes.append(tab)
                appendDecimal(rss, to: &bytes)
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` in decimal, as `String(value)` writes it.
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
        }
    }

    /// The records of `text`; lines that do not parse are left out.
    static func decode(_ text: String) -> [NodeRunRecord] {
        var nodes: [NodeRunRecord] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 5 || fields.count == 7, let result = NodeRunRecord.Result(rawValue: String(fields[3])),
                  let attempts = Int(fields[4]) else { continue }
            var record = NodeRunRecord(node: unescaped(fields[0]),
                                       startedAt: Int64(fields[1]).map { Date(timeIntervalSince1970: Double($0) / 1000) },
                                       durationMilliseconds: Int(fields[2]), result: result, attempts: attempts)
            if fields.count == 7, let cpu = Int(fields[5]), let rss = Int64(fields[6]), cpu >= 0, rss >= 0 {
                record.cpuMilliseconds = cpu
                record.maxRSSBytes = rss
            }
            nodes.append(record)
        }
        return nodes
    }

    private static func escaped(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x5C }) else { return name }
        return name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func unescaped(_ field: Substring) -> String {
        guard field.utf8.contains(0x5C) else { return String(field) }
        var result = ""
        var escaping = false
        for character in field {
            if escaping {
                result.append(character == "t" ? "\t" : character == "n" ? "\n" : character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
