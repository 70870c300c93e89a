import Foundation
import Glibc
import Testing
@testable import MoonCache

/// Reading and copying the cache's files: only regular files, within a
/// size, stopping when asked, and leaving holes where the source has zeros.
@Suite struct BlobCopyTests {
    func scratch() throws -> String { try scratchDirectory("blobcopy") }

    func isDamaged(_ body: () throws -> Void) -> Bool {
        do { try body() } catch CacheError.damaged { return true } catch { return false }
        return false
    }

    @Test func onlyARegularFileWithinItsCapIsRead() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkfifo(root + "/fifo", 0o600) == 0)
        #expect(symlink("/dev/zero", root + "/zero") == 0)
        _ = FileManager.default.createFile(atPath: root + "/big", contents: Data(count: 2048))
        #expect(isDamaged { _ = try BlobCopy.contents(of: root + "/fifo", maxSize: 1 << 20) })
        #expect(isDamaged { _ = try BlobCopy.contents(of: root + "/zero", maxSize: 1 << 20) })
        #expect(isDamaged { _ = try BlobCopy.contents(of: root + "/big", maxSize: 1024) })
        #expect(try BlobCopy.contents(of: root + "/missing", maxSize: 1024) == nil)
        #expect(try BlobCopy.contents(of: root + "/big", maxSize: 4096)?.count == 2048)
    }

    @Test func aCopyOfZerosIsSparseAndAStopEndsIt() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let source = root + "/sparse"
        #expect(FileManager.default.createFile(atPath: source, contents: nil) && truncate(source, 64 << 20) == 0)
        let copied = try BlobCopy.copy(from: source, to: root + "/copy")
        #expect(copied.size == 64 << 20)
        var info = stat()
        #expect(stat(root + "/copy", &info) == 0 && info.st_size == 64 << 20 && info.st_blocks * 512 < 1 << 20)
        #expect(throws: BlobCopy.SizeMismatch.self) { _ = try BlobCopy.copy(from: source, to: root + "/other", expectedSize: 1) }
        #expect(access(root + "/other", F_OK) != 0)
        var stopped = false
        do { _ = try BlobCopy.copy(from: source, to: root + "/stopped", shouldStop: { true }) } catch CacheError.stopped { stopped = true }
        #expect(stopped && access(root + "/stopped", F_OK) != 0)
    }

    /// A copy of a known size (a blob's) reads to that size; data that
    /// ends in zeros, within a block or past one, keeps its length (the
    /// hole at the end is set by the length), and a mode the umask would
    /// take bits of is set on the file.
    @Test func aCopyEndingInZerosKeepsItsLengthAndItsMode() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let cases: [(String, Data)] = [
            ("past", Data("data".utf8) + Data(count: 200_000)),
            ("within", Data("data".utf8) + Data(count: 10)),
            ("zeros", Data(count: 131_072)),
            ("block", Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) })),
            ("empty", Data()),
        ]
        for (name, data) in cases {
            let source = root + "/" + name
            #expect(FileManager.default.createFile(atPath: source, contents: data))
            let copied = try BlobCopy.copy(from: source, to: source + ".copy", mode: 0o666, expectedSize: Int64(data.count))
            #expect(copied.size == Int64(data.count), "\(name)")
            #expect(copied.hash == BlobCopy.sha256(data), "\(name)")
            #expect(FileManager.default.contents(atPath: source + ".copy") == data, "\(name)")
            var info = stat()
            #expect(stat(source + ".copy", &info) == 0 && info.st_mode & 0o777 == 0o666, "\(name): \(String(info.st_mode & 0o777, radix: 8))")
        }
    }
}
