import ArgumentParser
import Foundation
import MoonCommand
import MoonCache
import MoonGraph
import MoonSession

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
            help: ArgumentHelp("A Bazel HTTP remote cache (http[s]://[USER:PASSWORD@]HOST[:PORT]/PATH, HOST a name, address or [IPv6]; also MOON_REMOTE_CACHE), read after the local cache and written after it. A bearer token comes from MOON_REMOTE_CACHE_TOKEN, which no node sees (moon wipes it, and a password in MOON_REMOTE_CACHE, from its own environment at start); it goes to this URL or MOON_REMOTE_CACHE's, and to a graph file's 'cache: remote:' only when its host is in MOON_REMOTE_CACHE_TOKEN_HOST (HOST or HOST:PORT, comma-separated; otherwise a warning and no token). A user and password in the URL are sent as Basic auth instead (never both) and printed as ***. A URL moon cannot use is one warning, and moon runs without it. Each request is bounded by MOON_REMOTE_CACHE_TIMEOUT (above 0, at most 1h, default 5s): connecting and the answer's status and headers each within it, sending or receiving a body within it plus 1s per 32 KiB, never that long without a byte, and the whole request within four times it plus 1s per 32 KiB it should move (256 KiB when unknown); an answer's body moon does not keep (an error page, a PUT's answer) is read up to 64 KiB, then the connection is closed. A server that is unreachable, stalls, trickles or fails costs one warning, and moon runs the nodes itself. An https:// URL is verified against the system's trusted certificates, or only those in the PEM file MOON_REMOTE_CACHE_CA (a private CA); TLS 1.2 or later; a client certificate comes from MOON_REMOTE_CACHE_CERT and its unencrypted key from MOON_REMOTE_CACHE_KEY (PEM; the key may be in the certificate's file). A certificate that does not verify is one warning, and moon runs the nodes itself.",
                               valueName: "url"))
    var remoteCache: String?

    @Flag(name: .customLong("remote-cache-read-only"),
          help: "Read the remote cache, never upload to it (also MOON_REMOTE_CACHE_READ_ONLY: 1, true, yes or on, any case; 0, false, no or off upload; another value warns and reads only).")
    var remoteReadOnly = false

    var settings: CacheSettings {
        CacheSettings(cacheDirectory: cacheDirectory, noCache: noCache, remoteCache: remoteCache, remoteReadOnly: remoteReadOnly)
    }
}

/// The values of `CacheOptions`, as a plain value (`moon run`'s fast path
/// fills it in without swift-argument-parser), and what they select.
struct CacheSettings: Equatable {
    var cacheDirectory: String?
    var noCache = false
    var remoteCache: String?
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

extension CacheSettings {
    /// The output cache of one run of `graph`, warnings on stderr.
    /// A cache directory moon must not use (one of its directories a link
    /// or another user's) is one warning when a node first needs it, and the
    /// run goes on without it (`OutputCache`).
    func outputCache(for graph: Graph) -> OutputCache? {
        guard let directory = directory(for: graph) else { return nil }
        return OutputCache(directory: directory, root: graph.directory, remote: remote(for: graph), onWarning: warn)
    }

    /// The remote cache: `--remote-cache`, else `MOON_REMOTE_CACHE`, else the
    /// file's `cache: remote:`. A URL or token moon cannot use is one warning
    /// and no remote; a variable it cannot read is one warning and its default.
    /// The token goes only to a URL the user gave (the option or the
    /// variable), or to a graph file's URL whose host the user approved in
    /// `MOON_REMOTE_CACHE_TOKEN_HOST`: a cloned repository's `cache: remote:`
    /// must not collect the token meant for the user's own server.
    private func remote(for graph: Graph) -> RemoteCache? {
        let variable = RemoteCredentials.value(RemoteCredentials.urlVariable)
        let given = [remoteCache, variable].compactMap({ $0 }).first(where: { !$0.isEmpty })
        guard let url = given ?? graph.cache.remote.flatMap({ $0.isEmpty ? nil : $0 }) else { return nil }
        var token = RemoteCredentials.value(Self.tokenVariable)
        if given == nil, token?.isEmpty == false, !RemoteCache.isApproved(url, hosts: Terminal.variable(Self.tokenHostVariable) ?? "") {
            warn("remote cache \(RemoteCache.redacted(url)) comes from the graph file, so moon sends it no \(Self.tokenVariable) "
                + "(give the URL with --remote-cache or MOON_REMOTE_CACHE, or approve its host in \(Self.tokenHostVariable))")
            token = nil
        }
        do {
            return try RemoteCache(url: url, token: token, tokenName: Self.tokenVariable,
                                   timeoutSeconds: Self.remoteTimeout(), readOnly: remoteReadOnly || Self.readOnlyVariable(),
                                   tls: TLSFiles(authority: Terminal.variable(TLSFiles.authorityVariable),
                                                 certificate: Terminal.variable(TLSFiles.certificateVariable),
                                                 key: Terminal.variable(TLSFiles.keyVariable)),
                                   onWarning: warn)
        } catch {
            warn("remote cache \(RemoteCache.redacted(url)): \(error.description); not using it")
            return nil
        }
    }

    /// Where the remote cache's bearer token comes from. moon keeps it from
    /// the nodes' environment (`NodeEnvironment`).
    static let tokenVariable = RemoteCredentials.tokenVariable

    /// The hosts (`host` or `host:port`, comma-separated) a graph file's
    /// remote cache URL may name and still be sent the token.
    static let tokenHostVariable = "MOON_REMOTE_CACHE_TOKEN_HOST"

    static let defaultRemoteTimeout = 5.0

    /// `MOON_REMOTE_CACHE_TIMEOUT` in seconds: a duration above 0 and at most
    /// an hour (a request stays bounded, and 0 could reach no server).
    private static func remoteTimeout() -> Double {
        guard let text = Terminal.variable("MOON_REMOTE_CACHE_TIMEOUT"), !text.isEmpty else { return defaultRemoteTimeout }
        if let duration = try? DurationParser.parse(text) {
            let seconds = duration.timeInterval
            if seconds > 0 && seconds <= RemoteCache.maxTimeoutSeconds { return seconds }
        }
        warn("MOON_REMOTE_CACHE_TIMEOUT=\(text) is not a duration above 0 and at most 1h (such as 500ms, 5s, 2m); using 5s")
        return defaultRemoteTimeout
    }

    /// `MOON_REMOTE_CACHE_READ_ONLY`: 1/true/yes/on or 0/false/no/off in any
    /// case; anything else is a warning and reads only, the side that can
    /// do no harm to a shared cache.
    private static func readOnlyVariable() -> Bool {
        guard let text = Terminal.variable("MOON_REMOTE_CACHE_READ_ONLY"), !text.isEmpty else { return false }
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default:
            warn("MOON_REMOTE_CACHE_READ_ONLY=\(text) is neither 1/true/yes/on nor 0/false/no/off; reading the remote cache only")
            return true
        }
    }
}
