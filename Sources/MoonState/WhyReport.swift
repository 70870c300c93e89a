import Foundation
import MoonJSON

/// `moon why NODE`'s answer: whether the node will run, may run or is up
/// to date, and why — the parts of its fingerprint that differ from its
/// last success (or, for a node that is up to date, what made it run last
/// time), a node that never succeeded, and what the output cache holds.
/// Made from what the store and the check found (`make`); printed as text
/// (`lines`) or as one JSON object (`json`, described in docs/incremental.md).
public struct WhyReport: Sendable {
    public var node: String
    /// `will run`, `may run` or `up to date` (as `moon status` says).
    public var verdict: String
    /// What explains it: `changed`, `up-to-date`, `may-run`, `never-ran`,
    /// `failed`, `unfinished`, `no-sources`, `forced`, `no-store`,
    /// `output-missing` or `unknown` (it runs, and no recorded parts say why).
    public var state: String
    public var headline: String
    /// Its last success (nil: none).
    public var since: Date?
    /// The parts that differ from its last success.
    public var changes: [WhyChange] = []
    /// Further reasons, as sentences (an output missing, parts not recorded…).
    public var notes: [String] = []
    /// Why its last success ran: what differed from the success before it.
    public var lastRun: LastRun?
    public var cache: Cache?

    public struct LastRun: Sendable {
        public var at: Date
        public var changes: [WhyChange]
        public var forced: Bool
        /// No earlier success is recorded: that was its first.
        public var first: Bool

        public init(at: Date, changes: [WhyChange], forced: Bool, first: Bool) {
            self.at = at
            self.changes = changes
            self.forced = forced
            self.first = first
        }
    }

    /// What the local output cache holds for the node when it would run.
    public struct Cache: Sendable {
        public var key: String
        /// An entry under the key it would run with: it is restored instead.
        public var hit: Bool
        /// Entries of the same node that carry their parts.
        public var entries: Int
        /// The entry of the same node with the fewest differing parts.
        public var nearest: (key: String, changes: [WhyChange])?

        public init(key: String, hit: Bool, entries: Int, nearest: (key: String, changes: [WhyChange])?) {
            self.key = key
            self.hit = hit
            self.entries = entries
            self.nearest = nearest
        }
    }

    /// A node's last attempt as the history has it.
    public struct Attempt: Sendable {
        public var run: Int64
        public var at: Date
        public var result: String

        public init(run: Int64, at: Date, result: String) {
            self.run = run
            self.at = at
            self.result = result
        }
    }

    /// The report of node `node` from `verdict` (the forecast's, nil for a
    /// node without sources), the reasons `check` gave, its last success
    /// (`stored`), the parts recorded at its last two successes, the parts
    /// taken now, and its last attempt in the history.
    public static func make(node: String, hasSources: Bool, verdict: RunForecast.Verdict?, staleness: [Staleness], stored: StoredNode?,
                            recorded: (last: FingerprintParts?, previous: FingerprintParts?)?, current: FingerprintParts?,
                            lastAttempt: Attempt?) -> WhyReport {
        let label = verdict?.label ?? "will run"
        var report = WhyReport(node: node, verdict: label, state: "unknown", headline: "")
        report.since = stored.map(\.updatedAt)
        // Recorded parts that belong to the store's record of its last success.
        let last = recorded?.last.flatMap { parts -> FingerprintParts? in
            guard let stored else { return nil }
            return stored.unfinished || parts.fingerprint == stored.fingerprint.combined.hex ? parts : nil
        }
        if let last {
            report.lastRun = LastRun(at: Date(timeIntervalSince1970: last.at), changes: recorded?.previous.map { last.changes(since: $0) } ?? [],
                                     forced: last.forced, first: recorded?.previous == nil)
        }
        guard hasSources else {
            report.state = "no-sources"
            report.headline = "'\(node)' runs every time: it declares no 'sources', so moon cannot tell it is up to date"
                + " (declare its inputs with 'sources:' to let moon skip it)"
            report.lastRun = nil
            return report
        }
        switch verdict {
        case .upToDate?:
            report.state = "up-to-date"
            report.headline = "'\(node)' is up to date" + (report.since.map { " since \(Self.time($0)) (its last success)" } ?? "")
            return report
        case .mayRun(let reason)?:
            report.state = "may-run"
            report.headline = "'\(node)' may run: \(reason)"
            return report
        default:
            break
        }
        report.headline = "'\(node)' will run"
        func changesSinceLast() {
            if let last, let current {
                report.changes = current.changes(since: last)
            }
        }
        for reason in staleness {
            switch reason {
            case .forced:
                report.state = "forced"
                report.headline += ": it is forced (--force or --force-only)"
            case .noStore:
                report.state = "no-store"
                report.headline += ": there is no state store (.moon/state.db) to compare with"
            case .neverRun:
                if let attempt = lastAttempt, attempt.result == "failed" || attempt.result == "canceled" {
                    report.state = "failed"
                    report.headline += ": it never succeeded; its last attempt \(attempt.result == "failed" ? "failed" : "was canceled")"
                        + " (run \(attempt.run), \(Self.time(attempt.at)))"
                } else {
                    report.state = "never-ran"
                    report.headline += ": it never ran here (no success of it is recorded)"
                }
            case .unfinished:
                let after = report.since.map { " after its last success (\(Self.time($0)))" } ?? ""
                if let attempt = lastAttempt, attempt.result == "failed" || attempt.result == "canceled" {
                    report.state = "failed"
                    report.headline += ": its last attempt \(attempt.result == "failed" ? "failed" : "was canceled") (run \(attempt.run),"
                        + " \(Self.time(attempt.at)))\(after)"
                } else {
                    report.state = "unfinished"
                    report.headline += ": it started\(after) but did not finish (moon was stopped or killed), so its outputs may be half-written"
                }
                changesSinceLast()
            case .commandChanged, .environmentChanged, .needsChanged, .sourcesChanged:
                if report.state == "unknown" { report.state = "changed" }
            case .outputMissing(let pattern):
                report.notes.append("its output is missing: '\(pattern)' (in 'generates') matches no file")
                if report.state == "unknown" { report.state = "output-missing" }
            case .depfileUnread, .unnamableSources:
                report.notes.append(reason.description)
            }
        }
        if report.state == "changed" {
            changesSinceLast()
            if report.changes.isEmpty {
                let what = staleness.filter { if case .outputMissing = $0 { return false } else { return true } }.map(\.description)
                report.notes.insert(what.joined(separator: "; ") + (last == nil
                    ? " (its last success recorded no parts to name what changed: a moon before `moon why` ran it; the next success records them)"
                    : ""), at: 0)
            }
            report.headline += ": " + (report.changes.count == 1 ? "1 part of its fingerprint differs" : "\(max(report.changes.count, 1)) parts of its fingerprint differ")
                + " from its last success" + (report.since.map { " (\(Self.time($0)))" } ?? "")
        }
        if report.state == "output-missing" { report.headline += ": its inputs are as at its last success, but an output is missing" }
        if report.state == "unknown" { report.headline += staleness.isEmpty ? "" : ": " + staleness.map(\.description).joined(separator: "; ") }
        return report
    }

