import Glibc
import MoonSystem

/// Lists a directory tree with `readdir`, the one walk both watchers use:
/// inotify to place a watch on each directory, polling to stat each file.
/// Paths are carried as bytes: a name that is not UTF-8 has no String
/// (`FileName`), yet a change below it must still be seen; the watchers
/// report such a change as one they cannot name (`FileChanges.overflowed`).
enum DirectoryWalk {
    /// A path as the file system names it, and as a String when it is UTF-8.
    struct Path: Hashable {
        var bytes: [UInt8]
        /// nil when the path is not UTF-8.
        var text: String?

        init(_ text: String) {
            self.bytes = Array(text.utf8)
            self.text = text
        }

        init(bytes: [UInt8], text: String?) {
            self.bytes = bytes
            self.text = text
        }

        /// `name` (its bytes, and its String when it is UTF-8) inside this directory.
        func child(_ bytes: UnsafeBufferPointer<UInt8>, _ name: String?) -> Path {
            var joined = self.bytes
            if joined.last != UInt8(ascii: "/") { joined.append(UInt8(ascii: "/")) }
            joined.append(contentsOf: bytes)
            return Path(bytes: joined, text: text.flatMap { directory in name.map { join(directory, $0) } })
        }

        // Equal and hashed by the bytes: `text` follows from them.
        static func == (a: Path, b: Path) -> Bool { a.bytes == b.bytes }
        func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

        func withCString<R>(_ body: (UnsafePointer<CChar>) -> R) -> R {
            if let text { return text.withCString(body) }
            return (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
        }
    }

    /// The directories at and below `root` (just `root` unless
    /// `recursive`), skipping `WatchRoot.skippedNames` and symbolic links
    /// (a link to `..` would never end).
    static func directories(under root: Path, recursive: Bool) -> [Path] {
        var found: [Path] = []
        var stack = [root]
        while let directory = stack.popLast() {
            found.append(directory)
            guard recursive else { continue }
            entries(of: directory) { name, bytes, isDirectory in
                if isDirectory, !WatchRoot.skippedNames.contains(name ?? "") { stack.append(directory.child(bytes, name)) }
            }
        }
        return found
    }

    /// Calls `body` with each entry's name (nil when it is not UTF-8), its
    /// bytes and whether it is a directory (not following links); `.` and
    /// `..` left out.
    static func entries(of directory: Path,
                        _ body: (_ name: String?, _ bytes: UnsafeBufferPointer<UInt8>, _ isDirectory: Bool) -> Void) {
        guard let handle = directory.withCString({ opendir($0) }) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                isDirectory = withUnsafePointer(to: &entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 256) { fstatat(dirfd(handle), $0, &info, AT_SYMLINK_NOFOLLOW) }
                } == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            }
            FileName.withName(of: entry) { name, bytes in
                if name == "." || name == ".." { return }
                body(name, bytes, isDirectory)
            }
        }
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
