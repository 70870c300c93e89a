import Foundation
import MoonCommand
import MoonEvents

/// A launcher that starts nothing: each node's attempt takes its recorded
/// duration on the simulation's virtual clock (`TestScheduler`) and
/// succeeds. A service runs until it is stopped. A need of a dynamic
/// fan-out sends the items the fan-out had in the recorded runs, so it
/// expands as it did.
public final class SimulatedLauncher: NodeLauncher {
    let scheduler: TestScheduler
    /// Seconds per node of the plan (by index).
    var durations: [TimeInterval]
    /// For nodes made during the run (instances of a dynamic fan-out), by name.
    let durationOf: (String) -> TimeInterval
    let isService: [Bool]
    /// Per node of the plan: the outputs it sends (a dynamic fan-out's items as a JSON list).
    let outputs: [[KeyValue]]
    /// When each node started and ended (virtual seconds since the start), by index.
    public private(set) var spans: [Int: (start: TimeInterval, end: TimeInterval)] = [:]
    private var names: [String]
    private let origin: Date

    init(scheduler: TestScheduler, names: [String], durations: [TimeInterval], isService: [Bool], outputs: [[KeyValue]],
         durationOf: @escaping (String) -> TimeInterval) {
        self.scheduler = scheduler
        self.names = names
        self.durations = durations
        self.isService = isService
        self.outputs = outputs
        self.durationOf = durationOf
        origin = scheduler.now
    }

    private var now: TimeInterval { scheduler.now.timeIntervalSince(origin) }

    public func attempt(node: Int, number: Int, inputs: NodeInputs) -> Signal<NodeOutput> {
        Signal { [self] observer, lifetime in
            let start = now
            spans[node] = (start, start)
            if node < isService.count, isService[node] {
                lifetime.add { [self] in spans[node] = (start, now) }
                return
            }
            let timer = scheduler.schedule(after: .seconds(durations[node])) { [self] in
                spans[node] = (start, now)
                observer.send(next: .exited(code: 0))
                if node < outputs.count, !outputs[node].isEmpty { observer.send(next: .outputs(outputs[node])) }
                observer.sendCompleted()
            }
            if let timer { lifetime.add(timer) }
        }
    }

    public func settled(node: Int) -> Signal<Never> {
        Signal { observer, _ in observer.sendCompleted() }
    }

    public func killNow() {}

    public func expand(template: Int, items: [String], first: Int) {
        for item in items {
            let name = names[template] + "[" + item + "]"
            names.append(name)
            durations.append(durationOf(name))
        }
    }
}
