/// A directory to watch: its own entries, and with `recursive` every
/// directory below it, including ones created later.
public struct WatchRoot: Sendable, Hashable {
    /// An absolute path.
    public var path: String
    public var recursive: Bool

    public init(path: String, recursive: Bool) {
        self.path = path
        self.recursive = recursive
    }

    /// Directories a recursive walk never enters: version control and
    /// moon's own state change with every run and are nobody's source.
    public static let skippedNames: Set<String> = [".git", ".moon", ".hg", ".svn"]
}

/// What changed: absolute paths (files, or directories created, removed or
/// moved), or, after the kernel dropped events, everything.
public struct FileChanges: Sendable, Equatable {
    public var paths: Set<String>
    /// The kernel's queue overflowed (or a rescan found changes it could
    /// not name): any watched file may have changed.
    public var overflowed: Bool

    public init(paths: Set<String> = [], overflowed: Bool = false) {
        self.paths = paths
        self.overflowed = overflowed
    }

    public var isEmpty: Bool { paths.isEmpty && !overflowed }

    /// Both sets of changes, for a debounce that folds a burst into one.
    public func union(_ other: FileChanges) -> FileChanges {
        FileChanges(paths: paths.union(other.paths), overflowed: overflowed || other.overflowed)
    }
}
