import MoonEvents
import MoonGraph

/// The end of a run, for both reporters: each failed node with its command
/// and last lines of output, the critical path with durations, the slowest
/// nodes, and the result line with counts and wall time (last, where the eye
/// lands).
enum RunSummary {
    static let slowestCount = 3
    /// The failed instances of one template shown in full; the others are named in one line.
    static let detailedInstances = 3

    static func lines(_ ledger: RunLedger, verbosity: Verbosity, color: Bool) -> [StyledLine] {
        var out = failures(ledger, color: color)
        guard let end = ledger.end else {
            out.append(cutOff(ledger))
            return out
        }
        if verbosity != .quiet {
            if !end.criticalPath.isEmpty && ledger.plan.count > 1 {
                var line = StyledLine("critical path: ", .dim)
                for (i, node) in end.criticalPath.enumerated() {
                    if i > 0 { line.append(" → ", .dim) }
                    line.append(node, .bold)
                    if let ms = ledger.finished[node]?.durationMilliseconds {
                        line.append(" " + DurationText.format(.milliseconds(ms), .measured))
                    }
                }
                out.append(line)
            }
            let slowest = ledger.slowest(slowestCount)
            if slowest.count > 1 {
                var line = StyledLine("slowest: ", .dim)
                for (i, s) in slowest.enumerated() {
                    if i > 0 { line.append(", ", .dim) }
                    line.append(s.node, .bold)
                    line.append(" " + DurationText.format(.milliseconds(s.milliseconds), .measured))
                }
                out.append(line)
            }
            if let line = heaviest(ledger) { out.append(line) }
        }
        out.append(result(end))
        return out
    }

    /// `heaviest: memory build 212 MiB, test 40 MiB; CPU test 3.1s, build 1.2s, lint 180ms`:
    /// the nodes whose processes used the most (their `usage`), beside the
    /// slowest, when they stand out: in memory, at least twice the run's
    /// smallest peak and 16 MiB above it (every node's peak includes a
    /// floor, moon's own size at the spawn, which a node of `echo` reaches
    /// too); in CPU, at least 100 ms. Nothing when no node stands out, or
    /// fewer than two nodes ran processes.
    static func heaviest(_ ledger: RunLedger) -> StyledLine? {
        let floor = ledger.finished.values.compactMap { $0.usage?.maxRSSBytes }.min() ?? 0
        let memory = ledger.heaviest(slowestCount) { $0.maxRSSBytes }
            .filter { $0.amount >= 2 * floor && $0.amount - floor >= heavyMemoryMargin }
        let cpu = ledger.heaviest(slowestCount) { Int64($0.cpuMilliseconds) }.filter { $0.amount >= heavyCPUMilliseconds }
        guard !memory.isEmpty || !cpu.isEmpty else { return nil }
        var line = StyledLine("heaviest: ", .dim)
        if !memory.isEmpty {
            line.append("memory ", .dim)
            for (i, m) in memory.enumerated() {
                if i > 0 { line.append(", ", .dim) }
                line.append(m.node, .bold)
                line.append(" " + ByteSize.text(m.amount))
            }
        }
        if !cpu.isEmpty {
            line.append(memory.isEmpty ? "CPU " : "; CPU ", .dim)
            for (i, c) in cpu.enumerated() {
                if i > 0 { line.append(", ", .dim) }
                line.append(c.node, .bold)
                line.append(" " + DurationText.format(.milliseconds(c.amount), .measured))
            }
        }
        return line
    }

    /// How far above the run's smallest peak a node's must be to be named.
    static let heavyMemoryMargin: Int64 = 16 << 20
    /// The least CPU time a node must use to be named: below it, nothing is heavy.
    static let heavyCPUMilliseconds: Int64 = 100

