import Foundation
import MoonCommand
import MoonProcess
import MoonReport
import MoonRun
import MoonSystem
import Synchronization

/// The person at moon's terminal, for the runner (`RunTerminal`;
/// docs/terminal.md): `confirm:` questions asked on it, and the terminal
/// lent to interactive nodes, with the live view stepping aside meanwhile.
///
/// The terminal is moon's stdin when it is a terminal whose foreground
/// group is moon's. An interactive node's process gets that stdin and, in
/// the live view, moon's stdout and stderr too; its group becomes the
/// terminal's foreground while it runs (so ^C reaches it, not moon), and
/// moon's again, with the terminal's modes restored, once it is reaped
/// (`TerminalUse`, `TerminalRestore`).
package final class TerminalHandover: RunTerminal {
    private let reporter: Reporter
    private let scheduler: DateScheduler
    private var live: TTYReporter? { reporter as? TTYReporter }

    package init(reporter: Reporter, scheduler: DateScheduler) {
        self.reporter = reporter
        self.scheduler = scheduler
    }

    /// A question needs a terminal to read the answer from and one to show
    /// it on: stderr, else stdout, but never a file or a pipe (where it
    /// would end up inside `--json`'s events or a log nobody watches).
    package var canAsk: Bool { TerminalUse.foregroundTerminal(0) != nil && Self.promptDescriptor != nil }

    /// Where the question is shown: the first of stderr and stdout that is a terminal.
    static var promptDescriptor: Int32? { isatty(2) == 1 ? 2 : isatty(1) == 1 ? 1 : nil }

    /// What an interactive node's process takes (asked at its spawn).
    package func processTerminal() -> TerminalUse {
        TerminalUse(output: live != nil, foreground: TerminalUse.foregroundTerminal(0))
    }

    package func handOver(node: String) {
        live?.stepAside()
    }

    package func takeBack() {
        live?.comeBack()
    }

    package func ask(_ question: String, node: String, answer: @escaping (Bool) -> Void) -> Disposable {
        live?.stepAside()
        let prompt = Self.prompt(question, node: node)
        let out: Int32 = Self.promptDescriptor ?? 2
        LinuxCalls.writeAll(prompt, to: out)
        let withdrawn = Flag()
        let scheduler = self.scheduler
        // Read off the loop: the other nodes run on while the person thinks.
        let reading: () -> Void = { [self] in
            let yes = Self.readAnswer(withdrawn: withdrawn)
            scheduler.schedule {
                guard let yes, withdrawn.raise() else { return }
                self.live?.comeBack()
                answer(yes)
            }
        }
        if !BackgroundThread.start(name: "moon.confirm", reading) {
            scheduler.schedule { answer(false) }
        }
        return ActionDisposable { [weak self] in
            guard withdrawn.raise() else { return }
            // The prompt's line ends; the question is no longer asked, and
            // what was typed for it does not reach the shell after moon.
            LinuxCalls.writeAll(" (withdrawn)\n", to: out)
            tcflush(0, TCIFLUSH)
            self?.live?.comeBack()
        }
    }

    /// `moon: deploy: Deploy to production? [y/N] `, without a control
    /// character or escape sequence of the graph file's (a hostile repo
    /// could otherwise move the cursor, retitle the window, or fake the question).
    static func prompt(_ question: String, node: String) -> String {
        let oneLine = question.map { $0.isNewline ? " " : $0 }
        let text = TextWidth.sanitize(String(oneLine), keepColor: false)
        return "moon: \(TextWidth.sanitize(node, keepColor: false)): \(text) [y/N] "
    }

    /// The answer typed, a line: yes for y or yes (any case), no for
    /// anything else, an empty line and end of input (^D) included; nil
    /// once withdrawn.
    static func readAnswer(withdrawn: Flag) -> Bool? {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while !withdrawn.isRaised {
            var poller = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { if ready < 0 { return false } else { continue } }
            let count = read(0, &byte, 1)
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if count <= 0 {
                // ^D: the prompt's line still needs its end.
                LinuxCalls.writeAll("\n", to: promptDescriptor ?? 2)
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            if line.count < 64 { line.append(byte) }
        }
        if withdrawn.isRaised { return nil }
        let word = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
        return word == "y" || word == "yes"
    }

    /// Raised once, by the answer or by the withdrawal, whichever comes first.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isRaised: Bool { value.load(ordering: .acquiring) }
        /// Raises it; false when it was raised already.
        func raise() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
    }

}
