import MoonDocument

/// The graph file's `cache:` mapping: where the output cache lives, the
/// remote cache to share it through, and what else makes a node's outputs
/// machine-specific (`key:`, e.g. a compiler version). The command line and
/// the environment (`--cache-dir`, `MOON_CACHE_DIR`, `--remote-cache`,
/// `MOON_REMOTE_CACHE`) override `dir` and `remote`.
public struct CacheSettings: Sendable, Equatable, Codable {
    /// `dir:` as written (relative to the graph file's directory, `~/` allowed).
    public var dir: String?
    /// `remote:` as written: the base URL of a Bazel HTTP remote cache.
    public var remote: String?
    /// `key:` strings, each part of every cached node's cache key.
    public var key: [String] = []

    public init(dir: String? = nil, remote: String? = nil, key: [String] = []) {
        self.dir = dir
        self.remote = remote
        self.key = key
    }
}

extension ValueDecoding {
    /// `cache: { dir, remote, key }` at the top of the file.
    mutating func cacheSettings(_ node: YAMLNode) -> CacheSettings {
        var settings = CacheSettings()
        guard !node.isNull, let pairs = mapping(node, expecting: "a mapping with dir, remote or key") else { return settings }
        let keys = checkKeys(pairs, allowed: GraphKeys.cache, context: "in 'cache'")
        if let d = keys["dir"], let dir = string(d.value, expecting: "a directory", allowNull: false) {
            if dir.isEmpty || dir.contains("${{") {
                error("'cache: dir' must be a directory written as it is, such as ~/.cache/moon or .cache", at: d.value.span)
            } else {
                settings.dir = dir
            }
        }
        if let r = keys["remote"], let url = string(r.value, expecting: "an http:// or https:// URL", allowNull: false) {
            if url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://") {
                settings.remote = url
            } else {
                error("'cache: remote' must be an http:// or https:// URL, such as http://cache.local:8080/moon", at: r.value.span)
            }
        }
        if let k = keys["key"], let list = strings(k.value, expecting: "a string or a list of strings", item: "a string") {
            settings.key = list
        }
        return settings
    }
}
