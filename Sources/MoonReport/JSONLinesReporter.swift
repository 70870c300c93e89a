import Foundation
import MoonRun

/// `--json`: one JSON object per line on stdout, written as it happens.
/// Field order is fixed (v, seq, ts, event, then the event's own fields), so
/// the stream is easy to diff and to read with `jq`. The schema is
/// `schema/moon-events.schema.json`.
public final class JSONLinesReporter: Reporter {
    private let sink: OutputSink
    private var seq = 0

    public init(sink: OutputSink) {
        self.sink = sink
    }

    public func report(_ event: RunEvent) {
        seq += 1
        sink.write(Self.encode(event, seq: seq) + "\n")
    }

    /// One event as a JSON object on one line.
    public static func encode(_ event: RunEvent, seq: Int) -> String {
        var o = JSONObjectWriter()
        o.field("v", 1)
        o.field("seq", seq)
        o.field("ts", RFC3339.format(event.time))
        o.field("event", event.name)
        switch event.kind {
        case .graphStart(let graph, let nodes, let queues):
            o.field("graph", graph)
            o.field("nodes", nodes.count)
            o.rawField("plan", JSONObjectWriter.array(nodes.map(JSONObjectWriter.quote)))
            var q = JSONObjectWriter()
            for queue in queues { q.field(queue.name, queue.concurrency) }
            o.rawField("queues", q.text)
        case .start(let node, let queue, let attempt, let command):
            o.field("node", node)
            o.field("queue", queue)
            o.field("attempt", attempt)
            // The command as a user reads it: `moon replay` shows it with a failure.
            if !command.isEmpty { o.field("command", command) }
            if let jobID = event.jobID { o.field("job_id", jobID) }
        case .next(let node, let stream, let text, let continued):
            o.field("node", node)
            o.field("stream", stream.rawValue)
            o.field("text", text)
            if continued { o.rawField("continued", "true") }
        case .retry(let node, let attempt, let delay, let error):
            o.field("node", node)
            o.field("attempt", attempt)
            o.field("delay_ms", delay)
            o.field("error", error.message)
        case .complete(let node, let duration, let exitCode, let outputs):
            o.field("node", node)
            o.field("duration_ms", duration)
            if let exitCode { o.field("exit_code", Int(exitCode)) }
            var out = JSONObjectWriter()
            for kv in outputs { out.field(kv.key, kv.value) }
            o.rawField("outputs", out.text)
        case .error(let node, let duration, let error):
            o.field("node", node)
            o.field("duration_ms", duration)
            var e = JSONObjectWriter()
            e.field("kind", error.kind.rawValue)
            e.field("message", error.message)
            if let code = error.exitCode { e.field("exit_code", Int(code)) }
            if let signal = error.signal { e.field("signal", Int(signal)) }
            o.rawField("error", e.text)
        case .skip(let node, let reason):
            o.field("node", node)
            o.field("reason", reason.rawValue)
        case .graphComplete(let ok, let duration, let counts, let path):
            o.rawField("ok", ok ? "true" : "false")
            o.field("duration_ms", duration)
            var c = JSONObjectWriter()
            c.field("succeeded", counts.succeeded)
            c.field("failed", counts.failed)
            c.field("skipped", counts.skipped)
            c.field("canceled", counts.canceled)
            o.rawField("counts", c.text)
            o.rawField("critical_path", JSONObjectWriter.array(path.map(JSONObjectWriter.quote)))
        }
        return o.text
    }
}

/// Builds one JSON object in field order. Hand-written because the event
/// stream is hot (hundreds of thousands of lines) and key order must be stable.
struct JSONObjectWriter {
    private var body = ""

    var text: String { "{" + body + "}" }

    mutating func rawField(_ key: String, _ json: String) {
        if !body.isEmpty { body += "," }
        body += Self.quote(key)
        body += ":"
        body += json
    }

    mutating func field(_ key: String, _ value: String) { rawField(key, Self.quote(value)) }
    mutating func field(_ key: String, _ value: Int) { rawField(key, String(value)) }

    static func array(_ items: [String]) -> String { "[" + items.joined(separator: ",") + "]" }

    /// A JSON string literal; control characters and non-ASCII-safe escapes per RFC 8259.
    static func quote(_ s: String) -> String {
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar.value == 0x2028 || scalar.value == 0x2029:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
        return out
    }
}

/// RFC 3339 timestamps in UTC with milliseconds: 2026-11-22T10:04:05.123Z.
enum RFC3339 {
    static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var millis = Int(((interval - Double(seconds)) * 1000).rounded(.down))
        if millis >= 1000 { millis = 999 }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ v: Int32, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }
}
