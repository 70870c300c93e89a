/// The files a graph file refers to while it is loaded: `includes:` and
/// `for-each: {glob}`. Injected, so that the loader itself does no I/O and
/// tests give it a fake.
public struct GraphFileAccess: Sendable {
    /// Why an included file could not be read (moon's wording, with the path).
    public struct ReadFailure: Error, Sendable {
        public var message: String
        public init(_ message: String) { self.message = message }
    }

    /// The bytes of the file at `path` (as the including file writes it, joined to its directory).
    public var read: @Sendable (_ path: String) -> Result<[UInt8], ReadFailure>
    /// The files under `directory` that match `pattern` and none of
    /// `exclude`, relative to `directory`, sorted.
    public var glob: @Sendable (_ directory: String, _ pattern: String, _ exclude: [String]) -> GlobMatches

    /// What a glob matched: the files, and those whose names are not UTF-8
    /// (shown escaped, `src/caf\xE9.txt`), which no instance can be named after.
    public struct GlobMatches: Sendable, Equatable {
        public var files: [String]
        public var unnamable: [String]
        /// The directories listed, when a later listing finds the same
        /// files as long as none of them changed (nil: only a new listing can tell).
        public var directories: [String]?
        public init(files: [String], unnamable: [String] = [], directories: [String]? = nil) {
            self.files = files
            self.unnamable = unnamable
            self.directories = directories
        }
    }

    public init(read: @escaping @Sendable (String) -> Result<[UInt8], ReadFailure>,
                glob: @escaping @Sendable (String, String, [String]) -> GlobMatches) {
        self.read = read
        self.glob = glob
    }

    /// No files at all: an include or a glob is an error that says so.
    public static let none = GraphFileAccess(read: { .failure(ReadFailure("cannot read \($0): this loader reads no files")) },
                                            glob: { _, _, _ in GlobMatches(files: []) })
}
