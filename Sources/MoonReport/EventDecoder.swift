import Foundation
import MoonEvents

/// Reads a recorded `--json` stream back into `RunEvent`s (for `moon
/// replay`): the inverse of `JSONLinesReporter.encode`, so encoding a
/// decoded line gives the same line back. Unknown fields are ignored (a
/// newer moon may add some); a missing or mistyped field is an error that
/// names the line.
public enum EventDecoder {
    public struct DecodingError: Error, CustomStringConvertible, Equatable {
        /// 1-based line number in the stream.
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// One event of a stream with its sequence number.
    public struct Decoded {
        public var seq: Int
        public var event: RunEvent
    }

    /// Every event of a JSON Lines text; blank lines are skipped.
    public static func decodeAll(_ text: String) throws -> [Decoded] {
        var out: [Decoded] = []
        var number = 0
        // "\r\n" is one Character in Swift, so it must be named as a separator.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            number += 1
            if let decoded = try decodeLine(String(line), line: number) { out.append(decoded) }
        }
        return out
    }

    /// One line of a stream read line by line (its `\n` taken off, a `\r`
    /// before it not yet): nil for a blank line.
    public static func decodeLine(_ text: String, line: Int) throws -> Decoded? {
        let text = text.hasSuffix("\r") ? String(text.dropLast()) : text
        if text.allSatisfy({ $0 == " " || $0 == "\t" }) { return nil }
        return try decode(text, line: line)
    }

