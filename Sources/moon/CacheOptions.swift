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

    @Option(name: .customLong("remote-cache"),
            help: ArgumentHelp("A Bazel HTTP remote cache (http://HOST:PORT/PATH; also MOON_REMOTE_CACHE), read after the local cache and written after it; a bearer token comes from MOON_REMOTE_CACHE_TOKEN. A server that stalls (nothing moves for MOON_REMOTE_CACHE_TIMEOUT, default 5s) or fails costs one warning, and moon runs the nodes itself. For https, put a TLS-terminating proxy in front and give its http:// URL.",
                               valueName: "url"))
    var remoteCache: String?

    @Flag(name: .customLong("remote-cache-read-only"), help: "Read the remote cache, never upload to it.")
    var remoteReadOnly = false

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
        directory(for: graph).map { OutputCache(directory: $0, root: graph.directory, remote: remote(for: graph), onWarning: warn) }
    }

    /// The remote cache: `--remote-cache`, else `MOON_REMOTE_CACHE`, else the file's `cache: remote:`.
    private func remote(for graph: Graph) -> RemoteCache? {
        let variable = Terminal.variable("MOON_REMOTE_CACHE")
        guard let url = [remoteCache, variable, graph.cache.remote].compactMap({ $0 }).first(where: { !$0.isEmpty }) else { return nil }
        let timeout = Terminal.variable("MOON_REMOTE_CACHE_TIMEOUT").flatMap { try? DurationParser.parse($0) }
        let seconds = timeout.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } ?? 5
        let readOnly = remoteReadOnly || Terminal.variable("MOON_REMOTE_CACHE_READ_ONLY") == "1"
        guard let remote = RemoteCache(url: url, token: Terminal.variable("MOON_REMOTE_CACHE_TOKEN"), timeoutSeconds: seconds,
                                       readOnly: readOnly, onWarning: warn) else {
            warn("remote cache \(url): moon speaks plain http://HOST[:PORT]/PATH (put a TLS proxy in front of an https:// server); not using it")
            return nil
        }
        return remote
    }
}
