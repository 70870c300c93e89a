import Foundation
import MoonEvents
import MoonJSON

/// A trace as the history keeps it (`run_traces`, one row per run that ran
/// something): compact JSON of arrays, an attempt per row, so `moon trace
/// --run N` draws a past run as it was. The writer and the reader of that
/// text, side by side; a text that does not read is an error, never a trap.
public enum TraceRecordText {
    /// The longest command kept per attempt: a trace shows a command to be
    /// recognised, and the history keeps hundreds of runs.
    static let commandLimit = 4096

    public struct DecodingError: Error, CustomStringConvertible {
        public var description: String
    }

    public static func encode(_ model: TraceModel) -> String {
        var o = JSONObjectWriter()
        o.field("v", 1)
        o.field("graph", model.graph)
        o.rawField("started", String(model.startedAt.timeIntervalSince1970))
        o.field("duration_us", Int(model.durationMicroseconds))
        if let ok = model.ok { o.rawField("ok", ok ? "true" : "false") }
        if let signal = model.interrupted { o.field("interrupted", signal) }
        o.field("up_to_date", model.upToDate)
        o.rawField("queues", list(model.queues.map { "[" + quoted($0.name) + ",\($0.width),\($0.lanes)]" }))
        o.rawField("critical_path", JSONString.array(model.criticalPath))
        // Only the needs of what the trace shows.
        var needs = JSONObjectWriter()
        var seen = Set<String>()
        for attempt in model.attempts {
            for name in [attempt.node, attempt.template].compactMap({ $0 }) where seen.insert(name).inserted {
                if let list = model.needs[name] { needs.rawField(name, JSONString.array(list)) }
            }
        }
        o.rawField("needs", needs.text)
        o.rawField("attempts", list(model.attempts.map(row)))
        o.rawField("restored", list(model.restored.map { "[" + quoted($0.node) + ",\($0.time),\($0.files),\($0.bytes)]" }))
        return o.text
    }

    private static func quoted(_ s: String) -> String {
        var out = ""
        JSONString.quote(s, into: &out)
        return out
    }

    private static func optional(_ value: Int?) -> String { value.map(String.init) ?? "null" }

    /// [node, template, queue, slot, attempt, start, duration, waited, command, outcome, exit, error, critical, usage]
    private static func row(_ a: TraceAttempt) -> String {
        let usage = a.usage.map { "[\($0.cpuUserMilliseconds),\($0.cpuSystemMilliseconds),\($0.maxRSSBytes)]" } ?? "null"
        let fields = [quoted(a.node), a.template.map(quoted) ?? "null", String(a.queue), String(a.slot), String(a.attempt),
                      String(a.start), String(a.duration), optional(a.waitedMilliseconds),
                      quoted(String(a.command.prefix(commandLimit))), quoted(a.outcome.rawValue),
                      optional(a.exitCode.map(Int.init)), a.error.map(quoted) ?? "null", a.critical ? "1" : "0", usage]
        return list(fields)
    }

    /// A JSON array of `items` (each JSON text already), by a loop: the
    /// first generic `joined` of a process scans every conformance record,
    /// and a run that ran one command writes this trace and little else.
    private static func list(_ items: [String]) -> String {
        var out = "["
        for (i, item) in items.enumerated() {
            if i > 0 { out += "," }
            out += item
        }
        return out + "]"
    }

    public static func decode(_ text: String) throws -> TraceModel {
        func fail(_ what: String) -> DecodingError { DecodingError(description: "the stored trace is damaged (\(what))") }
        let value: JSONValue
        do { value = try JSONParser.parse(text) } catch { throw fail("not JSON: \(error)") }
        guard case .int(1)? = value["v"] else { throw fail("unknown version") }
        guard let graph = value["graph"]?.string, let started = number(value["started"]) else { throw fail("no graph") }
        var model = TraceModel(graph: graph, startedAt: Date(timeIntervalSince1970: started))
        model.durationMicroseconds = Int64(int(value["duration_us"]) ?? 0)
        if case .bool(let ok)? = value["ok"] { model.ok = ok }
        model.interrupted = value["interrupted"]?.string
        model.upToDate = int(value["up_to_date"]) ?? 0
        guard case .array(let queues)? = value["queues"] else { throw fail("no queues") }
        for queue in queues {
            guard case .array(let q) = queue, q.count == 3, let name = q[0].string, let width = int(q[1]), let lanes = int(q[2]) else {
                throw fail("a queue")
            }
            model.queues.append(TraceQueue(name: name, width: width, lanes: lanes))
        }
        model.criticalPath = value["critical_path"]?.stringArray ?? []
        if case .object(let needs)? = value["needs"] {
            for (name, list) in needs { model.needs[name] = list.stringArray ?? [] }
        }
        guard case .array(let attempts)? = value["attempts"] else { throw fail("no attempts") }
        for item in attempts {
            guard case .array(let f) = item, f.count == 14, let node = f[0].string, let q = int(f[2]), model.queues.indices.contains(q),
                  let slot = int(f[3]), slot >= 0, slot < model.queues[q].lanes, let number = int(f[4]), let start = int(f[5]), let duration = int(f[6]),
                  let command = f[8].string, let outcome = f[9].string.flatMap(TraceAttempt.Outcome.init(rawValue:)) else {
                throw fail("an attempt")
            }
            var usage: NodeUsage?
            if case .array(let u) = f[13], u.count == 3, let user = int(u[0]), let sys = int(u[1]), let rss = int(u[2]), rss >= 0 {
                usage = NodeUsage(cpuUserMilliseconds: user, cpuSystemMilliseconds: sys, maxRSSBytes: Int64(rss))
            }
            model.attempts.append(TraceAttempt(node: node, template: f[1].string, queue: q, slot: slot, attempt: number,
                                               start: Int64(start), duration: Int64(duration), waitedMilliseconds: int(f[7]),
                                               command: command, outcome: outcome, exitCode: int(f[10]).flatMap { Int32(exactly: $0) },
                                               error: f[11].string, critical: int(f[12]) == 1, usage: usage))
        }
        if case .array(let restored)? = value["restored"] {
            for item in restored {
                guard case .array(let f) = item, f.count == 4, let node = f[0].string, let time = int(f[1]), let files = int(f[2]),
                      let bytes = int(f[3]) else { throw fail("a restore") }
                model.restored.append(TraceRestore(node: node, time: Int64(time), files: files, bytes: Int64(bytes)))
            }
        }
        return model
    }

    private static func int(_ value: JSONValue?) -> Int? {
        if case .int(let n)? = value { return n }
        return nil
    }

    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .int(let n)?: return Double(n)
        case .double(let d)?: return d
        default: return nil
        }
    }
}
