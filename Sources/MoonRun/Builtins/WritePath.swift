import Foundation

/// Where `write-file` may write (README, "Built-in commands"): a relative path stays
/// inside the graph's directory (`..` may not leave it); an absolute path is
/// allowed as written in the graph file, but a path made from `${{ … }}`
/// values, absolute or not, must lead inside the graph's directory. A value
/// from a need or `--set` cannot then point a write at `/etc` or `../..`.
struct WritePath {
    struct Refusal: Error {
        var message: String
    }

    /// The absolute path to write.
    var path: String
    /// The graph's directory when the path must stay inside it: checked
    /// again once the path's directories exist, through symbolic links.
    var confinedTo: String?

    static func resolve(_ written: String, in directory: String, fromValues: Bool) -> Result<WritePath, Refusal> {
        guard !written.isEmpty else { return .failure(Refusal(message: "write-file's path is empty; give the name of the file to write")) }
        let absolute = written.hasPrefix("/")
        let joined = absolute ? written : directory + "/" + written
        let normalized = normalize(joined)
        let trailingSlash = written.hasSuffix("/") ? "/" : ""
        guard !absolute || fromValues else { return .success(WritePath(path: normalized + trailingSlash, confinedTo: nil)) }
        let root = normalize(directory)
        guard isInside(normalized, root) else {
            let how = absolute ? "an absolute path made from a value" : "its '..' leads"
            return .failure(Refusal(message: "cannot write \(written): \(how) outside the graph's directory (\(root)); a path from ${{ … }} and every relative path must stay inside it, and only an absolute path written in the graph file may leave it"))
        }
        return .success(WritePath(path: normalized + trailingSlash, confinedTo: root))
    }

    /// `/a/./b/../c` -> `/a/c`, without touching the file system.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    static func isInside(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || path.hasPrefix(root + "/")
    }

    /// After the directories were made: the file's real directory (symbolic
    /// links resolved) must still be inside the real graph directory.
    func leavesDirectory() -> Refusal? {
        guard let root = confinedTo else { return nil }
        let parent = (path as NSString).deletingLastPathComponent
        guard let realParent = Self.realPath(parent), let realRoot = Self.realPath(root) else { return nil }
        guard !Self.isInside(realParent, realRoot) else { return nil }
        return Refusal(message: "cannot write \(path): a symbolic link on its way leads outside the graph's directory (to \(realParent))")
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// "a FIFO", "a character device"…: what is at `path` when it is
    /// neither a regular file, a symbolic link, a directory nor nothing.
    static func specialFile(at path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return nil
        }
    }
}
