import Dispatch
import Foundation
import MoonCommand
import MoonEvents

/// The live terminal view. Node output and finished nodes (`✓ build 1.2s`)
/// scroll above a status area at the bottom that shows `[done/total]`, the
/// elapsed time and each running node with its queue and elapsed time
/// (stalled ones marked). When the run ends the status area is erased and
/// the summary printed, leaving a clean screen.
///
/// Throttling: events only change the reporter's state and queue the lines
/// to print; a timer on the delivery scheduler (the same serial context that
/// calls `report`, so there is no shared state to lock) redraws at most every
/// `refreshInterval`, writing the erase, the queued lines and the new status
/// area in one `write`, so no line is ever torn or mixed with the status.
///
/// With colour off there are no escape sequences at all: the status area
/// becomes one line that is redrawn with a carriage return.
public final class TTYReporter: Reporter {
    public struct Options: Sendable {
        public var verbosity: Verbosity
        public var outputMode: NodeOutputMode
        /// Colours, and the cursor movement of the multi-line status area.
        public var color: Bool
        /// A running node with no output for this long is marked stalled (0: never).
        public var stallAfter: Duration
        /// The most often the status area is redrawn.
        public var refreshInterval: Duration
        /// The most running nodes listed (fewer on a short terminal).
        public var maxRunningLines: Int

        public init(verbosity: Verbosity = .normal, outputMode: NodeOutputMode = .prefixed, color: Bool = true,
                    stallAfter: Duration = .seconds(30), refreshInterval: Duration = .milliseconds(100),
                    maxRunningLines: Int = 10) {
            self.verbosity = verbosity
            self.outputMode = outputMode
            self.color = color
            self.stallAfter = stallAfter
            self.refreshInterval = refreshInterval
            self.maxRunningLines = maxRunningLines
        }
    }

    private let sink: OutputSink
    private let options: Options
    private let scheduler: DateScheduler?
    private let clock: () -> Date
    private let measure: () -> TerminalSize
    private var size: TerminalSize
    private var ledger = RunLedger()
    /// Wall-clock time the last event arrived: the view's "now" is the last
    /// event's own time plus what has passed since, so a replayed recording
    /// shows the elapsed times it had live.
    private var lastArrival: Date?
    /// Lines to print above the status area at the next redraw.
    private var pending = ""
    /// Grouped mode: each running node's output, printed when it ends.
    private var groups: [String: [String]] = [:]
    /// The status area on screen, to erase it.
    private var lastFrame = ""
    /// Cancels the pending redraw tick.
    private var timer: Disposable?
    private var resize: DispatchSourceSignal?
    private var ended = false
    private var prefixWidth = 0
    /// An interactive node or a question has the terminal: nothing is
    /// drawn, and lines wait in `pending` (`stepAside`).
    private var aside = false

    /// - Parameters:
    ///   - scheduler: the serial context that calls `report` (moon's event
    ///     loop, or a queue); the redraw timer runs on it. Without one
    ///     (tests), call `redraw()` by hand.
    ///   - clock: the wall clock (a test clock in tests).
    ///   - size: the terminal's size, asked at every redraw (default: the
    ///     sink's terminal, else `$COLUMNS`, else 80×24).
    public init(sink: OutputSink, options: Options = Options(), scheduler: DateScheduler? = nil,
                clock: @escaping () -> Date = Date.init, size: (() -> TerminalSize)? = nil) {
        self.sink = sink
        self.options = options
        self.scheduler = scheduler
        self.clock = clock
        let fd = sink.fd
        let environment = ProcessInfo.processInfo.environment
        self.measure = size ?? { TerminalSize.current(fd: fd, environment: environment) }
        self.size = self.measure()
    }

    deinit {
        timer?.dispose()
        resize?.cancel()
    }

    public func report(_ event: RunEvent) {
        guard !ended else { return }
        ledger.apply(event)
        lastArrival = clock()
        // A line still being written only shows in its node's status row (the ledger has it).
        if event.partial { return }
        let loud = options.verbosity != .quiet
        switch event.kind {
        case .graphStart(let graph, let nodes, _):
            prefixWidth = min(20, nodes.map { TextWidth.columns($0) }.max() ?? 0)
            if loud { print(EventText.header(graph: graph, nodes: nodes.count)) }
            startTimers()
        case .start(let node, _, let attempt, let command, _):
            if options.verbosity == .verbose { EventText.started(node: node, attempt: attempt, command: command).forEach { print($0) } }
        case .next(let node, let stream, let text, _):
            guard loud else { return }
            let line = EventText.output(node: node, stream: stream, text: text, width: prefixWidth, color: options.color)
                .rendered(color: options.color)
            if options.outputMode == .grouped {
                groups[node, default: []].append(line)
            } else {
                pending += line + "\n"
            }
        case .retry(let node, let attempt, let delay, let error):
            flushGroup(node)
            if loud { print(EventText.retry(node: node, attempt: attempt, delayMilliseconds: delay, error: error)) }
        case .complete(let node, _, _, _), .error(let node, _, _):
            flushGroup(node)
            for ended in EventText.ending(event, ledger: ledger, verbosity: options.verbosity) { print(ended) }
        case .skip:
            for ended in EventText.ending(event, ledger: ledger, verbosity: options.verbosity) { print(ended) }
        case .expand:
            break
        case .graphComplete:
            end()
        case .watch(let changed, let nodes):
            print(EventText.watch(changed: changed, nodes: nodes))
        }
    }

