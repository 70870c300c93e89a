import Foundation
import Testing

/// Recordings, which `moon replay FILE` and `moon trace --from FILE` read
/// through one reader (`InputFile.forEachLine`): one endless line, a
/// sparse file of NULs, a device, a FIFO nobody writes to and a file over
/// the cap are each a clear error in bounded time and memory, from either
/// command.
@Suite struct HostileRecordingTests {
    static let commands: [[String]] = [["replay"], ["trace", "--from"]]

    /// One line that never ends (`yes x | tr -d '\n'` after the start of an
    /// event, on a FIFO), and one of 65 MiB in a file: refused once the line
    /// passes its cap (64 MiB), not read up to the whole file's (1 GiB).
    @Test(arguments: commands)
    func anEndlessLineIsRefusedAtTheLineCap(command: [String]) throws {
        let moon = try Moon()
        let fifo = moon.path("endless.jsonl")
        #expect(mkfifo(fifo, 0o644) == 0)
        // Held open for writing, so moon never reads an end before the writer starts.
        let held = open(fifo, O_RDWR | O_CLOEXEC)
        #expect(held >= 0)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", #"exec > endless.jsonl; printf '{"v":1,"seq":1,"ts":"'; yes x | tr -d '\n'"#]
        writer.currentDirectoryURL = moon.directory
        writer.standardInput = FileHandle.nullDevice
        writer.standardOutput = FileHandle.nullDevice
        writer.standardError = FileHandle.nullDevice
        try writer.run()
        defer {
            writer.terminate()
            // The last reader gone, `yes` and `tr` end on SIGPIPE.
            close(held)
        }
        let endless = try Measured.run(moon, command + ["endless.jsonl"], limit: 60)
        #expect(endless.status == 2, "\(endless.stderr)")
        #expect(endless.stderr.contains("endless.jsonl:1: a line longer than 64 MiB; moon reads recordings whose lines are at most 64 MiB"),
                "\(endless.stderr)")
        #expect(endless.seconds < 30 && endless.peakKiB < 400_000, "\(endless.seconds)s, \(endless.peakKiB) KiB")

        let line = "{\"v\":1,\"seq\":1,\"text\":\"" + String(repeating: "x", count: 65 << 20) + "\"}\n"
        try moon.write("long.jsonl", line)
        let long = try Measured.run(moon, command + ["long.jsonl"], limit: 60)
        #expect(long.status == 2, "\(long.stderr)")
        #expect(long.stderr.contains("long.jsonl:1: a line longer than 64 MiB"), "\(long.stderr)")
        #expect(long.seconds < 30 && long.peakKiB < 400_000, "\(long.seconds)s, \(long.peakKiB) KiB")
    }

    /// A sparse file of NULs under the cap (900 MiB) and a pipe of them stop
    /// at the first block that holds a NUL, naming the line, however long
    /// the line would be.
    @Test(arguments: commands)
    func binaryDataStopsAtItsFirstBlock(command: [String]) throws {
        let moon = try Moon()
        let fd = open(moon.path("sparse.jsonl"), O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 900 << 20) == 0)
        close(fd)
        let sparse = try Measured.run(moon, command + ["sparse.jsonl"], limit: 30)
        #expect(sparse.status == 2, "\(sparse.stderr)")
        #expect(sparse.stderr.contains("sparse.jsonl is binary (a NUL byte on line 1)"), "\(sparse.stderr)")
        #expect(sparse.seconds < 5 && sparse.peakKiB < 200_000, "\(sparse.seconds)s, \(sparse.peakKiB) KiB")
        // After other lines (blank ones here): the NUL's own line is named.
        try moon.write("late.jsonl", "\n\n{\"v\":1,\"text\":\"a\0b")
        let late = try moon.run(command + ["late.jsonl"])
        #expect(late.status == 2 && late.stderr.contains("late.jsonl is binary (a NUL byte on line 3)"), "\(late.stderr)")
        let piped = try Measured.shell("cat /dev/zero | \"$MOON\" \(command.joined(separator: " ")) -", in: moon, limit: 30)
        #expect(piped.status == 2, "\(piped.stderr)")
        #expect(piped.stderr.contains("/dev/stdin is binary (a NUL byte on line 1)"), "\(piped.stderr)")
        #expect(piped.seconds < 10, "\(piped.seconds)s")
    }

    /// A device, a FIFO with no writer and a sparse 10 GiB file: refused
    /// before a byte is read.
    @Test(arguments: commands)
    func devicesFIFOsAndGiantsAreRefusedAtOnce(command: [String]) throws {
        let moon = try Moon()
        #expect(mkfifo(moon.path("fifo.jsonl"), 0o644) == 0)
        let fd = open(moon.path("giant.jsonl"), O_CREAT | O_WRONLY, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 10 << 30) == 0)
        close(fd)
        for (file, message) in [("/dev/zero", "/dev/zero is a character device, not a recording"),
                                ("fifo.jsonl", "fifo.jsonl is a FIFO with nothing written to it"),
                                ("giant.jsonl", "giant.jsonl is 10 GiB; moon reads recordings of at most 1 GiB")] {
            let r = try Measured.run(moon, command + [file], limit: 20)
            #expect(r.status == 2, "\(file): \(r.stderr)")
            #expect(r.stderr.contains(message), "\(file): \(r.stderr)")
            #expect(r.seconds < 5 && r.peakKiB < 200_000, "\(file): \(r.seconds)s, \(r.peakKiB) KiB")
        }
    }
}
