import Foundation
import MoonEvents
import MoonGraph

/// The live status at the bottom of the terminal view, as lines that fit
/// the terminal: `[done/total]`, the elapsed time, and each running node
/// with its queue and own elapsed time (a fan-out's instances in one row,
/// `test 9/24  default  1m02s · test_make, test_funcs`), and the line it is
/// writing when that has no newline yet (progress dots, a `\r` progress bar); a node that
/// wrote no byte for `stallAfter` is marked stalled. A pure function of the ledger and the
/// time, so tests render it without a terminal or a clock.
struct StatusArea {
    var width: Int
    /// Most lines the area may take (the terminal's height leaves room for output).
    var maxLines: Int
    var stallAfterMilliseconds: Int

    /// One row of the area: a running node, or the running instances of
    /// one template (`obj 12/34`, the time since its first instance
    /// started, the running ones by a short name).
    struct Row {
        var node: RunLedger.Running
        /// For a template's row: the running instances, oldest first, each
        /// by `shortName`.
        var instances: [String] = []
        /// For a template's row: how many of its instances have ended, of how many.
        var done = 0
        var total = 0
    }

    /// The running nodes, the oldest first, the instances of a template in one row at its oldest's place.
    static func rows(_ ledger: RunLedger) -> [Row] {
        var rows: [Row] = []
        var rowOf: [String: Int] = [:]
        for node in ledger.running {
            guard let template = RunEvent.Instance.template(ofName: node.node).map(String.init), let group = ledger.groups[template] else {
                rows.append(Row(node: node))
                continue
            }
            if let i = rowOf[template] {
                rows[i].instances.append(shortName(node.node, template: template))
                rows[i].node.lastOutput = max(rows[i].node.lastOutput, node.lastOutput)
                continue
            }
            var row = Row(node: node, instances: [shortName(node.node, template: template)], done: group.done, total: group.total)
            row.node.node = "\(template) \(group.done)/\(group.total)"
            // The fan-out's time, not its oldest running instance's (which, with many short ones, stays near 0).
            row.node.started = group.started ?? node.started
            row.node.partial = nil
            row.node.attempt = 1
            rowOf[template] = rows.count
            rows.append(row)
        }
        return rows
    }

    /// What tells an instance from its siblings in little room: its item's
    /// file name without the last extension (`tests/test_make.py` →
    /// `test_make`). An extension starts with a letter, so `3.12` (a matrix
    /// value, a version) stays whole.
    static func shortName(_ node: String, template: String) -> String {
        var item = Substring(node.dropFirst(template.count + 1).dropLast())
        if let slash = item.lastIndex(of: "/"), item.index(after: slash) < item.endIndex { item = item[item.index(after: slash)...] }
        if let dot = item.lastIndex(of: "."), dot > item.startIndex {
            let ext = item[item.index(after: dot)...]
            if ext.first?.isLetter == true, ext.allSatisfy({ $0.isLetter || $0.isNumber }) { item = item[..<dot] }
        }
        return String(item)
    }

    /// `~12s left`: the fan-out's pace so far, once it has one.
    static func remaining(_ row: Row, elapsed: Int) -> String? {
        guard row.done > 0, row.done < row.total, elapsed >= 2_000 else { return nil }
        return "~" + DurationText.format(.milliseconds(elapsed * (row.total - row.done) / row.done), .ticking) + " left"
    }

    /// The full area: a header line, then one line per running node (the
    /// oldest first), with `… N more` when they do not all fit.
    func lines(_ ledger: RunLedger, now: Date) -> [StyledLine] {
        var out = [header(ledger, now: now)]
        let rows = max(1, maxLines - 1)
        let grouped = Self.rows(ledger)
        let running = grouped.map(\.node)
        let shown = running.count > rows ? rows - 1 : running.count
        let nameWidth = min(24, running.prefix(shown).map { TextWidth.columns($0.node) }.max() ?? 0)
        let queueWidth = min(12, running.prefix(shown).map { TextWidth.columns($0.queue) }.max() ?? 0)
        for row in grouped.prefix(shown) {
            let node = row.node
            var line = StyledLine("  ")
            line.append(pad(StyledLine(node.node).fitted(to: nameWidth).plain, nameWidth), Style.node(node.node))
            line.append("  " + pad(node.queue, queueWidth), .dim)
            let elapsed = ms(now, since: node.started)
            line.append("  " + DurationText.format(.milliseconds(elapsed), .ticking))
            if node.attempt > 1 { line.append(" (attempt \(node.attempt))", .yellow) }
            if let left = Self.remaining(row, elapsed: elapsed) { line.append(" · " + left, .dim) }
            if let quiet = stalled(node, now: now) { line.append("  stalled: no output for \(DurationText.format(.milliseconds(quiet), .ticking))", .yellow) }
            if !row.instances.isEmpty { line.spans += names(row.instances, room: width - 1 - line.columns).spans }
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

    /// ` · test_make, test_funcs +3`: as many names as `room` columns
    /// take, then how many more run.
    func names(_ names: [String], room: Int) -> StyledLine {
        var line = StyledLine(" · ", .dim)
        for (i, name) in names.enumerated() {
            let part = (i == 0 ? "" : ", ") + name
            let more = i == names.count - 1 ? "" : " +\(names.count - i - 1)"
            // Keep room for "+N" rather than cutting a name in half.
            if line.columns + TextWidth.columns(part) + more.count > room {
                line.append(i == 0 ? "\(names.count) running" : " +\(names.count - i)", .dim)
                return line
            }
            line.append(part, .dim)
        }
        return line
    }

    /// One line for a terminal without escape sequences (it is redrawn with
    /// a carriage return): `[3/7] 4.2s · build 1.0s, test 35.0s (stalled) +2`.
    func compactLine(_ ledger: RunLedger, now: Date) -> StyledLine {
        var line = header(ledger, now: now)
        let running = Self.rows(ledger).map(\.node)
        for (i, node) in running.enumerated() {
            var part = StyledLine(i == 0 ? " · " : ", ")
            part.append(node.node, Style.node(node.node))
            part.append(" " + DurationText.format(.milliseconds(ms(now, since: node.started)), .ticking))
            if stalled(node, now: now) != nil { part.append(" (stalled)", .yellow) }
            // Keep room for "+N" rather than cutting a name in half.
            let more = " +\(running.count - i)"
            let room = width - 1 - (i == running.count - 1 ? 0 : more.count + 1)
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
        line.append(" " + DurationText.format(.milliseconds(elapsed), .ticking))
        if !ledger.running.isEmpty { line.append(" · \(ledger.running.count) running", .dim) }
        if ledger.restoredNodes > 0 {
            line.append(" · \(ledger.restoredNodes) restored (\(ByteSize.text(ledger.restoredBytes)))", .dim)
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
