import Glibc

/// Lists a directory tree with `readdir`, the one walk both watchers use:
/// inotify to place a watch on each directory, polling to stat each file.
enum DirectoryWalk {
    /// The directories at and below `root` (just `root` unless
    /// `recursive`), skipping `WatchRoot.skippedNames` and symbolic links
    /// (a link to `..` would never end).
    static func directories(under root: String, recursive: Bool) -> [String] {
        var found: [String] = []
        var stack = [root]
        while let directory = stack.popLast() {
            found.append(directory)
            guard recursive else { continue }
            entries(of: directory) { name, isDirectory in
                if isDirectory, !WatchRoot.skippedNames.contains(name) { stack.append(join(directory, name)) }
            }
        }
        return found
    }

    /// Calls `body` with each entry's name and whether it is a directory
    /// (not following links); `.` and `..` left out.
    static func entries(of directory: String, _ body: (_ name: String, _ isDirectory: Bool) -> Void) {
        guard let handle = opendir(directory) else { return }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> String in
                let bytes = raw.bindMemory(to: UInt8.self)
                let length = bytes.firstIndex(of: 0) ?? bytes.count
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<length]), as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
            if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
                var info = stat()
                isDirectory = lstat(join(directory, name), &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
            }
            body(name, isDirectory)
        }
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
