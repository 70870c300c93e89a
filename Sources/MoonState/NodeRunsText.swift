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
        var text = text
        return text.withUTF8 { bytes in
            var nodes: [NodeRunRecord] = []
            eachLine(bytes) { line in
                guard line.isRecord, let result = line.result else { return }
                var record = NodeRunRecord(node: line.name, startedAt: line.number(1).map { Date(timeIntervalSince1970: Double($0) / 1000) },
                                           durationMilliseconds: line.duration, result: result, attempts: line.attempts)
                if let (cpu, rss) = line.usage {
                    record.cpuMilliseconds = cpu
                    record.maxRSSBytes = rss
                }
                nodes.append(record)
            }
            return nodes
        }
    }

    /// The nodes that succeeded, of the records `decode` would read in
    /// `bytes`: name, duration and peak memory (`max_rss_bytes`), in the
    /// text's order. Only their lines make strings: a run learns its nodes'
    /// memory from the last 20 runs' texts before its first node starts,
    /// and most lines of an edit's run are nodes that were up to date.
    static func successes(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (_ node: String, _ milliseconds: Int, _ peak: Int64?) -> Void) {
        eachLine(bytes) { line in
            guard line.succeeded, line.isRecord, let duration = line.duration else { return }
            body(line.name, duration, line.usage?.rss)
        }
    }

    /// One line's fields (ranges of the text's bytes), split as bytes, not as Characters.
    private struct Line {
        let bytes: UnsafeBufferPointer<UInt8>
        /// The first `count` are the fields.
        let fields: [Range<Int>]
        let count: Int
        /// Whether it parses: 5 or 7 fields, a known result, a whole number of attempts.
        var isRecord: Bool { (count == 5 || count == 7) && attemptsField != nil }

        func field(_ index: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[fields[index]]) }
        func number(_ index: Int) -> Int64? { integer(field(index)) }
        var name: String { unescaped(String(decoding: field(0), as: UTF8.self)) }
        var result: NodeRunRecord.Result? { NodeRunRecord.Result(rawValue: String(decoding: field(3), as: UTF8.self)) }
        var succeeded: Bool {
            guard count > 3 else { return false }
            let result = field(3)
            return result.count == 9 && memcmp(result.baseAddress!, "succeeded", 9) == 0
        }
        private var attemptsField: Int? { number(4).flatMap { Int(exactly: $0) } }
        var attempts: Int { attemptsField ?? 0 }
        var duration: Int? { number(2).flatMap { Int(exactly: $0) } }
        /// CPU time and peak memory, when measured and sound.
        var usage: (cpu: Int, rss: Int64)? {
            guard count == 7, let cpu = number(5).flatMap({ Int(exactly: $0) }), let rss = number(6), cpu >= 0, rss >= 0 else { return nil }
            return (cpu, rss)
        }
    }

    /// Calls `body` with each line of `bytes` (`isRecord` says whether it is one). Lines and
    /// fields are found with `memchr`, which scans a word at a time.
    private static func eachLine(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Line) -> Void) {
        guard let base = bytes.baseAddress else { return }
        func find(_ byte: UInt8, from: Int, to: Int) -> Int {
            guard let found = memchr(base + from, Int32(byte), to - from) else { return to }
            return UnsafeRawPointer(found) - UnsafeRawPointer(base)
        }
        var fields = [Range<Int>](repeating: 0..<0, count: 8)
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = find(UInt8(ascii: "\n"), from: lineStart, to: bytes.count)
            defer { lineStart = lineEnd + 1 }
            guard lineEnd > lineStart else { continue }
            // At most 8 fields are split: a line of more is no record either way.
            var count = 0
            var fieldStart = lineStart
            while count < 8 {
                let fieldEnd = find(UInt8(ascii: "\t"), from: fieldStart, to: lineEnd)
                fields[count] = fieldStart..<fieldEnd
                count += 1
                if fieldEnd == lineEnd { break }
                fieldStart = fieldEnd + 1
            }
            body(Line(bytes: bytes, fields: fields, count: count))
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
