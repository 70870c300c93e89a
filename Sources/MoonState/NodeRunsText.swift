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
        // Split as bytes, not as Characters: a run learns its nodes' memory
        // from the last 20 runs' texts before its first node starts.
        var text = text
        return text.withUTF8 { bytes in
            var nodes: [NodeRunRecord] = []
            var fields: [Range<Int>] = []
            fields.reserveCapacity(8)
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                defer { lineStart = lineEnd + 1 }
                guard lineEnd > lineStart else { continue }
                fields.removeAll(keepingCapacity: true)
                var fieldStart = lineStart
                for i in lineStart...lineEnd where i == lineEnd || bytes[i] == UInt8(ascii: "\t") {
                    fields.append(fieldStart..<i)
                    fieldStart = i + 1
                    if fields.count > 7 { break }
                }
                func text(_ field: Int) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[fields[field]]), as: UTF8.self) }
                func number(_ field: Int) -> Int64? { integer(UnsafeBufferPointer(rebasing: bytes[fields[field]])) }
                guard fields.count == 5 || fields.count == 7, let result = NodeRunRecord.Result(rawValue: text(3)),
                      let attempts = number(4).flatMap({ Int(exactly: $0) }) else { continue }
                var record = NodeRunRecord(node: unescaped(text(0)),
                                           startedAt: number(1).map { Date(timeIntervalSince1970: Double($0) / 1000) },
                                           durationMilliseconds: number(2).flatMap { Int(exactly: $0) }, result: result, attempts: attempts)
                if fields.count == 7, let cpu = number(5).flatMap({ Int(exactly: $0) }), let rss = number(6), cpu >= 0, rss >= 0 {
                    record.cpuMilliseconds = cpu
                    record.maxRSSBytes = rss
                }
                nodes.append(record)
            }
            return nodes
        }
    }

    /// A decimal integer as `Int64(_:)` reads one (an optional sign, then
    /// digits); nil for anything else or a value out of range.
    static func integer(_ digits: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        var negative = false
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            i = 1
        }
        guard i < digits.count else { return nil }
        // Accumulated below zero, so Int64.min reads too.
        var value: Int64 = 0
        while i < digits.count {
            let digit = digits[i] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, over) = value.multipliedReportingOverflow(by: 10)
            let (next, under) = times.subtractingReportingOverflow(Int64(digit))
            guard !over && !under else { return nil }
            value = next
            i += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    private static func escaped(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x5C }) else { return name }
        return name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func unescaped(_ field: String) -> String {
        guard field.utf8.contains(0x5C) else { return field }
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
