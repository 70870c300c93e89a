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
}