    /// Erases the status area and prints the summary (for a stream cut off
    /// before `graph-complete`, says so); stops the timers.
    public func finish() {
        if !ended && ledger.started != nil { end() }
        stopTimers()
    }

    /// Erases the status area, prints the queued lines and draws the status
    /// area again, in one write. The timer calls it; tests call it directly.
    func redraw() {
        guard !ended, !aside else { return }
        size = measure()
        let status = statusText()
        if pending.isEmpty && status == lastFrame { return }
        var frame = erase()
        frame += pending
        frame += status
        pending = ""
        lastFrame = status
        sink.write(frame)
    }

    /// Lends the terminal (docs/terminal.md): erases the status area, prints
    /// the lines queued so far, and draws nothing more until `comeBack`;
    /// what nodes print meanwhile is held.
    public func stepAside() {
        guard !ended, !aside else { return }
        let frame = erase() + pending
        pending = ""
        aside = true
        if !frame.isEmpty { sink.write(frame) }
    }

    /// The terminal is back: the held lines, then the status area.
    public func comeBack() {
        guard aside else { return }
        aside = false
        redraw()
    }

    /// The view's "now": the last event's time plus what has passed since.
    var now: Date {
        guard let last = ledger.lastEventTime, let arrival = lastArrival else { return clock() }
        return last.addingTimeInterval(max(0, clock().timeIntervalSince(arrival)))
    }

    private var area: StatusArea {
        StatusArea(width: size.columns, maxLines: max(2, min(options.maxRunningLines + 1, size.rows / 2)),
                   stallAfterMilliseconds: options.stallAfter.milliseconds)
    }

    /// The status area as text.
    private func statusText() -> String {
        guard ledger.started != nil else { return "" }
        if options.color {
            return area.lines(ledger, now: now).map { $0.rendered(color: true) }.joined(separator: "\n")
        }
        return area.compactLine(ledger, now: now).plain
    }

    /// What takes the cursor back to the start of the status area and clears it.
    private func erase() -> String {
        guard !lastFrame.isEmpty else { return "" }
        let previous = lastFrame
        lastFrame = ""
        if options.color {
            let columns = max(1, size.columns)
            let rows = drawnRows(previous, columns: columns)
            return "\r" + (rows > 1 ? "\u{1B}[\(rows - 1)A" : "") + "\u{1B}[J"
        }
        // No escape sequences: overwrite the one status line with blanks.
        let width = TextWidth.columns(previous)
        return "\r" + String(repeating: " ", count: width) + "\r"
    }

    /// Rows the frame takes at the current width: a line the terminal
    /// rewrapped after the window narrowed takes more than one (terminals
    /// such as tmux, VTE, iTerm2 and kitty reflow on resize).
    private func drawnRows(_ frame: String, columns: Int) -> Int {
        frame.split(separator: "\n", omittingEmptySubsequences: false).reduce(0) { total, line in
            let w = StyledLine.visibleColumns(String(line))
            return total + max(1, (w + columns - 1) / columns)
        }
    }

    private func end() {
        aside = false
        ended = true
        stopTimers()
        for node in groups.keys.sorted() { flushGroup(node) }
        var frame = erase()
        frame += pending
        pending = ""
        for line in RunSummary.lines(ledger, verbosity: options.verbosity, color: options.color) {
            frame += line.rendered(color: options.color) + "\n"
        }
        sink.write(frame)
    }

    private func print(_ line: StyledLine) {
        pending += line.rendered(color: options.color) + "\n"
    }

    private func flushGroup(_ node: String) {
        guard let lines = groups.removeValue(forKey: node), !lines.isEmpty else { return }
        pending += lines.map { $0 + "\n" }.joined()
    }

    private func startTimers() {
        guard let scheduler, timer == nil else { return }
        scheduleTick(on: scheduler)
        // A resize redraws at once (the timer would also notice it). The
        // signal arrives on a Dispatch queue and hops to the scheduler.
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: .global(qos: .userInitiated))
        resize.setEventHandler { [weak self] in
            scheduler.schedule { [weak self] in self?.redraw() }
        }
        resize.resume()
        self.resize = resize
    }

    /// The redraw timer: one tick every `refreshInterval`, each scheduling
    /// the next, until `stopTimers`.
    private func scheduleTick(on scheduler: DateScheduler) {
        let interval = Duration.milliseconds(max(10, options.refreshInterval.milliseconds))
        timer = scheduler.schedule(after: interval) { [weak self] in
            guard let self, self.timer != nil else { return }
            self.redraw()
            self.scheduleTick(on: scheduler)
        }
    }

    private func stopTimers() {
        timer?.dispose()
        timer = nil
        resize?.cancel()
        resize = nil
    }

}

extension StyledLine {
    /// Columns of rendered text, skipping the SGR sequences it may contain.
    static func visibleColumns(_ text: String) -> Int {
        TextWidth.columns(TextWidth.sanitize(text, keepColor: false))
    }
}
