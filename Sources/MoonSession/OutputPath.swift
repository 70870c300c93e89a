import Foundation

/// Where a command's `-o PATH` writes. A regular file (or nothing yet) is
/// replaced whole, through a temporary file and a rename, so a reader never
/// sees half of it. Anything else (a device, a FIFO, a socket, what
/// `/dev/stdout` leads to) is written into where it is: renaming over it
/// would swap the node itself for a file (as root, `/dev/null`). A FIFO
/// nobody reads is an error, not a wait.
package enum OutputPath {
    package static func write(_ text: String, to path: String, permissions: Int) throws {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG else {
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: permissions]) else {
                throw CLIError("cannot write \(path)\(reason(errno))")
            }
            return
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw CLIError("cannot write \(path): it is a directory; give the name of the file to write")
        }
        // O_NONBLOCK: opening a FIFO for writing would wait for a reader.
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENXIO { throw CLIError("cannot write \(path): it is a FIFO or socket that nobody reads") }
            throw CLIError("cannot write \(path)\(reason(errno))")
        }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw CLIError("cannot write \(path)\(reason(written < 0 ? errno : ENOSPC))") }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Refuses a path a written file must not replace: the graph file, what
    /// is under its `.moon/` (the state), or a regular file that does not
    /// start as a file moon writes does (`starts`: JSON's `[` or `{`, a
    /// page's `<`): a slip such as `--trace moon.yaml` or `-o main.c` must
    /// not cost the user that file.
    package static func refuseToReplace(_ path: String, graphPath: String?, writes what: String,
                                        starts: [UInt8] = Array("[{<".utf8)) throws {
        guard path != "-" else { return }
        let target = resolved(path)
        if let graphPath {
            let graph = resolved(graphPath)
            if target == graph { throw CLIError("\(path) is the graph file; give \(what) a path of its own") }
            let state = (graph as NSString).deletingLastPathComponent + "/.moon/"
            if target.hasPrefix(state) { throw CLIError("\(path) is inside moon's state (.moon/); give \(what) a path of its own") }
        }
        var info = stat()
        guard lstat(target, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0 else { return }
        let fd = open(target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var first: UInt8 = 0
        var skipped = 0
        // The first byte that is not white space (at most a few).
        while read(fd, &first, 1) == 1, [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r")].contains(first) {
            skipped += 1
            if skipped > 64 { break }
        }
        if !starts.contains(first) {
            throw CLIError("\(path) exists and is not a file moon wrote; give \(what) another path, or remove it first")
        }
    }

    /// `path` with its directory's links resolved (the file itself need not exist).
    private static func resolved(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        if let real = realpath(absolute, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        let directory = (absolute as NSString).deletingLastPathComponent
        guard let real = realpath(directory, nil) else { return absolute }
        defer { free(real) }
        return String(cString: real) + "/" + (absolute as NSString).lastPathComponent
    }

    private static func reason(_ code: Int32) -> String {
        code == 0 ? "" : ": " + String(cString: strerror(code))
    }
}
