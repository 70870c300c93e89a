import Foundation
import MoonCommand
import MoonGraph
import Synchronization

/// A `for-each: {glob}` as the loader expanded it: where, with which
/// pattern (its vars filled in) and excludes, and the files it matched.
/// Watch mode watches its directory and, when a file that matches is
/// created, deleted or renamed, globs again: other files mean other
/// instances, and the graph is planned again (`WatchSession`).
package struct FanOutGlob: Equatable, Sendable {
    /// As the loader gave it: the graph (or included) file's directory.
    package var directory: String
    package var pattern: String
    package var exclude: [String]
    package var files: [String]

    /// What `access` lists for it now.
    package func filesNow(_ access: GraphFileAccess) -> [String] {
        access.glob(directory, pattern, exclude).files
    }
}

/// Records the fan-out globs a load of a graph file makes, through the
/// file access the loader is given.
package final class FanOutGlobLog: @unchecked Sendable {
    private let lock = Mutex(())
    private var globs: [FanOutGlob] = []

    package var recorded: [FanOutGlob] { lock.withLock { _ in globs } }

    /// `access`, its globs recorded here.
    package func recording(_ access: GraphFileAccess) -> GraphFileAccess {
        GraphFileAccess(read: access.read, glob: { [self] directory, pattern, exclude in
            let matches = access.glob(directory, pattern, exclude)
            lock.withLock { _ in globs.append(FanOutGlob(directory: directory, pattern: pattern, exclude: exclude, files: matches.files)) }
            return matches
        })
    }
}