    /// `moon: ok - 7 succeeded in 203ms` / `moon: ok - 32 up to date in 40ms`
    /// / `moon: ok - 1 succeeded, 30 up to date, 1 restored from the cache (2 KiB) in 90ms`
    /// / `moon: FAILED - 2 succeeded, 1 failed, 1 skipped in 3ms`
    /// / `moon: interrupted (SIGINT) - 2 succeeded, 2 canceled in 2.5s`.
    /// Nodes and instances are counted, not the templates a run expands.
    /// "N succeeded" (nodes that ran) is left out only when nothing ran
    /// and something was up to date or restored.
    static func result(_ end: RunLedger.End) -> StyledLine {
        let notRun = end.upToDateNodes + end.restoredNodes
        var parts: [String] = []
        if end.counts.succeeded > 0 || notRun == 0 { parts.append("\(end.counts.succeeded) succeeded") }
        if end.upToDateNodes > 0 { parts.append("\(end.upToDateNodes) up to date") }
        if end.restoredNodes > 0 { parts.append("\(end.restoredNodes) restored from the cache (\(ByteSize.text(end.restoredBytes)))") }
        if end.counts.failed > 0 { parts.append("\(end.counts.failed) failed") }
        let skipped = max(0, end.counts.skipped - notRun - end.declinedNodes)
        if end.declinedNodes > 0 { parts.append("\(end.declinedNodes) declined") }
        if skipped > 0 { parts.append("\(skipped) skipped") }
        if end.counts.canceled > 0 { parts.append("\(end.counts.canceled) canceled") }
        var line = StyledLine("moon: ", .dim)
        if end.ok {
            line.append("ok", .boldGreen)
        } else if let signal = end.interrupted {
            line.append("interrupted", .boldYellow)
            line.append(" (\(signal))")
        } else {
            line.append("FAILED", .boldRed)
            if end.declinedNodes > 0 && end.counts.failed == 0 { line.append(": a confirmation was declined") }
            if let limit = end.timedOut { line.append(": the run's --timeout of \(limit) expired") }
        }
        // Joined by hand: the first `joined(separator:)` of a process costs
        // the runtime a conformance scan, and a no-op calls none other.
        var counts = ""
        for (i, part) in parts.enumerated() { counts += i == 0 ? part : ", " + part }
        line.append(" - \(counts) in \(DurationText.format(.milliseconds(end.durationMilliseconds), .measured))")
        return line
    }

    /// Each failed node with its command and last lines; past the first
    /// few instances of a template, one line names the rest.
    static func failures(_ ledger: RunLedger, color: Bool) -> [StyledLine] {
        var out: [StyledLine] = []
        var shown: [String: Int] = [:]
        var more: [(template: String, nodes: [String])] = []
        for node in ledger.failures {
            if let template = RunEvent.Instance.template(ofName: node).map(String.init) {
                shown[template, default: 0] += 1
                if shown[template]! > detailedInstances {
                    if let i = more.firstIndex(where: { $0.template == template }) { more[i].nodes.append(node) } else { more.append((template, [node])) }
                    continue
                }
            }
            out += failure(node, ledger: ledger, color: color)
        }
        for (template, nodes) in more {
            var line = StyledLine("✗ ", .red)
            let named = nodes.prefix(5).joined(separator: ", ") + (nodes.count > 5 ? ", …" : "")
            line.append("… and \(nodes.count) more failed instance\(nodes.count == 1 ? "" : "s") of \(template): \(named)")
            out.append(line)
        }
        return out
    }

    static func failure(_ node: String, ledger: RunLedger, color: Bool) -> [StyledLine] {
        var out: [StyledLine] = []
        var head = StyledLine("✗ ", .red)
        head.append(node, .bold)
        if case .failed(let error)? = ledger.finished[node]?.outcome {
            head.append(" failed (\(error.summary))", .red)
            if !error.message.isEmpty { head.append(": " + error.message) }
        } else {
            head.append(" failed", .red)
        }
        out.append(head)
        if let command = ledger.commands[node] {
            for (i, part) in EventText.scriptLines(command).enumerated() {
                var line = StyledLine(i == 0 ? "  $ " : "    ", .dim)
                line.append(part)
                out.append(line)
            }
        }
        let tail = ledger.tails[node] ?? OutputTail(limit: RunLedger.tailLines)
        if tail.total > tail.lines.count {
            out.append(StyledLine("  … \(tail.total - tail.lines.count) earlier lines", .dim))
        }
        for text in tail.lines {
            var line = StyledLine("  ")
            line.spans += EventText.output(node: node, stream: .stdout, text: text, color: color).spans
            out.append(line)
        }
        if tail.total == 0 { out.append(StyledLine("  (no output)", .dim)) }
        return out
    }

    /// For a stream that ended without `graph-complete` (a cut-off recording).
    static func cutOff(_ ledger: RunLedger) -> StyledLine {
        var line = StyledLine("moon: ", .dim)
        line.append("incomplete", .boldRed)
        var text = " - the events end before graph-complete: \(ledger.done) of \(ledger.total) nodes finished"
        if !ledger.running.isEmpty { text += "; still running: " + ledger.running.map(\.node).joined(separator: ", ") }
        line.append(text)
        return line
    }
}
