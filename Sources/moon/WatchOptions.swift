import ArgumentParser
import MoonGraph
import MoonSession

/// `moon run --watch` and its options.
struct WatchOptions: ParsableArguments {
    @Flag(help: "After the run, watch the selected nodes' inputs (sources, depfile files, for-each globs, the graph file, dotenv files) and run again what a change touches, as a plain run would (up-to-date needs keep their outputs; the cache restores and stores), until Ctrl-C. A running node whose inputs change restarts; other running nodes and services carry on.")
    var watch = false

    @Option(name: .customLong("watch-debounce"),
            help: ArgumentHelp("With --watch, wait for this long without changes before a rerun.", valueName: "duration"))
    var debounce: String = WatchSettings().debounce

    @Option(name: .customLong("watch-poll"),
            help: ArgumentHelp("With --watch, look for changes every DURATION instead of using inotify (network file systems); without it, moon polls every 1s only where inotify is unavailable or its limit is reached, and says so.",
                               valueName: "duration"))
    var poll: String?

    func validate() throws {
        _ = try settings.values()
    }

    var settings: WatchSettings { WatchSettings(watch: watch, debounce: debounce, poll: poll) }
}

/// The values of `WatchOptions`, as a plain value (`moon run`'s fast path
/// fills it in without swift-argument-parser).
struct WatchSettings: Equatable {
    var watch = false
    var debounce = "100ms"
    var poll: String?

    /// The options, checked.
    func values() throws -> WatchTiming {
        if !watch && poll != nil { throw ValidationError("--watch-poll needs --watch") }
        let debounce = try Self.duration(self.debounce, option: "--watch-debounce")
        if debounce < .zero { throw ValidationError("--watch-debounce cannot be negative") }
        let poll = try self.poll.map { try Self.duration($0, option: "--watch-poll") }
        if let poll, poll <= .zero { throw ValidationError("--watch-poll must be longer than 0s") }
        return WatchTiming(debounce: debounce, poll: poll)
    }

    private static func duration(_ text: String, option: String) throws -> Duration {
        do {
            return try DurationParser.parse(text)
        } catch {
            throw ValidationError("\(option): '\(text)' is not a duration (use 100ms, 2s or a number of seconds)")
        }
    }
}
