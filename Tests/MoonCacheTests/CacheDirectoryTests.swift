import Foundation
import Glibc
import Testing
@testable import MoonCache

/// The cache directory's errors say what is wrong: a file where a directory
/// should be is ENOTDIR, never a guessed "Permission denied".
@Suite struct CacheDirectoryTests {
    func scratch() throws -> String { try scratchDirectory("cachedir") }

    @Test func makeDirectoriesMakesEveryPartAndSaysWhichFileIsInTheWay() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try CacheDirectory.makeDirectories(root + "/a/b/c")
        #expect(CacheDirectory.isDirectory(root + "/a/b/c"))
        try CacheDirectory.makeDirectories(root + "/a/b/c")
        _ = FileManager.default.createFile(atPath: root + "/file", contents: Data())
        for path in [root + "/file", root + "/file/below"] {
            do {
                try CacheDirectory.makeDirectories(path)
                Issue.record("made \(path)")
            } catch CacheError.io(let what, let code) {
                #expect(code == ENOTDIR, "\(what)")
                #expect(what.contains(path))
            }
        }
    }

    @Test func problemNamesAFileWhereTheCacheShouldBe() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(CacheDirectory(path: root + "/missing").problem == nil)
        #expect(CacheDirectory(path: root).problem == nil)
        _ = FileManager.default.createFile(atPath: root + "/file", contents: Data())
        #expect(CacheDirectory(path: root + "/file").problem?.contains("is not a directory") == true)
        try FileManager.default.createDirectory(atPath: root + "/c", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: root + "/c/v1", contents: Data())
        #expect(CacheDirectory(path: root + "/c").problem?.contains("/c/v1 is not a directory") == true)
    }
}
