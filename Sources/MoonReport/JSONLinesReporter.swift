import Foundation
import MoonEvents

/// `--json`: one JSON object per line on stdout, written as it happens.
/// Field order is fixed (v, seq, ts, event, then the event's own fields), so
/// the stream is easy to diff and to read with `jq`. `EventEncoder` writes
/// each line; the schema is `schema/moon-events.schema.json`.
public final class JSONLinesReporter: Reporter {
    private let sink: OutputSink
    private var seq = 0

    public init(sink: OutputSink) {
        self.sink = sink
    }

    public func report(_ event: RunEvent) {
        // A line still being written comes whole later: the stream has lines only.
        if event.partial { return }
        seq += 1
        sink.write(EventEncoder.encode(event, seq: seq, ending: "}\n"))
    }
}
