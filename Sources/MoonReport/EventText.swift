import MoonEvents
import MoonGraph

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

    /// `▶ build: make -j4`; a script's further lines follow, indented as in
    /// the failure summary.
    static func started(node: String, attempt: Int, command: String) -> [StyledLine] {
        var line = StyledLine("▶ ", .cyan)
        line.append(node, Style.node(node))
        if attempt > 1 { line.append(" (attempt \(attempt))", .dim) }
        guard !command.isEmpty else { return [line] }
        let lines = scriptLines(command)
        line.append(": ")
        line.append(lines[0], .dim)
        return [line] + lines.dropFirst().map { StyledLine("    " + $0, .dim) }
    }

    /// A command's lines (a script's), as `-v` and the failure summary show them.
    static func scriptLines(_ command: String) -> [String] {
        guard command.utf8.contains(UInt8(ascii: "\n")) else { return [command] }
        return command.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// `build │ text`, the name padded to `width` so prefixes line up.
    static func output(node: String, stream: OutputStream, text: String, width: Int = 0, color: Bool) -> StyledLine {
        let pad = max(0, width - TextWidth.columns(node))
        var line = StyledLine(node + String(repeating: " ", count: pad) + " │ ", Style.node(node))
        if stream == .value { line.append("= ", .dim) }
        line.append(sanitized: TextWidth.sanitize(text, keepColor: color))
        return line
    }

    /// `✓ build 1.2s`; a group, which takes no time, without one.
    static func succeeded(node: String, milliseconds: Int?) -> StyledLine {
        var line = StyledLine("✓ ", .green)
        line.append(node, .bold)
        if let milliseconds { line.append(" " + DurationText.format(.milliseconds(milliseconds), .measured), .dim) }
        return line
    }

    /// A fan-out's line, counted from its instances alone (a template of
    /// the graph file, or one expanded during the run): how many of them
    /// stand (succeeded, up to date or restored) out of all, then how the
    /// others ended, then the time from the first start to the last end.
    /// `✓ obj 34/34 2.1s` · `✓ test 24/24 up to date` ·
    /// `✓ test 24/24 (20 up to date, 1 restored) 1.2s` ·
    /// `✗ agg 3/6 (1 failed, 2 skipped) 110ms` · `- count 0/100 skipped`.
    static func fanOut(template: String, group: RunLedger.Group, milliseconds: Int?) -> StyledLine {
        let mark: StyledLine
        if group.failed > 0 {
            mark = StyledLine("✗ ", .red)
        } else if group.ok == group.total {
            mark = StyledLine("✓ ", .green)
        } else {
            mark = StyledLine("- ", .dim)
        }
        var line = mark
        line.append(template, .bold)
        line.append(" \(group.ok)/\(group.total)")
        let kinds = [("up to date", group.upToDate), ("restored", group.restored), ("failed", group.failed),
                     ("skipped", group.skipped), ("canceled", group.canceled)].filter { $0.1 > 0 }
        if kinds.count == 1, kinds[0].1 == group.total {
            // All ended one way: the way, without a count.
            line.append(" " + (kinds[0].0 == "restored" ? "restored from the cache" : kinds[0].0), group.failed > 0 ? .red : .dim)
        } else if !kinds.isEmpty {
            line.append(" (" + kinds.map { "\($0.1) \($0.0)" }.joined(separator: ", ") + ")", group.failed > 0 ? .red : .dim)
        }
        // Nothing ran: no time to show.
        if let milliseconds, group.succeeded + group.failed + group.canceled > 0 {
            line.append(" " + DurationText.format(.milliseconds(milliseconds), .measured), .dim)
        }
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
            lines.append(fanOut(template: template, group: group, milliseconds: span(group, to: event)))
        }
        return lines
    }

    /// A fan-out's time: from its first instance's start to `event`.
    private static func span(_ group: RunLedger.Group, to event: RunEvent) -> Int? {
        group.started.map { max(0, Int((event.time.timeIntervalSince($0) * 1000).rounded())) }
    }

    private static func own(_ event: RunEvent, ledger: RunLedger, verbosity: Verbosity) -> StyledLine? {
        let loud = verbosity != .quiet
        let counted = verbosity != .verbose && RunLedger.template(of: event) != nil
        // A template expanded during the run ends as its instances did: its fan-out line.
        if let node = event.node, let group = ledger.groups[node], group.hasNode, group.total > 0 {
            switch event.kind {
            case .complete, .skip, .error:
                return loud ? fanOut(template: node, group: group, milliseconds: span(group, to: event)) : nil
            default:
                return nil
            }
        }
        switch event.kind {
        case .complete(let node, let duration, _, _):
            guard loud, !counted else { return nil }
            let timed = ledger.finished[node]?.ran != false
            var line = succeeded(node: node, milliseconds: timed ? duration : nil)
            // A service moon stopped at the end of the run: not a failure, but it did not end by itself.
            if event.stopped { line.append(" (stopped)", .dim) }
            return line
        case .error(let node, let duration, let error):
            guard loud || error.kind != .canceled, !(counted && error.kind == .canceled) else { return nil }
            return failed(node: node, milliseconds: duration, error: error)
        case .skip(let node, let reason):
            guard loud, !counted else { return nil }
            return skipped(node: node, reason: reason, restored: event.restored)
        default:
            return nil
        }
    }

    static func failed(node: String, milliseconds: Int, error: NodeError) -> StyledLine {
        let canceled = error.kind == .canceled
        var line = StyledLine("✗ ", canceled ? .yellow : .red)
        line.append(node, .bold)
        line.append(" " + DurationText.format(.milliseconds(milliseconds), .measured), .dim)
        line.append(" (\(error.summary))", canceled ? .yellow : .red)
        return line
    }

    static func retry(node: String, attempt: Int, delayMilliseconds: Int, error: NodeError) -> StyledLine {
        var line = StyledLine("↻ ", .yellow)
        line.append(node, .bold)
        // The message, not the summary: a retry event in the JSON stream
        // carries only the message, and a replay must read like the run.
        line.append(" attempt \(attempt) failed (\(error.message)); retrying in \(DurationText.format(.milliseconds(delayMilliseconds), .measured))")
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

    static func skipped(node: String, reason: SkipReason, restored: CacheRestore? = nil) -> StyledLine {
        var line = StyledLine("- ", .dim)
        line.append(node, .bold)
        if let restored, restored.files == 0 {
            // A check-only node's cache entry holds no files: only that it passed.
            line.append(" skipped (passed before with these inputs)", .dim)
        } else if let restored {
            let files = restored.files == 1 ? "1 file" : "\(restored.files) files"
            line.append(" restored from the cache (\(files), \(ByteSize.text(restored.bytes)))", .dim)
        } else {
            // moon's own words: nothing in them to sanitize.
            line.append(sanitized: " skipped (" + reason.rawValue + ")", .dim)
        }
        return line
    }
}
