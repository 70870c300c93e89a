import Foundation
import MoonCache
import MoonGraph
import MoonState

/// Which nodes a run would restore from the local output cache instead of
/// running, for `moon status` and `moon run -n`: a cached node that would
/// run (by `RunForecast`) whose key, taken with what its needs left in the
/// last run, has an entry the restore would accept (it writes only what the
/// node generates) whose depfile's files are unchanged. Reads the cache and
/// changes nothing; the remote cache is not asked.
package enum CacheForecast {
    package static func restorable(plan: Plan, state: IncrementalState, forecast: RunForecast, cache: CacheDirectory?) -> Set<Int> {
        guard let cache, !state.force else { return [] }
        var found = Set<Int>()
        // Each file hashed once: the entries of a C project's objects list the same headers.
        var hashes: [String: String?] = [:]
        func hash(_ path: String) -> String? {
            if let known = hashes[path] { return known }
            let hex = ContentHash.ofFile(state.fullPath(path))?.hex
            hashes[path] = hex
            return hex
        }
        for index in plan.selected {
            guard case .runs? = forecast.verdicts[index], !state.forced.contains(index), CacheChecker.isCached(state.graph.nodes[index]),
                  let fingerprint = state.cacheFingerprint(node: index),
                  let entry = cache.entry(CacheKey(fingerprint: fingerprint), notingUse: false),
                  CacheChecker.declaredOutputs(state, index).refusal(of: entry) == nil else { continue }
            let unchanged = entry.dependencies.allSatisfy { hash($0.path) == $0.hash }
            if unchanged { found.insert(index) }
        }
        return found
    }

    package static let label = "from cache"

    /// `moon status`'s line: why the node is not up to date, then that the
    /// cache restores it (a check-only node: that it passed before).
    package static func text(_ verdict: RunForecast.Verdict?, node: Node) -> String {
        (verdict.map { $0.text + "; " } ?? "") + (node.generates.isEmpty ? "passed before with these inputs, so skipped" : "restored from the cache instead")
    }
}
