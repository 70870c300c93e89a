/// What a node restored from the output cache instead of running (on its
/// `skip` event, reason `cache-hit`): its output files and their bytes.
public struct CacheRestore: Sendable, Equatable {
    public var files: Int
    public var bytes: Int64

    public init(files: Int, bytes: Int64) {
        self.files = files
        self.bytes = bytes
    }
}
