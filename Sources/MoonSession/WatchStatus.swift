import Foundation
import MoonCommand
import MoonGraph
import MoonReport
import MoonWatch

/// What watch mode says between runs. On a terminal, a header line kept up
/// to date ("watching 12 files · last run ok 3s ago") and erased when a
/// run starts; in plain output, one line after each run; with `--json`,
/// nothing on stdout (it carries only events). How moon watches, and a
/// fall back to polling, go to stderr: moon never stops watching silently.
package final class WatchStatus {
    private let sink: OutputSink
    private let scheduler: DateScheduler
    private let live: Bool
    private let quietStdout: Bool
    private var files = 0
    private var lastRun: (ok: Bool, at: Date)?
    private var shown = false
    private let ticker = SerialDisposable()

    package init(sink: OutputSink, scheduler: DateScheduler, live: Bool, quietStdout: Bool) {
        self.sink = sink
        self.scheduler = scheduler
        self.live = live
        self.quietStdout = quietStdout
    }

    /// How the watcher watches (called from its thread).
    package func announce(_ method: FileWatcher.Method, because error: WatchError?) {
        switch (method, error) {
        case (.polling(let interval, let files), let error?):
            Console.errorLine("moon: watch: \(error); polling \(files) files every \(DurationText.format(interval)) instead")
        case (.polling(let interval, let files), nil):
            Console.errorLine("moon: watch: polling \(files) files every \(DurationText.format(interval))")
        case (.inotify, _):
            break
        }
    }

    package func watching(files: Int) {
        self.files = files
        if shown { show() }
    }

    package func lastRun(ok: Bool) {
        lastRun = (ok, scheduler.now)
        if quietStdout { return }
        if live {
            show()
            tick()
        } else {
            sink.write("moon: \(text())\n")
        }
    }

    /// Shows the header again after lines printed between runs.
    package func redraw() {
        guard live, lastRun != nil else { return }
        show()
        tick()
    }

    package func brokenGraph() {
        Console.errorLine("moon: watch: the graph file has errors; moon runs again once it is fixed")
    }

    /// Erases the header before a run's output.
    package func clear() {
        ticker.inner = nil
        guard shown else { return }
        sink.write("\r\u{1B}[2K")
        shown = false
    }

    package func stop() {
        clear()
        ticker.dispose()
    }

    private func tick() {
        ticker.inner = scheduler.schedule(after: .seconds(1)) { [weak self] in
            guard let self, self.shown else { return }
            self.show()
            self.tick()
        }
    }

    private func show() {
        guard live else { return }
        sink.write("\r\u{1B}[2K" + text())
        shown = true
    }

    private func text() -> String {
        var text = "watching \(files) file\(files == 1 ? "" : "s")"
        if let lastRun {
            let ago = Int(scheduler.now.timeIntervalSince(lastRun.at))
            text += " · last run \(lastRun.ok ? "ok" : "failed")"
            if live { text += " \(ago)s ago" }
        }
        return text
    }
}
