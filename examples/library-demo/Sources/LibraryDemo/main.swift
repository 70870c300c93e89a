// The seed's scenario, with MoonCommand: six commands, where 3 waits for
// 1 and 2, 0 waits for 3 and 4, and the output combines 0 and 5. Each
// command N sends N from its own background execute queue; every callback
// arrives on the caller's queue. Also: a manual cancel, a cancel on
// release, and the shared streams of a command gated by `enabledIf`.
import Dispatch
import Foundation
import MoonCommand

/// Which queue are we on? Every queue in this demo tags itself.
let queueKey = DispatchSpecificKey<String>()
func currentQueue() -> String { DispatchQueue.getSpecific(key: queueKey) ?? "unknown" }
func taggedQueue(_ label: String) -> DispatchQueue {
    let queue = DispatchQueue(label: label)
    queue.setSpecific(key: queueKey, value: label)
    return queue
}

/// The caller's queue: all callbacks arrive here.
let callbackQueue = taggedQueue("demo.callbacks")
let callbackScheduler = QueueScheduler(queue: callbackQueue)

/// Command N: sends N from its execute queue, then completes.
final class NumberCommand: Command<Void, Int, any Error> {
    let number: Int
    init(_ number: Int) {
        self.number = number
        super.init(name: "command\(number)", executeQueue: taggedQueue("demo.execute.\(number)"))
    }
    override func run(_ input: Void, result: CommandResult<Int>) -> Cancelable? {
        print("  \(name) runs on \(currentQueue())")
        result.next(number)
        result.complete()
        return nil
    }
}

/// A command that ticks until canceled.
final class TickingCommand: Command<Void, String, any Error> {
    override func run(_ input: Void, result: CommandResult<String>) -> Cancelable? {
        let timer = DispatchSource.makeTimerSource(queue: executeQueue)
        var ticks = 0
        timer.schedule(deadline: .now(), repeating: .milliseconds(20))
        timer.setEventHandler {
            ticks += 1
            result.next("tick \(ticks)")
        }
        timer.resume()
        let name = self.name
        return ActionDisposable {
            timer.cancel()
            print("  \(name): work canceled")
        }
    }
}

/// The delegate style: a callback object, held weakly by the command.
final class Printer: CommandCallback {
    typealias Output = String
    let firstValue = DispatchSemaphore(value: 0)
    func onNext(_ command: AnyCommand, value: String) {
        print("  \(command.name) next(\(value)) on \(currentQueue())")
        firstValue.signal()
    }
    func onComplete(_ command: AnyCommand) { print("  \(command.name) completed on \(currentQueue())") }
    func onError(_ command: AnyCommand, error: Error) { print("  \(command.name) error(\(error)) on \(currentQueue())") }
}

// 1. Manual cancel, closure callback.
print("manual cancel:")
do {
    let ticking = TickingCommand(name: "ticker", executeQueue: taggedQueue("demo.execute.ticker"))
    let firstTick = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)
    var seen = 0
    let cancelable = ticking.execute(callbackOn: callbackQueue) { command, value, error, isCompleted in
        if let value {
            seen += 1
            if seen == 1 { print("  \(command.name) next(\(value)) on \(currentQueue())"); firstTick.signal() }
        } else {
            print("  \(command.name) \(error.map { "error(\($0))" } ?? "completed") on \(currentQueue())")
            ended.signal()
        }
    }
    firstTick.wait()
    cancelable.cancel()
    ended.wait()
}

// 2. Cancel on release, callback object.
print("cancel on release:")
do {
    let printer = Printer()
    var ticking: TickingCommand? = TickingCommand(name: "released-ticker", executeQueue: taggedQueue("demo.execute.released"))
    ticking!.execute(callbackOn: callbackQueue, callback: printer)
    printer.firstValue.wait()
    ticking = nil // deinit cancels the work in flight; callbacks stop
    callbackQueue.sync {}
    print("  released-ticker released")
}

// 3. Shared streams, a typed failure and `enabledIf`.
print("shared streams:")
do {
    struct OddNumber: Error { let value: Int }
    let allowed = MutableProperty(false)
    let halves = Command<Int, Int, OddNumber>(
        name: "halves", executeQueue: taggedQueue("demo.execute.halves"),
        enabledIf: Property(allowed), allowsConcurrentExecution: true
    ) { input, result in
        if input % 2 == 0 { result.complete(with: input / 2) } else { result.error(OddNumber(value: input)) }
        return nil
    }
    let seen = DispatchSemaphore(value: 0)
    halves.values.start { event in
        guard let value = event.value else { return }
        print("  values: \(value)")
        seen.signal()
    }
    halves.errors.start { event in
        guard let error = event.value else { return }
        print("  errors: odd number \(error.value)")
        seen.signal()
    }
    halves.disabledErrors.start { event in
        if event.value != nil { print("  disabledErrors: refused while enabledIf is false") }
    }
    halves.signal(4).start { _ in }
    allowed.value = true
    for input in [4, 7] {
        halves.signal(input).start { _ in }
        seen.wait()
    }
}

// 4. The graph, composed from the commands' signals.
print("graph:")
let commands = (0..<6).map(NumberCommand.init)
func node(_ n: Int) -> Signal<Int> {
    // Each upstream runs once, however many dependents it has.
    commands[n].signal()
        .deliverOn(callbackScheduler)
        .on(next: { print("  command\(n) next(\($0)) on \(currentQueue())") },
            completed: { print("  command\(n) completed on \(currentQueue())") })
        .replay()
}
let three = Signal.combineLatest([node(1), node(2)]).then(node(3))
let zero = Signal.combineLatest([three, node(4)]).then(node(0))
let output = Signal.combineLatest([zero, node(5)], reduce: { $0.reduce(0, +) })

let done = DispatchSemaphore(value: 0)
var final: Int?
output.deliverOn(callbackScheduler).start { event in
    switch event {
    case let .next(value): final = value
    case let .error(error): print("  graph failed: \(error)")
    case .completed: break
    }
    if event.isTerminal { done.signal() }
}
done.wait()
callbackQueue.sync {
    print("final value is: \(final.map(String.init) ?? "none")")
}
