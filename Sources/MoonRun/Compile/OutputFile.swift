import Foundation
import MoonGraph
import MoonEvents

/// The file a shell or exec node writes its outputs to (`$MOON_OUTPUT`), in
/// the GitHub Actions format: `KEY=VALUE` lines, and for values of several
/// lines `KEY<<DELIMITER`, the lines, then `DELIMITER` alone on a line.
/// Blank lines are ignored; a key set twice keeps the last value.
enum OutputFile {
    /// Larger files are an error rather than a memory hazard.
    static let sizeLimit = 16 << 20

    struct Problem: Error, Equatable, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func parse(_ text: String) -> Result<[KeyValue], Problem> {
        var result: [KeyValue] = []
        var position: [String: Int] = [:]
        func set(_ key: String, _ value: String) {
            if let p = position[key] { result[p].value = value } else {
                position[key] = result.count
                result.append(KeyValue(key, value))
            }
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        var n = 0
        while n < lines.count {
            let line = lines[n]
            let number = n + 1
            n += 1
            if line.isEmpty { continue }
            let eq = line.firstIndex(of: "=")
            let heredoc = line.firstRange(of: "<<")
            if let heredoc, eq == nil || heredoc.lowerBound < eq! {
                let key = String(line[..<heredoc.lowerBound])
                let delimiter = line[heredoc.upperBound...]
                guard OutputKey.isValid(key) else { return .failure(invalidKey(key, line: number)) }
                guard !delimiter.isEmpty else {
                    return .failure(Problem(message: "line \(number): '\(key)<<' needs a delimiter, e.g. \(key)<<EOF"))
                }
                var body: [Substring] = []
                var closed = false
                while n < lines.count {
                    let inner = lines[n]
                    n += 1
                    if inner == delimiter { closed = true; break }
                    body.append(inner)
                }
                guard closed else {
                    return .failure(Problem(message: "line \(number): no line '\(delimiter)' ends the value of '\(key)'"))
                }
                set(key, body.joined(separator: "\n"))
            } else if let eq {
                let key = String(line[..<eq])
                guard OutputKey.isValid(key) else { return .failure(invalidKey(key, line: number)) }
                set(key, String(line[line.index(after: eq)...]))
            } else {
                let shown = line.count > 40 ? line.prefix(40) + "…" : line
                return .failure(Problem(message: "line \(number): expected KEY=VALUE or KEY<<DELIMITER, found '\(shown)'"))
            }
        }
        return .success(result)
    }

    private static func invalidKey(_ key: String, line: Int) -> Problem {
        let shown = key.count > 40 ? key.prefix(40) + "…" : Substring(key)
        return Problem(message: "line \(line): invalid output name '\(shown)'; names start with a letter or '_' and contain only letters, digits, '_' and '-'")
    }

    /// Reads and parses the file at `path`, then removes it; a missing file
    /// means no outputs. With `parse` false (the process failed: its outputs
    /// do not count) it only removes the file, and returns nil.
    ///
    /// One `open` decides: most nodes write no outputs, and the file's name
    /// is new each time, so every look-up of it is a miss in the kernel's
    /// caches, and one look-up is the least.
    ///
    /// This runs on moon's event loop, so the open must never wait: a node
    /// may have put a FIFO (whose open waits for a writer), a symlink or a
    /// device there. `O_NONBLOCK | O_NOFOLLOW` make the open return at once,
    /// and only a regular file is read; anything else is a problem.
    static func consume(_ path: String, parse: Bool) -> Result<[KeyValue], Problem>? {
        guard parse else {
            unlink(path)
            return nil
        }
        var fd: Int32
        repeat {
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY)
        } while fd < 0 && errno == EINTR
        if fd < 0 {
            let code = errno
            if code == ENOENT { return .success([]) }
            unlink(path)
            if code == ELOOP { return .failure(Problem(message: "it is a symbolic link; moon reads only a regular file there")) }
            return .failure(Problem(message: "it cannot be opened (\(String(cString: strerror(code))))"))
        }
        defer { unlink(path) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            return .failure(Problem(message: "it cannot be examined (\(String(cString: strerror(errno))))"))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            return .failure(Problem(message: "it is \(kind(of: status.st_mode)), not a regular file; write outputs with >> \"$MOON_OUTPUT\""))
        }
        let data = (try? handle.read(upToCount: sizeLimit + 1)) ?? Data()
        if data.count > sizeLimit {
            return .failure(Problem(message: "it is larger than \(ByteSize.text(Int64(sizeLimit)))"))
        }
        return self.parse(String(decoding: data, as: UTF8.self))
    }

    /// "a FIFO", "a directory"… for a file mode that is not a regular file's.
    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "a special file"
        }
    }
}
