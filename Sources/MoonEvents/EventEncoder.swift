import MoonJSON

/// Writes the `--json` event stream, one object per event: the format's one
/// writer, beside `EventDecoder`, its one reader (`moon replay`). Field order
/// is fixed (v, seq, ts, event, then the event's own fields), so the stream
/// is easy to diff and to read with `jq`; a decoded line encodes to the same
/// bytes. The schema is `schema/moon-events.schema.json`.
public enum EventEncoder {
    /// One event as a JSON object on one line.
    public static func encode(_ event: RunEvent, seq: Int) -> String {
        encode(event, seq: seq, ending: "}")
    }

    /// The object, closed with `ending` (a line: `}` and a newline). One
    /// case per event kind, in the stream's fixed field order, as the schema
    /// lists them: kept as one switch so the order reads in one place.
    public static func encode(_ event: RunEvent, seq: Int, ending: String) -> String {
        var o = JSONObjectWriter(capacity: 192)
        o.field("v", 1)
        o.field("seq", seq)
        o.field("ts", DateText.rfc3339(event.time))
        o.field("event", event.name)
        switch event.kind {
        case .graphStart(let graph, let nodes, let queues):
            o.field("graph", graph)
            o.field("nodes", nodes.count)
            o.rawField("plan", JSONString.array(nodes))
            var q = JSONObjectWriter()
            for queue in queues { q.field(queue.name, queue.concurrency) }
            o.rawField("queues", q.text)
        case .start(let node, let queue, let attempt, let command, let jobID):
            o.field("node", node)
            instanceFields(event.instance, &o)
            o.field("queue", queue)
            o.field("attempt", attempt)
            // The command as a user reads it: `moon replay` shows it with a failure.
            if !command.isEmpty { o.field("command", command) }
            if let jobID { o.field("job_id", jobID) }
            if event.carried { o.rawField("carried", "true") }
            if let waited = event.waitedMilliseconds { o.field("waited_ms", waited) }
        case .next(let node, let stream, let text, let continued):
            o.field("node", node)
            o.field("stream", stream.rawValue)
            o.field("text", text)
            if continued { o.rawField("continued", "true") }
        case .retry(let node, let attempt, let delay, let error):
            o.field("node", node)
            instanceFields(event.instance, &o)
            o.field("attempt", attempt)
            o.field("delay_ms", delay)
            o.field("error", error.message)
        case .complete(let node, let duration, let exitCode, let outputs):
            o.field("node", node)
            instanceFields(event.instance, &o)
            o.field("duration_ms", duration)
            if let exitCode { o.field("exit_code", Int(exitCode)) }
            var out = JSONObjectWriter()
            for kv in outputs { out.field(kv.key, kv.value) }
            o.rawField("outputs", out.text)
            if event.stopped { o.rawField("stopped", "true") }
            usageField(event.usage, &o)
        case .error(let node, let duration, let error):
            o.field("node", node)
            instanceFields(event.instance, &o)
            o.field("duration_ms", duration)
            var e = JSONObjectWriter()
            e.field("kind", error.kind.rawValue)
            e.field("message", error.message)
            if let code = error.exitCode { e.field("exit_code", Int(code)) }
            if let signal = error.signal { e.field("signal", Int(signal)) }
            o.rawField("error", e.text)
            usageField(event.usage, &o)
        case .skip(let node, let reason):
            o.field("node", node)
            instanceFields(event.instance, &o)
            o.field("reason", reason.rawValue)
            if let restored = event.restored {
                var r = JSONObjectWriter()
                r.field("files", restored.files)
                r.field("bytes", Int(restored.bytes))
                o.rawField("restored", r.text)
            }
        case .expand(let node, let instances):
            o.field("node", node)
            o.rawField("instances", JSONString.array(instances))
        case .graphComplete(let ok, let duration, let counts, let path):
            o.rawField("ok", ok ? "true" : "false")
            o.field("duration_ms", duration)
            var c = JSONObjectWriter()
            c.field("succeeded", counts.succeeded)
            c.field("failed", counts.failed)
            c.field("skipped", counts.skipped)
            c.field("canceled", counts.canceled)
            o.rawField("counts", c.text)
            o.rawField("critical_path", JSONString.array(path))
            if let signal = event.interrupted { o.field("interrupted", signal) }
            if let limit = event.timedOut { o.field("timed_out", limit) }
            if !event.running.isEmpty { o.rawField("running", JSONString.array(event.running)) }
        case .watch(let changed, let nodes):
            o.rawField("changed", JSONString.array(changed))
            o.rawField("nodes", JSONString.array(nodes))
        }
        return o.close(ending)
    }

    /// A `complete`'s or an `error`'s `usage`, last.
    private static func usageField(_ usage: NodeUsage?, _ o: inout JSONObjectWriter) {
        guard let usage else { return }
        var u = JSONObjectWriter()
        u.field("cpu_user_ms", usage.cpuUserMilliseconds)
        u.field("cpu_sys_ms", usage.cpuSystemMilliseconds)
        u.field("max_rss_bytes", Int(usage.maxRSSBytes))
        u.field("source", usage.source.rawValue)
        o.rawField("usage", u.text)
    }

    /// An instance's `template`, and its `item` or `matrix`, after its `node`.
    private static func instanceFields(_ instance: RunEvent.Instance?, _ o: inout JSONObjectWriter) {
        guard let instance else { return }
        o.field("template", instance.template)
        if let item = instance.item { o.field("item", item) }
        guard !instance.matrix.isEmpty else { return }
        var m = JSONObjectWriter()
        for kv in instance.matrix { m.field(kv.key, kv.value) }
        o.rawField("matrix", m.text)
    }
}

/// Builds one JSON object in field order: the event stream's one writer
/// (and `moon trace`'s).
/// By hand, because the field order is a contract and the stream is hot;
/// keys and values are escaped straight into one UTF-8 buffer, made a
/// String once.
public struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init(capacity: Int = 0) {
        if capacity > 0 { bytes.reserveCapacity(capacity) }
    }

    public var text: String {
        var closed = bytes
        closed.append(UInt8(ascii: "}"))
        return String(decoding: closed, as: UTF8.self)
    }

    /// The text, closed with `ending` (`}`, or `}` and a newline).
    public mutating func close(_ ending: String = "}") -> String {
        bytes.append(contentsOf: ending.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func key(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        JSONString.quote(key, into: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func rawField(_ key: String, _ json: String) {
        self.key(key)
        bytes.append(contentsOf: json.utf8)
    }

    public mutating func field(_ key: String, _ value: String) {
        self.key(key)
        JSONString.quote(value, into: &bytes)
    }

    public mutating func field(_ key: String, _ value: Int) {
        self.key(key)
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        bytes[start...].reverse()
    }
}
