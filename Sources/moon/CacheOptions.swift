import ArgumentParser
import Foundation
import MoonCache
import MoonGraph

/// Where the output cache is, from the command line, the environment, the
/// graph file or the default, in that order.
struct CacheOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"),
            help: ArgumentHelp("The output cache directory (also MOON_CACHE_DIR; default $XDG_CACHE_HOME/moon or ~/.cache/moon).",
                               valueName: "dir"))
    var cacheDirectory: String?

    @Flag(name: .customLong("no-cache"), help: "Neither restore outputs from the cache nor store them.")
    var noCache = false

    /// The cache directory for `graph` (nil: `--no-cache`).
    func directory(for graph: Graph?) -> CacheDirectory? {
        guard !noCache else { return nil }
        return CacheDirectory(path: Self.resolve(option: cacheDirectory, graph: graph))
    }

    static func resolve(option: String?, graph: Graph?) -> String {
        if let option, !option.isEmpty { return expand(option, relativeTo: nil) }
        if let variable = Terminal.variable("MOON_CACHE_DIR"), !variable.isEmpty { return expand(variable, relativeTo: nil) }
        if let graph, let dir = graph.cache.dir { return expand(dir, relativeTo: graph.directory) }
        if let xdg = Terminal.variable("XDG_CACHE_HOME"), xdg.hasPrefix("/") { return xdg + "/moon" }
        return home() + "/.cache/moon"
    }

    /// `~/x` under the home directory; a relative path under `base` (the graph file's directory).
    private static func expand(_ path: String, relativeTo base: String?) -> String {
        if path == "~" { return home() }
        if path.hasPrefix("~/") { return home() + path.dropFirst(1) }
        if let base, !path.hasPrefix("/"), base != "." { return base + "/" + path }
        return path
    }

    private static func home() -> String {
        if let home = Terminal.variable("HOME"), !home.isEmpty { return home }
        return NSHomeDirectory()
    }
}

extension CacheOptions {
    /// The output cache of one run of `graph`, warnings on stderr.
    func outputCache(for graph: Graph) -> OutputCache? {
        directory(for: graph).map { OutputCache(directory: $0, root: graph.directory, onWarning: warn) }
    }
}
