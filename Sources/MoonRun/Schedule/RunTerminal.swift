import MoonCommand

/// What the runner asks of the person at moon's terminal (docs/terminal.md):
/// a `confirm:` question, and the terminal lent to an `interactive:` node.
/// `MoonSession.TerminalHandover` is the real one; without one the run has
/// no terminal, so a question it must ask fails its node.
///
/// Called on the runner's scheduler; one question or interactive node at a
/// time (the runner's `TerminalBook` queues the others).
public protocol RunTerminal: AnyObject {
    /// Whether a person can answer: moon's stdin is a terminal whose
    /// foreground is moon's. Asked only when a question is due.
    var canAsk: Bool { get }
    /// Asks `question` of node `node` (y/N) with the live view stepped
    /// aside, and calls `answer` on the runner's scheduler once, with true
    /// for yes. Disposing withdraws the question: `answer` is not called.
    func ask(_ question: String, node: String, answer: @escaping (Bool) -> Void) -> Disposable
    /// Interactive node `node` is about to start: the live view steps aside,
    /// and what other nodes print is held.
    func handOver(node: String)
    /// The interactive node ended: the live view draws again, the held lines first.
    func takeBack()
}

/// Who has the terminal in a run, and who waits for it.
struct TerminalBook {
    /// The node asking, or the interactive node running, if any.
    var holder: Int?
    /// Whether `holder` is an interactive node that was handed the terminal.
    var handedOver = false
    /// Nodes waiting for the terminal, first come first served.
    var waiting: [Int] = []
    /// The question on screen.
    var question: Disposable?
    /// Nodes whose question was answered no: the run fails.
    var declined = 0
}
