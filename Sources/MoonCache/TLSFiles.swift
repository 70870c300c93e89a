/// Where an `https://` remote cache's trust and identity come from, as
/// paths the user gave: nothing is read until the first https connection
/// (`TLSContext`), so a run without one costs nothing.
public struct TLSFiles: Sendable, Equatable {
    /// PEM certificates to trust instead of the system's store (a private CA).
    public var authority: String?
    /// A PEM client certificate (and its chain), for a server that asks for one.
    public var certificate: String?
    /// The client certificate's PEM private key (unencrypted); nil: it is in `certificate`'s file.
    public var key: String?

    public static let authorityVariable = "MOON_REMOTE_CACHE_CA"
    public static let certificateVariable = "MOON_REMOTE_CACHE_CERT"
    public static let keyVariable = "MOON_REMOTE_CACHE_KEY"

    /// Empty paths count as unset.
    public init(authority: String? = nil, certificate: String? = nil, key: String? = nil) {
        self.authority = authority?.isEmpty == false ? authority : nil
        self.certificate = certificate?.isEmpty == false ? certificate : nil
        self.key = key?.isEmpty == false ? key : nil
    }
}