    /// One line of the stream.
    public static func decode(_ text: String, line: Int = 1) throws -> Decoded {
        func fail(_ message: String) -> DecodingError { DecodingError(line: line, message: message) }
        let any: Any
        do {
            any = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [])
        } catch {
            throw fail("not valid JSON")
        }
        guard let object = any as? [String: Any] else { throw fail("expected a JSON object") }
        var fields = Fields(object: object, line: line)
        guard let version = object["v"] else { throw fail("missing field 'v'") }
        guard let v = Fields.int(version), v == 1 else { throw fail("unsupported schema version \(version) (this moon reads v 1)") }
        let seq = try fields.int("seq")
        let tsText = try fields.string("ts")
        guard let time = RFC3339.parse(tsText) else { throw fail("'ts' is not an RFC 3339 time: \(tsText)") }
        let name = try fields.string("event")
        let kind: RunEvent.Kind
        var restored: CacheRestore?
        switch name {
        case "graph-start":
            let plan = try fields.stringArray("plan")
            let order = JSONKeyOrder.keys(ofObject: "queues", in: text)
            let queues = try fields.object("queues")
            let names = order.filter { queues[$0] != nil } + queues.keys.filter { !order.contains($0) }.sorted()
            kind = .graphStart(graph: try fields.string("graph"), nodes: plan,
                               queues: try names.map { name in
                                   guard let width = Fields.int(queues[name]!) else { throw fail("queue '\(name)' has no integer concurrency") }
                                   guard Fields.count.contains(width) else { throw fail("field 'queues.\(name)' out of range") }
                                   return QueueWidth(name: name, concurrency: width)
                               })
        case "start":
            kind = .start(node: try fields.string("node"), queue: try fields.string("queue"), attempt: try fields.int("attempt"),
                          command: try fields.optionalString("command") ?? "", jobID: try fields.optionalString("job_id"))
        case "next":
            let streamName = try fields.string("stream")
            guard let stream = OutputStream(rawValue: streamName) else { throw fail("unknown stream '\(streamName)'") }
            kind = .next(node: try fields.string("node"), stream: stream, text: try fields.string("text"),
                         continued: try fields.optionalBool("continued") ?? false)
        case "retry":
            kind = .retry(node: try fields.string("node"), attempt: try fields.int("attempt"), delayMilliseconds: try fields.int("delay_ms"),
                          error: NodeError(.exit, try fields.string("error")))
        case "complete":
            let order = JSONKeyOrder.keys(ofObject: "outputs", in: text)
            let outputs = try fields.optionalObject("outputs") ?? [:]
            let keys = order.filter { outputs[$0] != nil } + outputs.keys.filter { !order.contains($0) }.sorted()
            kind = .complete(node: try fields.string("node"), durationMilliseconds: try fields.int("duration_ms"),
                             exitCode: try fields.optionalInt32("exit_code"),
                             outputs: try keys.map { key in
                                 guard let value = outputs[key] as? String else { throw fail("output '\(key)' is not a string") }
                                 return KeyValue(key, value)
                             })
        case "error":
            let e = Fields(object: try fields.object("error"), line: line, prefix: "error.")
            var inner = e
            let kindName = try inner.string("kind")
            guard let errorKind = NodeError.Kind(rawValue: kindName) else { throw fail("unknown error kind '\(kindName)'") }
            let error = NodeError(errorKind, try inner.string("message"),
                                  exitCode: try inner.optionalInt32("exit_code"),
                                  signal: try inner.optionalInt32("signal", in: 0...Int(Int32.max)))
            kind = .error(node: try fields.string("node"), durationMilliseconds: try fields.int("duration_ms"), error: error)
        case "skip":
            let reasonName = try fields.string("reason")
            guard let reason = SkipReason(rawValue: reasonName) else { throw fail("unknown skip reason '\(reasonName)'") }
            kind = .skip(node: try fields.string("node"), reason: reason)
            if let r = try fields.optionalObject("restored") {
                var counts = Fields(object: r, line: line, prefix: "restored.")
                restored = CacheRestore(files: try counts.int("files"), bytes: Int64(try counts.int("bytes")))
            }
        case "expand":
            kind = .expand(node: try fields.string("node"), instances: try fields.stringArray("instances"))
        case "graph-complete":
            var c = Fields(object: try fields.object("counts"), line: line, prefix: "counts.")
            var counts = RunCounts()
            counts.succeeded = try c.int("succeeded")
            counts.failed = try c.int("failed")
            counts.skipped = try c.int("skipped")
            counts.canceled = try c.int("canceled")
            kind = .graphComplete(ok: try fields.bool("ok"), durationMilliseconds: try fields.int("duration_ms"), counts: counts,
                                  criticalPath: try fields.stringArray("critical_path"))
        case "watch":
            kind = .watch(changed: try fields.stringArray("changed"), nodes: try fields.stringArray("nodes"))
        default:
            throw fail("unknown event '\(name)'")
        }
        let interrupted = name == "graph-complete" ? try fields.optionalString("interrupted") : nil
        let instance = try instance(&fields, text: text, fail: fail)
        var event = RunEvent(time: time, kind: kind, interrupted: interrupted, instance: instance, restored: restored)
        event.stopped = name == "complete" ? try fields.optionalBool("stopped") ?? false : false
        event.carried = name == "start" ? try fields.optionalBool("carried") ?? false : false
        if name == "graph-complete" { event.timedOut = try fields.optionalString("timed_out") }
        if name == "graph-complete", fields.has("running") {
            event.running = try fields.stringArray("running")
        }
        return Decoded(seq: seq, event: event)
    }

    /// An instance's `template`, `item` and `matrix` (in the order written), if the event has them.
    private static func instance(_ fields: inout Fields, text: String,
                                 fail: (String) -> DecodingError) throws -> RunEvent.Instance? {
        guard let template = try fields.optionalString("template") else { return nil }
        var instance = RunEvent.Instance(template: template, item: try fields.optionalString("item"))
        guard let matrix = try fields.optionalObject("matrix") else { return instance }
        let order = JSONKeyOrder.keys(ofObject: "matrix", in: text)
        let keys = order.filter { matrix[$0] != nil } + matrix.keys.filter { !order.contains($0) }.sorted()
        instance.matrix = try keys.map { key in
            guard let value = matrix[key] as? String else { throw fail("matrix value '\(key)' is not a string") }
            return KeyValue(key, value)
        }
        return instance
    }

    /// Typed access to an object's fields, with errors that name the field.
    private struct Fields {
        let object: [String: Any]
        let line: Int
        var prefix = ""

        func fail(_ key: String, _ what: String) -> DecodingError {
            DecodingError(line: line, message: object[key] == nil ? "missing field '\(prefix)\(key)'" : "field '\(prefix)\(key)' must be \(what)")
        }

        /// What a count, a duration or a sequence number may be: what moon
        /// writes, and far from where the reporters' arithmetic overflows.
        static let count = 0...(1 << 53)

        func outOfRange(_ key: String) -> DecodingError {
            DecodingError(line: line, message: "field '\(prefix)\(key)' out of range")
        }

        /// JSON true/false. Foundation hands both numbers and booleans back as
        /// NSNumber (and `is Bool` holds for 0 and 1); booleans have type "c".
        static func isBool(_ value: Any) -> Bool {
            if let n = value as? NSNumber { return String(cString: n.objCType) == "c" }
            return value is Bool
        }

        static func int(_ value: Any) -> Int? {
            if isBool(value) { return nil }
            if let n = value as? Int { return n }
            if let d = value as? Double, d == d.rounded(), abs(d) < 9e15 { return Int(d) }
            return nil
        }

        mutating func string(_ key: String) throws -> String {
            guard let s = object[key] as? String else { throw fail(key, "a string") }
            return s
        }

        mutating func optionalString(_ key: String) throws -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            return try string(key)
        }

        /// An integer in `range` (default: `count`); one beyond it is out of
        /// range, never converted with a trap.
        mutating func int(_ key: String, in range: ClosedRange<Int> = count) throws -> Int {
            guard let value = object[key], let n = Self.int(value) else {
                if let number = object[key] as? NSNumber, !Self.isBool(number), number.doubleValue == number.doubleValue.rounded() {
                    throw outOfRange(key)
                }
                throw fail(key, "an integer")
            }
            guard range.contains(n) else { throw outOfRange(key) }
            return n
        }

        /// An exit code or a signal number: an `Int32` (of `range`), or absent.
        mutating func optionalInt32(_ key: String, in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)) throws -> Int32? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            return Int32(try int(key, in: range))
        }

        mutating func optionalInt(_ key: String) throws -> Int? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            return try int(key)
        }

        mutating func bool(_ key: String) throws -> Bool {
            guard let value = object[key], Self.isBool(value), let b = value as? Bool else { throw fail(key, "true or false") }
            return b
        }

        mutating func optionalBool(_ key: String) throws -> Bool? {
            guard object[key] != nil else { return nil }
            return try bool(key)
        }

        mutating func object(_ key: String) throws -> [String: Any] {
            guard let o = object[key] as? [String: Any] else { throw fail(key, "an object") }
            return o
        }

        func has(_ key: String) -> Bool { object[key] != nil }

        mutating func optionalObject(_ key: String) throws -> [String: Any]? {
            guard object[key] != nil else { return nil }
            return try object(key)
        }

        mutating func stringArray(_ key: String) throws -> [String] {
            guard let a = object[key] as? [Any] else { throw fail(key, "an array of strings") }
            return try a.map {
                guard let s = $0 as? String else { throw fail(key, "an array of strings") }
                return s
            }
        }
    }
}