    /// A time in the local zone, to the second.
    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: date)
    }

    /// The lines `moon why` prints (each change is one line; a command's
    /// diff follows its line, indented).
    public var lines: [String] {
        var out = [headline]
        out += Self.shown(changes)
        for note in notes { out.append("  " + note) }
        if let lastRun, state == "up-to-date" || state == "may-run" {
            if lastRun.first {
                out.append("It last ran at \(Self.time(lastRun.at)): its first success recorded here" + (lastRun.forced ? " (forced)" : ""))
            } else if lastRun.changes.isEmpty {
                out.append("It last ran at \(Self.time(lastRun.at))" + (lastRun.forced
                    ? ": it was forced (--force or --force-only)"
                    : " with the same inputs as the success before (that success no longer stood: a later attempt failed or was stopped, or an output was missing)"))
            } else {
                out.append("It last ran at \(Self.time(lastRun.at))" + (lastRun.forced ? ", forced (--force or --force-only); these parts had also changed" : " because these parts had changed")
                    + " since the success before:")
                out += Self.shown(lastRun.changes)
            }
        }
        if let cache {
            if cache.hit {
                out.append("The output cache has an entry for it (key \(cache.key.prefix(16))): it is restored instead of run")
            } else if let nearest = cache.nearest {
                out.append("The output cache has no entry for its key \(cache.key.prefix(16)); the nearest of its \(cache.entries)"
                    + " entr\(cache.entries == 1 ? "y" : "ies") (\(nearest.key.prefix(16))) differs in:")
                out += Self.shown(nearest.changes)
                if nearest.changes.isEmpty { out.append("  nothing moon records (the platform or the cache key's version)") }
            } else {
                out.append("The output cache has no entry for it (key \(cache.key.prefix(16))), nor any of this node that records its parts")
            }
        }
        return out
    }

    /// How many changed files the text names (`--json` names them all).
    static let filesShown = 20

    /// The lines of `changes`, indented; past `filesShown` files, a count of the others.
    static func shown(_ changes: [WhyChange]) -> [String] {
        var out: [String] = []
        var files = 0
        for change in changes {
            if case .file = change {
                files += 1
                if files > filesShown { continue }
            }
            out += change.text.map { "  " + $0 }
        }
        if files > filesShown { out.append("  and \(files - filesShown) more files (moon why --json lists them all)") }
        return out
    }

    /// One JSON object (its shape is in docs/incremental.md).
    public var json: JSONValue {
        func date(_ d: Date?) -> JSONValue { d.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null }
        var members: [(String, JSONValue)] = [
            ("node", .string(node)), ("verdict", .string(verdict)), ("state", .string(state)), ("summary", .string(headline)),
            ("since", date(since)), ("changes", .array(changes.map(\.json))), ("notes", .strings(notes)),
        ]
        members.append(("last_run", lastRun.map { run in
            .object([("at", date(run.at)), ("first", .bool(run.first)), ("forced", .bool(run.forced)), ("changes", .array(run.changes.map(\.json)))])
        } ?? .null))
        members.append(("cache", cache.map { cache in
            .object([("key", .string(cache.key)), ("hit", .bool(cache.hit)), ("entries", .int(cache.entries)),
                     ("nearest", cache.nearest.map { .object([("key", .string($0.key)), ("changes", .array($0.changes.map(\.json)))]) } ?? .null)])
        } ?? .null))
        return .object(members)
    }
}
