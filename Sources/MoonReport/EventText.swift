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

    static func succeeded(node: String, milliseconds: Int) -> StyledLine {
        var line = StyledLine("✓ ", .green)
        line.append(node, .bold)
        line.append(" " + DurationText.milliseconds(milliseconds), .dim)
        return line
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

    static func skipped(node: String, reason: SkipReason, restored: CacheRestore? = nil) -> StyledLine {
        var line = StyledLine("- ", .dim)
        line.append(node, .bold)
        if let restored {
            let files = restored.files == 1 ? "1 file" : "\(restored.files) files"
            line.append(" restored from the cache (\(files), \(DurationText.bytes(restored.bytes)))", .dim)
        } else {
            line.append(" skipped (\(reason.rawValue))", .dim)
        }
        return line
    }
}