/// The key order of one object in a JSON text. `JSONSerialization` gives
/// dictionaries, which forget it; queues and outputs keep the order they
/// were written in, so a replayed stream re-encodes byte for byte.
enum JSONKeyOrder {
    /// The keys, in order, of the object that is the value of top-level key
    /// `name`; empty when there is none.
    static func keys(ofObject name: String, in text: String) -> [String] {
        let bytes = Array(text.utf8)
        var i = 0
        var depth = 0
        var target: Int? = nil // depth of the object we collect from
        var keys: [String] = []
        var expectKey = false
        var lastKeyAtTop: String? = nil
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                while i < bytes.count && bytes[i] != UInt8(ascii: "\"") {
                    i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1
                }
                let literal = String(decoding: bytes[start...min(i, bytes.count - 1)], as: UTF8.self)
                if expectKey {
                    let key = (try? JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed)) as? String ?? ""
                    if depth == 1 { lastKeyAtTop = key }
                    if let t = target, depth == t { keys.append(key) }
                    expectKey = false
                }
            case UInt8(ascii: "{"):
                depth += 1
                expectKey = true
                if depth == 2 && target == nil && lastKeyAtTop == name { target = 2 }
            case UInt8(ascii: "}"):
                if let t = target, depth == t { return keys }
                depth -= 1
            case UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: ","):
                // A comma inside an object introduces a key; inside an array it does not,
                // but keys are only read at the depths we track, where objects live.
                expectKey = true
            case UInt8(ascii: ":"):
                expectKey = false
                if depth == 1 { /* value of lastKeyAtTop follows */ }
            default:
                break
            }
            if depth == 1 && b == UInt8(ascii: ",") { lastKeyAtTop = nil }
            i += 1
        }
        return keys
    }
}

extension RFC3339 {
    /// Parses `2026-11-22T10:04:05.123Z` (fraction optional; `Z` or `±hh:mm`).
    /// The time lands half a millisecond into its millisecond so that
    /// formatting it again gives the same text despite binary fractions.
    static func parse(_ text: String) -> Date? {
        let c = Array(text.utf8)
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= c.count else { return nil }
            var v = 0
            for k in at..<(at + n) {
                guard (48...57).contains(c[k]) else { return nil }
                v = v * 10 + Int(c[k] - 48)
            }
            return v
        }
        guard c.count >= 20, let year = digits(0, 4), c[4] == 45, let month = digits(5, 2), c[7] == 45, let day = digits(8, 2),
              c[10] == 84 || c[10] == 116 || c[10] == 32, let hour = digits(11, 2), c[13] == 58, let minute = digits(14, 2),
              c[16] == 58, let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        var millis = 0.0
        if i < c.count && c[i] == 46 {
            i += 1
            var scale = 100.0
            let start = i
            while i < c.count, (48...57).contains(c[i]) {
                millis += Double(c[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offset = 0
        if i < c.count && (c[i] == 90 || c[i] == 122) {
            i += 1
        } else if i < c.count && (c[i] == 43 || c[i] == 45), let oh = digits(i + 1, 2), i + 3 < c.count, c[i + 3] == 58, let om = digits(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (c[i] == 43 ? 1 : -1)
            i += 6
        } else {
            return nil
        }
        guard i == c.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds - offset) + (millis.rounded(.down) + 0.5) / 1000)
    }
}
