import Foundation
import MoonJSON

/// Reads a recorded `--json` stream back into `RunEvent`s (for `moon
/// replay`): the inverse of `EventEncoder.encode`, so encoding a decoded
/// line gives the same line back. Each line is parsed once, by `JSONParser`,
/// which keeps the order of keys (queues, outputs and matrix keep theirs). Unknown fields are ignored (a
/// newer moon may add some); a missing or mistyped field is an error that
/// names the line.
public enum EventDecoder {
    public struct DecodingError: Error, CustomStringConvertible, Equatable {
        /// 1-based line number in the stream.
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }

        public init(line: Int, message: String) {
            self.line = line
            self.message = message
        }
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

    /// One line of a stream as bytes (its `\n` taken off): nil for a blank
    /// line. Bytes that are not UTF-8 are an error, never replaced.
    public static func decodeLine(_ bytes: ArraySlice<UInt8>, line: Int) throws -> Decoded? {
        var bytes = bytes
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        if bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return nil }
        let parsed = bytes.withUnsafeBufferPointer { buffer in Result { () throws(JSONParser.Error) in try JSONParser.parse(buffer) } }
        return try decode(parsed, line: line)
    }

    /// One line of the stream.
    public static func decode(_ text: String, line: Int = 1) throws -> Decoded {
        try decode(Result { () throws(JSONParser.Error) in try JSONParser.parse(text) }, line: line)
    }

    /// The event of a parsed line. One case per event kind, the mirror of
    /// `EventEncoder.encode`: split, the two would no longer read side by side.
    private static func decode(_ parsed: Result<JSONValue, JSONParser.Error>, line: Int) throws -> Decoded {
        func fail(_ message: String) -> DecodingError { DecodingError(line: line, message: message) }
        let value: JSONValue
        switch parsed {
        case .success(let parsedValue): value = parsedValue
        case .failure(let error): throw fail("not valid JSON at column \(error.column): \(error.message)")
        }
        guard case .object = value else { throw fail("expected a JSON object") }
        var fields = Fields(object: value, line: line)
        guard let version = value["v"] else { throw fail("missing field 'v'") }
        guard let v = Fields.int(version), v == 1 else { throw fail("unsupported schema version \(version.pretty()) (this moon reads v 1)") }
        let seq = try fields.int("seq")
        let tsText = try fields.string("ts")
        guard let time = DateText.parseRFC3339(tsText) else { throw fail("'ts' is not an RFC 3339 time: \(tsText)") }
        let name = try fields.string("event")
        let kind: RunEvent.Kind
        var restored: CacheRestore?
        switch name {
        case "graph-start":
            let plan = try fields.stringArray("plan")
            let queues = try fields.object("queues")
            kind = .graphStart(graph: try fields.string("graph"), nodes: plan,
                               queues: try queues.map { name, value in
                                   guard let width = Fields.int(value) else { throw fail("queue '\(name)' has no integer concurrency") }
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
            let outputs = try fields.optionalObject("outputs") ?? []
            kind = .complete(node: try fields.string("node"), durationMilliseconds: try fields.int("duration_ms"),
                             exitCode: try fields.optionalInt32("exit_code"),
                             outputs: try outputs.map { key, value in
                                 guard let value = value.string else { throw fail("output '\(key)' is not a string") }
                                 return KeyValue(key, value)
                             })
        case "error":
            let e = Fields(object: .object(try fields.object("error")), line: line, prefix: "error.")
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
                var counts = Fields(object: .object(r), line: line, prefix: "restored.")
                restored = CacheRestore(files: try counts.int("files"), bytes: Int64(try counts.int("bytes")))
            }
        case "expand":
            kind = .expand(node: try fields.string("node"), instances: try fields.stringArray("instances"))
        case "graph-complete":
            var c = Fields(object: .object(try fields.object("counts")), line: line, prefix: "counts.")
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
        let instance = try instance(&fields, fail: fail)
        var event = RunEvent(time: time, kind: kind, interrupted: interrupted, instance: instance, restored: restored)
        event.stopped = name == "complete" ? try fields.optionalBool("stopped") ?? false : false
        event.carried = name == "start" ? try fields.optionalBool("carried") ?? false : false
        if name == "start", !fields.isAbsent("waited_ms") { event.waitedMilliseconds = try fields.int("waited_ms") }
        if name == "complete" || name == "error", let u = try fields.optionalObject("usage") {
            var usage = Fields(object: .object(u), line: line, prefix: "usage.")
            let sourceName = try usage.string("source")
            guard let source = NodeUsage.Source(rawValue: sourceName) else { throw fail("unknown usage source '\(sourceName)'") }
            event.usage = NodeUsage(cpuUserMilliseconds: try usage.int("cpu_user_ms"), cpuSystemMilliseconds: try usage.int("cpu_sys_ms"),
                                    maxRSSBytes: Int64(try usage.int("max_rss_bytes", in: 0...Int(Int64.max))), source: source)
        }
        if name == "graph-complete" { event.timedOut = try fields.optionalString("timed_out") }
        if name == "graph-complete", fields.has("running") {
            event.running = try fields.stringArray("running")
        }
        return Decoded(seq: seq, event: event)
    }

    /// An instance's `template`, `item` and `matrix` (in the order written), if the event has them.
    private static func instance(_ fields: inout Fields, fail: (String) -> DecodingError) throws -> RunEvent.Instance? {
        guard let template = try fields.optionalString("template") else { return nil }
        var instance = RunEvent.Instance(template: template, item: try fields.optionalString("item"))
        guard let matrix = try fields.optionalObject("matrix") else { return instance }
        instance.matrix = try matrix.map { key, value in
            guard let value = value.string else { throw fail("matrix value '\(key)' is not a string") }
            return KeyValue(key, value)
        }
        return instance
    }

    /// Typed access to an object's fields, with errors that name the field.
    private struct Fields {
        let object: JSONValue
        let line: Int
        var prefix = ""

        subscript(key: String) -> JSONValue? { object[key] }

        func fail(_ key: String, _ what: String) -> DecodingError {
            DecodingError(line: line, message: self[key] == nil ? "missing field '\(prefix)\(key)'" : "field '\(prefix)\(key)' must be \(what)")
        }

        /// What a count, a duration or a sequence number may be: what moon
        /// writes, and far from where the reporters' arithmetic overflows.
        static let count = 0...(1 << 53)

        func outOfRange(_ key: String) -> DecodingError {
            DecodingError(line: line, message: "field '\(prefix)\(key)' out of range")
        }

        /// An integer, written as one or as a whole number (`3.0`).
        static func int(_ value: JSONValue) -> Int? {
            switch value {
            case .int(let n): return n
            case .double(let d) where d == d.rounded() && abs(d) < 9e15: return Int(d)
            default: return nil
            }
        }

        mutating func string(_ key: String) throws -> String {
            guard let s = self[key]?.string else { throw fail(key, "a string") }
            return s
        }

        /// Whether the field is absent or `null`.
        func isAbsent(_ key: String) -> Bool {
            guard let value = self[key] else { return true }
            if case .null = value { return true }
            return false
        }

        mutating func optionalString(_ key: String) throws -> String? {
            if isAbsent(key) { return nil }
            return try string(key)
        }

        /// An integer in `range` (default: `count`); one beyond it is out of
        /// range, never converted with a trap.
        mutating func int(_ key: String, in range: ClosedRange<Int> = count) throws -> Int {
            guard let value = self[key], let n = Self.int(value) else {
                if case .double(let d)? = self[key], d == d.rounded() { throw outOfRange(key) }
                throw fail(key, "an integer")
            }
            guard range.contains(n) else { throw outOfRange(key) }
            return n
        }

        /// An exit code or a signal number: an `Int32` (of `range`), or absent.
        mutating func optionalInt32(_ key: String, in range: ClosedRange<Int> = Int(Int32.min)...Int(Int32.max)) throws -> Int32? {
            if isAbsent(key) { return nil }
            return Int32(try int(key, in: range))
        }

        mutating func bool(_ key: String) throws -> Bool {
            guard case .bool(let b)? = self[key] else { throw fail(key, "true or false") }
            return b
        }

        mutating func optionalBool(_ key: String) throws -> Bool? {
            guard self[key] != nil else { return nil }
            return try bool(key)
        }

        /// An object's members, in the order written.
        mutating func object(_ key: String) throws -> [(String, JSONValue)] {
            guard case .object(let members)? = self[key] else { throw fail(key, "an object") }
            return members
        }

        func has(_ key: String) -> Bool { self[key] != nil }

        mutating func optionalObject(_ key: String) throws -> [(String, JSONValue)]? {
            guard self[key] != nil else { return nil }
            return try object(key)
        }

        mutating func stringArray(_ key: String) throws -> [String] {
            guard let strings = self[key]?.stringArray else { throw fail(key, "an array of strings") }
            return strings
        }
    }
}
