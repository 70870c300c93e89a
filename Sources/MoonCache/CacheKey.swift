import Foundation
import Glibc
import MoonState

/// The key of a node's cache entry: its cache fingerprint (command,
/// environment with `cache: key:`, needs' results, sources) and the
/// platform, whose outputs differ (an x86_64 object is no arm64 one).
public struct CacheKey: Sendable, Hashable {
    /// 64 hex digits: the entry's name locally and `ac/<hex>` remotely.
    public let hex: String

    public init(fingerprint: ContentHash, platform: String = CacheKey.platform) {
        var digest = DigestBuilder("moon-cache-key-1")
        digest.add(fingerprint)
        digest.add(platform)
        hex = digest.finish().hex
    }

    public init?(hex: String) {
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) else { return nil }
        self.hex = hex
    }

    /// `linux-x86_64`: the kernel's name and the machine.
    public static let platform: String = {
        var names = utsname()
        guard uname(&names) == 0 else { return "unknown" }
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return text(names.sysname).lowercased() + "-" + text(names.machine)
    }()
}
