import MoonCommand
import MoonEvents

/// The terminal between nodes (docs/terminal.md): a node with `confirm:`
/// asks its question once its needs succeeded and it is found to run (not
/// up to date, not restored), and an `interactive:` node holds the terminal
/// while it runs. One at a time, in the order they became due; other nodes
/// keep running meanwhile.
extension Runner {
    /// The node is to run: at once, or first through the terminal.
    func toRun(_ node: Int) {
        let spec = plan.nodes[node]
        guard spec.isInteractive || (spec.confirm != nil && !options.assumeYes) else { return makeReady(node) }
        state[node] = .asking
        terminalBook.waiting.append(node)
        grantTerminal()
    }

    /// Ready to start on its queue; a group succeeds at once.
    private func makeReady(_ node: Int) {
        let spec = plan.nodes[node]
        if spec.isGroup { return succeedAtOnce(node) }
        state[node] = .ready
        ready[spec.queue].push(node, priority: spec.priority)
    }

    /// Gives the free terminal to the first node waiting for it.
    func grantTerminal() {
        guard terminalBook.holder == nil, !terminalBook.waiting.isEmpty else { return }
        let node = terminalBook.waiting.removeFirst()
        terminalBook.holder = node
        let spec = plan.nodes[node]
        guard let question = spec.confirm, !options.assumeYes else { return granted(node) }
        guard let terminal, terminal.canAsk else {
            // Never waits for an answer no one can give (CI, a pipe).
            terminalBook.holder = nil
            // The question as text: its control characters (a hostile file's
            // escapes, a carriage return) would reach every sink of the error.
            let shown = String(String.UnicodeScalarView(question.unicodeScalars.map {
                $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? " " : $0
            }))
            let error = NodeError(.spawn, "node '\(spec.name)' asks \"\(shown)\" before it runs, and moon has no terminal to ask on; "
                + "pass --yes (-y) to answer yes, or run it at a terminal")
            fail(node, error, durationMilliseconds: 0)
            return grantTerminal()
        }
        terminalBook.question = terminal.ask(question, node: spec.name) { [weak self] yes in
            self?.answered(node, yes: yes)
        }
    }

    private func answered(_ node: Int, yes: Bool) {
        guard terminalBook.holder == node, case .asking = state[node] else { return }
        terminalBook.question = nil
        guard yes else {
            terminalBook.holder = nil
            terminalBook.declined += 1
            skip(node, .declined)
            return grantTerminal()
        }
        granted(node)
        pump()
        finishIfDone()
    }

    /// Confirmed (or nothing to ask): an interactive node keeps the
    /// terminal until it ends; any other gives it to the next at once.
    private func granted(_ node: Int) {
        if !plan.nodes[node].isInteractive {
            terminalBook.holder = nil
            makeReady(node)
            grantTerminal()
            return
        }
        makeReady(node)
    }

    /// Interactive `node` starts now: the live view steps aside.
    func handOverTerminal(_ node: Int) {
        guard terminalBook.holder == node, !terminalBook.handedOver else { return }
        terminalBook.handedOver = true
        terminal?.handOver(node: plan.nodes[node].name)
    }

    /// `node` ended: if it held the terminal, the next one waiting gets it.
    func releaseTerminal(_ node: Int) {
        guard terminalBook.holder == node else { return }
        terminalBook.holder = nil
        if terminalBook.handedOver {
            terminalBook.handedOver = false
            terminal?.takeBack()
        }
        grantTerminal()
    }

    /// The run stops: questions are withdrawn and nodes waiting for the
    /// terminal are skipped (all, or all but clean-up nodes after a failure).
    func withdrawTerminalWaits(includingCleanup: Bool) {
        var asking = terminalBook.waiting
        if let holder = terminalBook.holder, case .asking = state[holder] {
            terminalBook.question?.dispose()
            terminalBook.question = nil
            terminalBook.holder = nil
            asking.insert(holder, at: 0)
        }
        terminalBook.waiting = []
        for node in asking {
            if plan.nodes[node].condition != .success && !includingCleanup {
                terminalBook.waiting.append(node)
            } else {
                skip(node, .canceled)
            }
        }
        grantTerminal()
    }
}
