import Foundation
import MoonGraph

/// How moon reads a file the user names as input (a graph file, an
/// include, a `dotenv:` file, a recording for `moon replay`): a regular file
/// up to a size cap, or a pipe (process substitution, `/dev/stdin`) or
/// moon's own standard input, cut at the same cap. Every other device is
/// refused without a read: `/dev/zero` never ends, a pseudo-terminal
/// (`/dev/ptmx`, `/dev/tty`) may never answer, and a disk is not a text file. A FIFO is opened without
/// waiting for a writer, so one nobody writes to is an error, not a hang.
package enum InputFile {
    /// Why a file is not read; `message` names the file and says what it is.
    package struct Refusal: Error {
        package var message: String
        /// The file does not exist (an optional `dotenv:` entry is then skipped).
        package var missing = false
    }

    /// The largest graph file (and `dotenv:` file) moon reads. Generous: a
    /// 200,000-node graph is ~12 MB; the cap keeps loading's memory (about
    /// ten times the file) bounded whatever the file.
    package static let graphLimit = 64 << 20
    /// The largest recording `moon replay` and `moon trace --from` read.
    package static let recordingLimit = 1 << 30
    /// The longest line of a recording. moon's own lines are far shorter (a
    /// line of output is cut at 1 MiB; `graph-start` names the nodes of a
    /// graph file of at most `graphLimit`); the cap bounds what one endless
    /// line costs before it is refused.
    package static let recordingLineLimit = 64 << 20

    /// The bytes of `path`, at most `limit` of them (`kind` names what is
    /// read, for messages: "graph file"). With `stopAtNUL` the
    /// reading ends with the first block that holds a NUL byte, so a binary
    /// file fails after its first block, not after all of it: the caller
    /// finds the NUL in what came back.
    package static func read(_ path: String, limit: Int, kind: String, stopAtNUL: Bool) throws(Refusal) -> [UInt8] {
        let (fd, info) = try open(path, limit: limit, kind: kind)
        defer { close(fd) }
        let type = info.st_mode & S_IFMT
        // Made only when thrown: most reads never need it.
        var tooLong: Refusal { Refusal(message: "\(path) is longer than \(ByteSize.text(Int64(limit))); moon reads \(kind)s of at most \(ByteSize.text(Int64(limit)))") }
        var failure: Int32 = 0
        var done = false
        /// Reads into `buffer` from `count` on, a block at a time, until it
        /// is full or `done` (the end, a failure, or a block with a NUL).
        func fill(_ buffer: UnsafeMutableBufferPointer<UInt8>, _ count: inout Int) {
            while count < buffer.count && !done {
                let want = min(1 << 16, buffer.count - count)
                let got = Glibc.read(fd, buffer.baseAddress! + count, want)
                if got < 0 && errno == EINTR { continue }
                if got < 0 { failure = errno; done = true; return }
                if got == 0 { done = true; return }
                if stopAtNUL && UnsafeBufferPointer(rebasing: buffer[count..<count + got]).contains(0) { done = true }
                count += got
            }
        }
        // A regular file in one buffer of its size, plus one byte that finds
        // the end in the same pass (or that the file grew meanwhile).
        var bytes = type != S_IFREG ? [] : [UInt8](unsafeUninitializedCapacity: Int(info.st_size) + 1) { buffer, count in
            count = 0
            fill(buffer, &count)
        }
        // A pipe, or a file longer than its size said: in blocks, up to the cap.
        var block = [UInt8](repeating: 0, count: done ? 0 : 1 << 16)
        while !done {
            var got = 0
            block.withUnsafeMutableBufferPointer { fill($0, &got) }
            if bytes.count + got > limit { throw tooLong }
            bytes += block[..<got]
        }
        if failure != 0 { throw refusal(path, failure) }
        if bytes.isEmpty, let unwritten = unwrittenFIFO(path, type) { throw unwritten }
        return bytes
    }

    /// Each line of `path` (without its line break) to `body` as soon as it
    /// has arrived, with its 1-based number: a bad first line on a pipe fails
    /// before the writer has finished. The same refusals as `read`; more
    /// than `limit` bytes in all, a line longer than `lineLimit` and a NUL
    /// byte are refused as soon as they arrive, so one endless line (a pipe
    /// of `yes x | tr -d '\n'`, a sparse file) costs at most `lineLimit`
    /// of memory and of reading.
    package static func forEachLine(_ path: String, limit: Int, lineLimit: Int, kind: String,
                                    _ body: (ArraySlice<UInt8>, Int) throws -> Void) throws {
        let (fd, info) = try open(path, limit: limit, kind: kind)
        defer { close(fd) }
        var pending: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0, number = 0
        func checked(_ line: ArraySlice<UInt8>, searchFrom: Int, _ number: Int) throws(Refusal) {
            if line.count > lineLimit {
                let cap = ByteSize.text(Int64(lineLimit))
                throw Refusal(message: "\(path):\(number): a line longer than \(cap); moon reads \(kind)s whose lines are at most \(cap)")
            }
            if searchFrom < line.endIndex, pending.withUnsafeBytes({ memchr($0.baseAddress! + searchFrom, 0, line.endIndex - searchFrom) != nil }) {
                throw Refusal(message: "\(path) is binary (a NUL byte on line \(number))")
            }
        }
        while true {
            let got = block.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { throw refusal(path, errno) }
            if got == 0 { break }
            total += got
            if total > limit { throw Refusal(message: "\(path) is longer than \(ByteSize.text(Int64(limit))); moon reads \(kind)s of at most \(ByteSize.text(Int64(limit)))") }
            // Only the new block is searched: a long line costs linear time.
            var from = pending.count
            pending += block[..<got]
            var start = 0
            while let end = newline(in: pending, from: from) {
                number += 1
                try checked(pending[start..<end], searchFrom: max(start, from), number)
                try body(pending[start..<end], number)
                start = end + 1
                from = start
            }
            // The line still arriving: too long or binary already?
            try checked(pending[start...], searchFrom: max(start, from), number + 1)
            pending.removeSubrange(..<start)
        }
        if !pending.isEmpty {
            number += 1
            try body(pending[...], number)
        }
        if total == 0, let unwritten = unwrittenFIFO(path, info.st_mode & S_IFMT) { throw unwritten }
    }

    /// The index of the first `\n` of `bytes` at or after `from` (`memchr`:
    /// lines of hundreds of MiB are searched at memory speed).
    private static func newline(in bytes: [UInt8], from: Int) -> Int? {
        bytes.withUnsafeBytes { buffer in
            guard from < buffer.count, let found = memchr(buffer.baseAddress! + from, 0x0A, buffer.count - from) else { return nil }
            return buffer.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
    }

    /// `path` opened for reading, after the refusals by type and size.
    private static func open(_ path: String, limit: Int, kind: String) throws(Refusal) -> (fd: Int32, info: stat) {
        // A device is refused before it is opened too: opening one may act (/dev/ptmx makes a terminal, a tape rewinds).
        var named = stat()
        if stat(path, &named) == 0, let refusal = deviceRefusal(path, named, kind: kind) { throw refusal }
        // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw refusal(path, errno) }
        do throws(Refusal) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw refusal(path, errno) }
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                if Int(info.st_size) > limit {
                    throw Refusal(message: "\(path) is \(ByteSize.text(Int64(info.st_size))); moon reads \(kind)s of at most \(ByteSize.text(Int64(limit)))")
                }
            case S_IFDIR:
                throw Refusal(message: "\(path) is a directory, not a \(kind)")
            case S_IFIFO, S_IFSOCK:
                break
            case S_IFCHR, S_IFBLK:
                // Checked again on what was opened: the name may have changed in between.
                if let refusal = deviceRefusal(path, info, kind: kind) { throw refusal }
            default:
                throw Refusal(message: "\(path) is not a regular file, nor a pipe")
            }
            // Reads block from here on: a pipe's writer may not have written yet.
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return (fd, info)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Why the device `info` describes is not read, or nil when it is the
    /// terminal moon reads its standard input from (`moon check /dev/stdin`
    /// typed at a prompt, ended with Ctrl-D): any other character device (a
    /// new pseudo-terminal from /dev/ptmx, another terminal, /dev/tty,
    /// /dev/zero) may block for ever or never end.
    private static func deviceRefusal(_ path: String, _ info: stat, kind: String) -> Refusal? {
        switch info.st_mode & S_IFMT {
        case S_IFCHR:
            var input = stat()
            if isatty(0) == 1 && fstat(0, &input) == 0 && input.st_dev == info.st_dev && input.st_ino == info.st_ino { return nil }
            return Refusal(message: "\(path) is a character device, not a \(kind)")
        case S_IFBLK:
            return Refusal(message: "\(path) is a block device, not a \(kind)")
        default:
            return nil
        }
    }

    /// A FIFO that gave no byte had no writer when it was opened.
    private static func unwrittenFIFO(_ path: String, _ type: mode_t) -> Refusal? {
        guard type == S_IFIFO else { return nil }
        var named = stat()
        guard lstat(path, &named) == 0 && (named.st_mode & S_IFMT) == S_IFIFO else { return nil }
        return Refusal(message: "\(path) is a FIFO with nothing written to it (moon reads a FIFO only while a writer has it open)")
    }

    /// "PATH is binary (a NUL byte on line N)" when `bytes` hold a NUL, for
    /// files read without a located diagnostic (dotenv files, recordings).
    package static func binaryProblem(_ path: String, _ bytes: [UInt8]) -> String? {
        guard let nul = bytes.firstIndex(of: 0) else { return nil }
        let line = bytes[..<nul].reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        return "\(path) is binary (a NUL byte on line \(line))"
    }

    private static func refusal(_ path: String, _ code: Int32) -> Refusal {
        switch code {
        case ENOENT, ENOTDIR: return Refusal(message: "no such file: \(path)", missing: true)
        case EACCES, EPERM: return Refusal(message: "cannot read \(path): permission denied")
        case ENXIO: return Refusal(message: "\(path) is a socket or device that cannot be read")
        default: return Refusal(message: "cannot read \(path): \(String(cString: strerror(code)))")
        }
    }
}
