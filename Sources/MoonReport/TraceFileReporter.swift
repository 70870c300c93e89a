import Foundation
import MoonEvents

/// `moon run --trace PATH`: the run's Chrome trace, written as it goes (a
/// CI artifact). Each attempt's span is written, in one `write(2)`, when it
/// ends; needs' arrows when their node starts; the critical path and `]` at
/// the end. Every event starts with its separator, so a file cut off by a
/// kill is a JSON array missing only its `]`, which the trace-event format
/// allows (Perfetto and `chrome://tracing` load it as it is).
public final class TraceFileReporter: Reporter {
    private let sink: OutputSink
    private var builder: TraceBuilder
    private var flows = TraceFlows()
    private var flowID = 0
    /// Per queue, how many lanes are named.
    private var namedLanes: [Int] = []
    private var first = true
    private var closed = false

    /// `needs`: each node's needs by name, for the arrows.
    public init(sink: OutputSink, needs: [String: [String]]) {
        self.sink = sink
        builder = TraceBuilder(needs: needs)
    }

    /// Whether every write reached the file.
    public var failure: Int32 { sink.failure }

    public func report(_ event: RunEvent) {
        guard !closed, let change = builder.add(event), let model = builder.model else { return }
        switch change {
        case .began:
            sink.write("[")
            write(TraceChrome.header(model))
        case .started(let index):
            let attempt = model.attempts[index]
            while namedLanes.count <= attempt.queue { namedLanes.append(0) }
            var events: [String] = []
            while namedLanes[attempt.queue] <= attempt.slot {
                events.append(TraceChrome.laneName(queue: attempt.queue, lane: namedLanes[attempt.queue]))
                namedLanes[attempt.queue] += 1
            }
            for from in flows.started(index, in: model) {
                flowID += 1
                events += TraceChrome.arrow(id: flowID, from: model.attempts[from], to: attempt)
            }
            if !events.isEmpty { write(events) }
        case .ended(let index):
            write([TraceChrome.span(model.attempts[index], model: model)])
        case .restored(let index):
            write([TraceChrome.restored(model.restored[index])])
        case .finished(let cut):
            write(cut.map { TraceChrome.span(model.attempts[$0], model: model) } + TraceChrome.footer(model))
            sink.write("\n]\n")
            closed = true
        }
    }

    private func write(_ events: [String]) {
        var text = ""
        for event in events {
            text += first ? "\n" : ",\n"
            first = false
            text += event
        }
        sink.write(text)
    }
}
