import Foundation
import MoonEvents

/// The live status at the bottom of the terminal view, as lines that fit
/// the terminal: `[done/total]`, the elapsed time, and each running node
/// with its queue and own elapsed time, and the line it is writing when
/// that has no newline yet (progress dots, a `\r` progress bar); a node that
/// wrote no byte for `stallAfter` is marked stalled. A pure function of the ledger and the
/// time, so tests render it without a terminal or a clock.
struct StatusArea {
    var width: Int
    /// Most lines the area may take (the terminal's height leaves room for output).
    var maxLines: Int
    var stallAfterMilliseconds: Int

    /// The full area: a header line, then one line per running node (the
    /// oldest first), with `… N more` when they do not all fit.
    func lines(_ ledger: RunLedger, now: Date) -> [StyledLine] {
        var out = [header(ledger, now: now)]
        let rows = max(1, maxLines - 1)
        let running = ledger.running
        let shown = running.count > rows ? rows - 1 : running.count
        let nameWidth = min(24, running.prefix(shown).map { TextWidth.columns($0.node) }.max() ?? 0)
        let queueWidth = min(12, running.prefix(shown).map { TextWidth.columns($0.queue) }.max() ?? 0)
        for node in running.prefix(shown) {
            var line = StyledLine("  ")
            line.append(pad(StyledLine(node.node).fitted(to: nameWidth).plain, nameWidth), Style.node(node.node))
            line.append("  " + pad(node.queue, queueWidth), .dim)
            line.append("  " + DurationText.elapsed(ms(now, since: node.started)))
            if node.attempt > 1 { line.append(" (attempt \(node.attempt))", .yellow) }
            if let quiet = stalled(node, now: now) { line.append("  stalled: no output for \(DurationText.elapsed(quiet))", .yellow) }
            if let partial = node.partial.map(Self.lastSegment), !partial.isEmpty {
                line.append("  │ ", Style.node(node.node))
                line.append(partial)
            }
            out.append(line)
        }
        if running.count > shown {
            out.append(StyledLine("  … \(running.count - shown) more running", .dim))
        }
        return out.map { $0.fitted(to: width - 1) }
    }

    /// One line for a terminal without escape sequences (it is redrawn with
    /// a carriage return): `[3/7] 4.2s · build 1.0s, test 35.0s (stalled) +2`.
    func compactLine(_ ledger: RunLedger, now: Date) -> StyledLine {
        var line = header(ledger, now: now)
        for (i, node) in ledger.running.enumerated() {
            var part = StyledLine(i == 0 ? " · " : ", ")
            part.append(node.node, Style.node(node.node))
            part.append(" " + DurationText.elapsed(ms(now, since: node.started)))
            if stalled(node, now: now) != nil { part.append(" (stalled)", .yellow) }
            // Keep room for "+N" rather than cutting a name in half.
            let more = " +\(ledger.running.count - i)"
            let room = width - 1 - (i == ledger.running.count - 1 ? 0 : more.count + 1)
            if line.columns + part.columns > room {
                line.append(more, .dim)
                break
            }
            line.spans += part.spans
        }
        return line.fitted(to: width - 1)
    }

    func header(_ ledger: RunLedger, now: Date) -> StyledLine {
        var line = StyledLine("[\(ledger.done)/\(ledger.total)]", .bold)
        let elapsed = ledger.started.map { ms(now, since: $0) } ?? 0
        line.append(" " + DurationText.elapsed(elapsed))
        if !ledger.running.isEmpty { line.append(" · \(ledger.running.count) running", .dim) }
        if ledger.restoredNodes > 0 {
            line.append(" · \(ledger.restoredNodes) restored (\(DurationText.bytes(ledger.restoredBytes)))", .dim)
        }
        if ledger.failedCount > 0 { line.append(" · \(ledger.failedCount) failed", .red) }
        return line
    }

    /// What a terminal shows of a line being written: after its last `\r`
    /// (a progress bar redraws itself so), one that ends it aside.
    static func lastSegment(_ text: String) -> String {
        var text = Substring(text)
        while text.last == "\r" { text = text.dropLast() }
        if let cr = text.lastIndex(of: "\r") { text = text[text.index(after: cr)...] }
        return String(text)
    }

    /// How long a node has been silent, when that is at least `stallAfter`.
    func stalled(_ node: RunLedger.Running, now: Date) -> Int? {
        guard stallAfterMilliseconds > 0 else { return nil }
        let quiet = ms(now, since: node.lastOutput)
        return quiet >= stallAfterMilliseconds ? quiet : nil
    }

    private func ms(_ now: Date, since start: Date) -> Int {
        max(0, Int((now.timeIntervalSince(start) * 1000).rounded()))
    }

    private func pad(_ text: String, _ width: Int) -> String {
        let w = TextWidth.columns(text)
        return w >= width ? text : text + String(repeating: " ", count: width - w)
    }
}
