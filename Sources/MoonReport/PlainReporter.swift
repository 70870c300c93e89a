import Foundation
import MoonRun

/// Plain lines for pipes and CI logs: no cursor movement, no colour. Each
/// output line is attributed to its node (`build │ text`); a line marks each
/// start (with -v), success, failure, retry and skip; a summary ends the run.
public final class PlainReporter: Reporter {
    public enum Verbosity: Sendable {
        /// Only failures (with their last lines of output) and the summary.
        case quiet
        case normal
        /// Also each node's command as it starts.
        case verbose
    }

    private let sink: OutputSink
    private let verbosity: Verbosity
    /// Last lines of each node's output, kept to show with a failure.
    private var tails: [String: OutputTail] = [:]
    private var failures: [(node: String, error: NodeError)] = []
    static let tailLines = 20

    public init(sink: OutputSink, verbosity: Verbosity = .normal) {
        self.sink = sink
        self.verbosity = verbosity
    }

    public func report(_ event: RunEvent) {
        switch event.kind {
        case .graphStart(let graph, let nodes, _):
            if verbosity != .quiet { line("moon: running \(graph) (\(count(nodes.count, "node")))") }
        case .start(let node, _, let attempt, let command):
            tails[node] = OutputTail(limit: Self.tailLines)
            if verbosity == .verbose {
                line("▶ \(node)\(attempt > 1 ? " (attempt \(attempt))" : ""): \(command)")
            }
        case .next(let node, let stream, let text, _):
            if verbosity == .quiet {
                tails[node, default: OutputTail(limit: Self.tailLines)].append(text)
            } else {
                line("\(node) │ \(stream == .value ? "= " : "")\(text)")
            }
        case .retry(let node, let attempt, let delay, let error):
            if verbosity != .quiet {
                line("↻ \(node) attempt \(attempt) failed (\(error.summary)); retrying in \(Duration.milliseconds(delay).moonDescription)")
            }
        case .complete(let node, let duration, _, _):
            tails[node] = nil
            if verbosity != .quiet { line("✓ \(node) \(Duration.milliseconds(duration).moonDescription)") }
        case .error(let node, let duration, let error):
            line("✗ \(node) \(Duration.milliseconds(duration).moonDescription) (\(error.summary))")
            if verbosity == .quiet, let tail = tails[node] {
                for text in tail.lines { line("\(node) │ \(text)") }
            }
            tails[node] = nil
            if error.kind != .canceled { failures.append((node, error)) }
        case .skip(let node, let reason):
            if verbosity != .quiet { line("- \(node) skipped (\(reason.rawValue))") }
        case .graphComplete(let ok, let duration, let counts, let path):
            var parts = ["\(counts.succeeded) succeeded"]
            if counts.failed > 0 { parts.append("\(counts.failed) failed") }
            if counts.skipped > 0 { parts.append("\(counts.skipped) skipped") }
            if counts.canceled > 0 { parts.append("\(counts.canceled) canceled") }
            line("moon: \(ok ? "ok" : "FAILED") - \(parts.joined(separator: ", ")) in \(Duration.milliseconds(duration).moonDescription)")
            if verbosity != .quiet, path.count > 1 {
                line("critical path: \(path.joined(separator: " → "))")
            }
            for failure in failures {
                line("  ✗ \(failure.node): \(failure.error.message)")
            }
        }
    }

    private func line(_ text: String) {
        sink.write(text + "\n")
    }

    private func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }
}

/// The last `limit` lines of a node's output.
struct OutputTail {
    let limit: Int
    private(set) var lines: [String] = []

    init(limit: Int) {
        self.limit = limit
    }

    mutating func append(_ line: String) {
        if lines.count == limit { lines.removeFirst() }
        lines.append(line)
    }
}

extension Duration {
    /// Human durations as in the terminal view: 12ms, 1.2s, 2m03s.
    public var moonDescription: String {
        let ms = Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
        if ms < 1000 { return "\(ms)ms" }
        if ms < 60_000 { return String(format: "%.1fs", Double(ms) / 1000) }
        let s = ms / 1000
        let sec = s % 60
        return "\(s / 60)m\(sec < 10 ? "0" : "")\(sec)s"
    }
}
