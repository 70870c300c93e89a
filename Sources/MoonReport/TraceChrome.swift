import MoonEvents
import MoonJSON

/// A trace as Chrome trace-event JSON (the JSON Array Format), which
/// Perfetto, `chrome://tracing` and speedscope load: a process per queue and
/// a thread per lane (named by `M` events), one complete event (`X`) per
/// attempt, flow events (`s`, `f`) for needs, the critical path again on a
/// process of its own, and the cache's restores as instant events. The
/// format lets the closing `]` be missing, so a file cut off mid-run loads.
/// `TraceFileReporter` writes the same events as the run goes.
public enum TraceChrome {
    /// The process of the critical path, and of the cache's restores; the
    /// queues follow, in the order the run listed them.
    static let criticalPID = 1
    static let cachePID = 2
    static func pid(ofQueue q: Int) -> Int { q + 3 }

    /// The whole trace of `model`, one event per line.
    public static func document(_ model: TraceModel) -> String {
        var events = header(model)
        for (q, queue) in model.queues.enumerated() {
            for lane in 0..<queue.lanes { events.append(laneName(queue: q, lane: lane)) }
        }
        for attempt in model.attempts { events.append(span(attempt, model: model)) }
        for (id, flow) in model.flows().enumerated() {
            events += arrow(id: id + 1, from: model.attempts[flow.from], to: model.attempts[flow.to])
        }
        for restore in model.restored { events.append(restored(restore)) }
        events += footer(model)
        return "[\n" + events.joined(separator: ",\n") + "\n]\n"
    }

    /// The processes: the critical path, the cache, then each queue.
    static func header(_ model: TraceModel) -> [String] {
        var events = [processName(criticalPID, "critical path", sort: 0), processName(cachePID, "restored from cache", sort: 1),
                      threadName(pid: criticalPID, tid: 1, "critical path"), threadName(pid: cachePID, tid: 1, "output cache")]
        for (q, queue) in model.queues.enumerated() { events.append(processName(pid(ofQueue: q), "queue \(queue.name)", sort: q + 2)) }
        return events
    }

    /// The end of the run: the critical path's spans, and the run's outcome.
    static func footer(_ model: TraceModel) -> [String] {
        var events = model.attempts.filter(\.critical).map { span($0, model: model, onCriticalLane: true) }
        var args = JSONObjectWriter()
        if let ok = model.ok { args.rawField("ok", ok ? "true" : "false") }
        if let signal = model.interrupted { args.field("interrupted", signal) }
        args.field("up_to_date", model.upToDate)
        args.field("restored", model.restored.count)
        args.rawField("critical_path", JSONString.array(model.criticalPath))
        var o = JSONObjectWriter()
        o.field("name", "run \(model.graph)")
        o.field("cat", "run")
        o.field("ph", "X")
        o.field("ts", 0)
        o.field("dur", Int(model.durationMicroseconds))
        o.field("pid", criticalPID)
        o.field("tid", 2)
        o.rawField("args", args.text)
        events.append(threadName(pid: criticalPID, tid: 2, "run"))
        events.append(o.text)
        return events
    }

    static func processName(_ pid: Int, _ name: String, sort: Int) -> String {
        var args = JSONObjectWriter()
        args.field("name", name)
        var sortArgs = JSONObjectWriter()
        sortArgs.field("sort_index", sort)
        return metadata("process_name", pid: pid, tid: 0, args: args.text) + ",\n"
            + metadata("process_sort_index", pid: pid, tid: 0, args: sortArgs.text)
    }

    static func threadName(pid: Int, tid: Int, _ name: String) -> String {
        var args = JSONObjectWriter()
        args.field("name", name)
        var sortArgs = JSONObjectWriter()
        sortArgs.field("sort_index", tid)
        return metadata("thread_name", pid: pid, tid: tid, args: args.text) + ",\n"
            + metadata("thread_sort_index", pid: pid, tid: tid, args: sortArgs.text)
    }

    /// The name of lane `lane` of queue `q`: "slot 1", "slot 2"…
    static func laneName(queue q: Int, lane: Int) -> String {
        threadName(pid: pid(ofQueue: q), tid: lane + 1, "slot \(lane + 1)")
    }

    private static func metadata(_ name: String, pid: Int, tid: Int, args: String) -> String {
        var o = JSONObjectWriter()
        o.field("name", name)
        o.field("ph", "M")
        o.field("pid", pid)
        o.field("tid", tid)
        o.rawField("args", args)
        return o.text
    }

    /// An attempt's complete event, on its lane (or on the critical path's).
    static func span(_ attempt: TraceAttempt, model: TraceModel, onCriticalLane: Bool = false) -> String {
        var args = JSONObjectWriter()
        args.field("queue", model.queues[attempt.queue].name)
        args.field("slot", attempt.slot + 1)
        args.field("attempt", attempt.attempt)
        args.rawField("retry", attempt.attempt > 1 ? "true" : "false")
        args.field("result", attempt.outcome.rawValue)
        if let code = attempt.exitCode { args.field("exit_code", Int(code)) }
        if let waited = attempt.waitedMilliseconds { args.field("waited_ms", waited) }
        // A node that ran was neither restored nor up to date; those are the cache's instant events.
        args.field("cache", "miss")
        // Known once the run ended: a span written while it runs leaves it out.
        if model.ok != nil || onCriticalLane { args.rawField("critical", attempt.critical ? "true" : "false") }
        if let usage = attempt.usage {
            args.field("cpu_user_ms", Int(usage.cpuUserMilliseconds))
            args.field("cpu_sys_ms", Int(usage.cpuSystemMilliseconds))
            args.field("max_rss_bytes", Int(usage.maxRSSBytes))
        }
        if let template = attempt.template { args.field("template", template) }
        if !attempt.command.isEmpty { args.field("command", attempt.command) }
        if let error = attempt.error { args.field("error", error) }
        var o = JSONObjectWriter()
        o.field("name", attempt.node)
        o.field("cat", onCriticalLane ? "critical" : "node")
        o.field("ph", "X")
        o.field("ts", Int(attempt.start))
        o.field("dur", Int(attempt.duration))
        o.field("pid", onCriticalLane ? criticalPID : pid(ofQueue: attempt.queue))
        o.field("tid", onCriticalLane ? 1 : attempt.slot + 1)
        o.rawField("args", args.text)
        return o.text
    }

    /// A need's arrow: a flow from the start of the need's span to the
    /// start of its dependent's, each bound to the span it starts with.
    static func arrow(id: Int, from: TraceAttempt, to: TraceAttempt) -> [String] {
        func end(_ phase: String, _ attempt: TraceAttempt) -> String {
            var o = JSONObjectWriter()
            o.field("name", "needs")
            o.field("cat", "node")
            o.field("ph", phase)
            o.field("id", id)
            o.field("ts", Int(attempt.start))
            o.field("pid", pid(ofQueue: attempt.queue))
            o.field("tid", attempt.slot + 1)
            if phase == "f" { o.field("bp", "e") }
            return o.text
        }
        return [end("s", from), end("f", to)]
    }

    static func restored(_ restore: TraceRestore) -> String {
        var args = JSONObjectWriter()
        args.field("cache", "restored from cache")
        args.field("files", restore.files)
        args.field("bytes", Int(restore.bytes))
        var o = JSONObjectWriter()
        o.field("name", restore.node)
        o.field("cat", "cache")
        o.field("ph", "i")
        o.field("s", "t")
        o.field("ts", Int(restore.time))
        o.field("pid", cachePID)
        o.field("tid", 1)
        o.rawField("args", args.text)
        return o.text
    }
}
