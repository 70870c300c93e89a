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

    private static func reason(_ code: Int32) -> String {
        code == 0 ? "" : ": " + String(cString: strerror(code))
    }
}
