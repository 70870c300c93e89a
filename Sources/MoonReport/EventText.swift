import MoonEvents

/// The lines both reporters print for events, as styled text: the plain log
/// renders them without colour, the terminal view with it.
enum EventText {
    static func header(graph: String, nodes: Int) -> StyledLine {
        var line = StyledLine("moon: ", .dim)
        line.append("running ")
        line.append(graph, .bold)
        line.append(" (\(nodes) node\(nodes == 1 ? "" : "s"))")
        return line
    }

    static func started(node: String, attempt: Int, command: String) -> StyledLine {
        var line = StyledLine("▶ ", .cyan)
        line.append(node, Style.node(node))
        if attempt > 1 { line.append(" (attempt \(attempt))", .dim) }
        if !command.isEmpty {
            line.append(": ")
            line.append(command.replacingOccurrences(of: "\n", with: "⏎ "), .dim)
        }
        return line
    }

    /// `build │ text`, the name padded to `width` so prefixes line up.
    static func output(node: String, stream: OutputStream, text: String, width: Int = 0, color: Bool) -> StyledLine {
        let pad = max(0, width - TextWidth.columns(node))
        var line = StyledLine(node + String(repeating: " ", count: pad) + " │ ", Style.node(node))
        if stream == .value { line.append("= ", .dim) }
        line.append(sanitized: TextWidth.sanitize(text, keepColor: color))
        return line
    }

    /// `✓ build 1.2s`; a group, which takes no time, without one; a
    /// template with how many of its instances succeeded (`✓ obj 34/34 2.1s`).
    static func succeeded(node: String, milliseconds: Int?, group: RunLedger.Group? = nil) -> StyledLine {
        var line = StyledLine("✓ ", .green)
        line.append(node, .bold)
        if let group { line.append(" \(group.succeeded)/\(group.total)") }
        if let milliseconds { line.append(" " + DurationText.milliseconds(milliseconds), .dim) }
        return line
    }

    /// The lines of a node's end (`complete`, `error` or `skip`, already in
    /// `ledger`): quiet prints failures only, and an instance's success,
    /// skip or cancellation is counted in its template's line rather than
    /// printed, unless verbose. The template's line comes with its own end,
    /// or for a template of the graph file (which has no node), with the
    /// end of its last instance.
    static func ending(_ event: RunEvent, ledger: RunLedger, verbosity: Verbosity) -> [StyledLine] {
        var lines = own(event, ledger: ledger, verbosity: verbosity).map { [$0] } ?? []
        if verbosity != .quiet, let template = RunLedger.template(of: event), let group = ledger.groups[template],
           !group.hasNode, group.done == group.total {
            let milliseconds = group.started.map { max(0, Int((event.time.timeIntervalSince($0) * 1000).rounded())) }
            lines.append(group.succeeded == group.total ? succeeded(node: template, milliseconds: milliseconds, group: group)
                                                         : ended(template: template, group: group))
        }
        return lines
    }

    /// `- obj: 30/34 succeeded, 4 failed`: a template whose instances did not all succeed.
    static func ended(template: String, group: RunLedger.Group) -> StyledLine {
        var line = StyledLine("- ", .dim)
        line.append(template, .bold)
        line.append(": " + counts(group), .dim)
        return line
    }

    private static func own(_ event: RunEvent, ledger: RunLedger, verbosity: Verbosity) -> StyledLine? {
        let loud = verbosity != .quiet
        let counted = verbosity != .verbose && RunLedger.template(of: event) != nil
        switch event.kind {
        case .complete(let node, let duration, _, _):
            guard loud, !counted else { return nil }
            let group = ledger.groups[node]
            let timed = group != nil || ledger.finished[node]?.ran != false
            var line = succeeded(node: node, milliseconds: timed ? duration : nil, group: group)
            // A service moon stopped at the end of the run: not a failure, but it did not end by itself.
            if event.stopped { line.append(" (stopped)", .dim) }
            return line
        case .error(let node, let duration, let error):
            guard loud || error.kind != .canceled, !(counted && error.kind == .canceled) else { return nil }
            return failed(node: node, milliseconds: duration, error: error)
        case .skip(let node, let reason):
            guard loud, !counted else { return nil }
            return skipped(node: node, reason: reason, group: ledger.groups[node], restored: event.restored)
        default:
            return nil
        }
    }

    static func failed(node: String, milliseconds: Int, error: NodeError) -> StyledLine {
        let canceled = error.kind == .canceled
        var line = StyledLine("✗ ", canceled ? .yellow : .red)
        line.append(node, .bold)
        line.append(" " + DurationText.milliseconds(milliseconds), .dim)
        line.append(" (\(error.summary))", canceled ? .yellow : .red)
        return line
    }

    static func retry(node: String, attempt: Int, delayMilliseconds: Int, error: NodeError) -> StyledLine {
        var line = StyledLine("↻ ", .yellow)
        line.append(node, .bold)
        // The message, not the summary: a retry event in the JSON stream
        // carries only the message, and a replay must read like the run.
        line.append(" attempt \(attempt) failed (\(error.message)); retrying in \(DurationText.milliseconds(delayMilliseconds))")
        return line
    }

    /// Watch mode's line before a rerun: what changed, what runs again.
    static func watch(changed: [String], nodes: [String]) -> StyledLine {
        var line = StyledLine("moon: ", .dim)
        let shown = changed.prefix(3).joined(separator: ", ")
        line.append("changed ")
        line.append(changed.isEmpty ? "(files)" : shown, .bold)
        if changed.count > 3 { line.append(" and \(changed.count - 3) more") }
        line.append(nodes.isEmpty ? ": nothing to rerun" : ": rerunning " + nodes.joined(separator: ", "), .dim)
        return line
    }

    static func skipped(node: String, reason: SkipReason, group: RunLedger.Group? = nil, restored: CacheRestore? = nil) -> StyledLine {
        var line = StyledLine("- ", .dim)
        line.append(node, .bold)
        if let restored, restored.files == 0 {
            // A check-only node's cache entry holds no files: only that it passed.
            line.append(" skipped (passed before with these inputs)", .dim)
        } else if let restored {
            let files = restored.files == 1 ? "1 file" : "\(restored.files) files"
            line.append(" restored from the cache (\(files), \(ByteText.bytes(restored.bytes)))", .dim)
        } else {
            line.append(" skipped (\(reason.rawValue))", .dim)
        }
        if let group, group.total > 0 { line.append(": " + counts(group), .dim) }
        return line
    }

    /// `19/20 succeeded, 1 failed`: how a template's instances ended.
    static func counts(_ group: RunLedger.Group) -> String {
        var parts = ["\(group.succeeded)/\(group.total) succeeded"]
        if group.failed > 0 { parts.append("\(group.failed) failed") }
        if group.skipped > 0 { parts.append("\(group.skipped) skipped") }
        if group.canceled > 0 { parts.append("\(group.canceled) canceled") }
        return parts.joined(separator: ", ")
    }
}
