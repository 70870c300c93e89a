import Foundation
import MoonCommand
import MoonEventLoop
import MoonWatch
import Testing

/// The watchers on a real directory. Each waits for what it expects with a
/// generous bound (the loop and the poller run on their own threads).
@Suite("file watcher")
struct FileWatcherTests {
    final class Seen: @unchecked Sendable {
        let lock = NSLock()
        var paths = Set<String>()
        var overflowed = false
        var methods: [FileWatcher.Method] = []

        func wait(for path: String, seconds: Double = 20) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if lock.withLock({ paths.contains(path) }) { return true }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return false
        }

        func waitForMethod(seconds: Double = 20) -> FileWatcher.Method? {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if let method = lock.withLock({ methods.first }) { return method }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return nil
        }
    }

    static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "moon-watch-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path + "/src", withIntermediateDirectories: true)
        return path
    }

    func watch(_ root: String, poll: Duration?) throws -> (Seen, Disposable) {
        let loop = try EventLoop()
        loop.start()
        let seen = Seen()
        let subscription = FileWatcher.changes(of: [WatchRoot(path: root, recursive: true)], loop: loop, poll: poll) { method, _ in
            seen.lock.withLock { seen.methods.append(method) }
        }.observe(next: { changes in
            seen.lock.withLock {
                seen.paths.formUnion(changes.paths)
                seen.overflowed = seen.overflowed || changes.overflowed
            }
        })
        return (seen, subscription)
    }

    @Test("inotify: a write, a save by rename, a file in a directory created later", arguments: [nil, Duration.milliseconds(50)])
    func seesChanges(poll: Duration?) throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try "a".write(toFile: root + "/src/a.c", atomically: false, encoding: .utf8)
        let (seen, subscription) = try watch(root, poll: poll)
        defer { subscription.dispose() }
        let method = try #require(seen.waitForMethod())
        if poll == nil {
            #expect(method == .inotify(directories: 2))
        } else {
            #expect(method == .polling(interval: .milliseconds(50), files: 1))
        }
        try "b".write(toFile: root + "/src/a.c", atomically: false, encoding: .utf8)
        #expect(seen.wait(for: root + "/src/a.c"))
        // An editor's save: a temporary file renamed over the original.
        try "c".write(toFile: root + "/src/.b.c.swp", atomically: false, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: root + "/src/b.c", contents: nil)
        #expect(seen.wait(for: root + "/src/b.c"))
        #expect(rename(root + "/src/.b.c.swp", root + "/src/b.c") == 0)
        // A directory created later, with a file written at once.
        try FileManager.default.createDirectory(atPath: root + "/src/new/deeper", withIntermediateDirectories: true)
        try "d".write(toFile: root + "/src/new/deeper/d.c", atomically: false, encoding: .utf8)
        #expect(seen.wait(for: root + "/src/new/deeper/d.c"))
        // And a later write there is seen too (its directory is watched now).
        try "e".write(toFile: root + "/src/new/deeper/e.c", atomically: false, encoding: .utf8)
        #expect(seen.wait(for: root + "/src/new/deeper/e.c"))
    }

    @Test("a change seen but not delivered when the watcher is disposed goes to leftover, never lost")
    func undeliveredChangesAreLeftOver() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let loop = try EventLoop()
        loop.start()
        let seen = Seen()
        let left = Seen()
        let subscription = FileWatcher.changes(of: [WatchRoot(path: root, recursive: true)], loop: loop, announce: { method, _ in
            seen.lock.withLock { seen.methods.append(method) }
        }, leftover: { changes in
            left.lock.withLock { left.paths.formUnion(changes.paths) }
        }).observe(next: { changes in
            seen.lock.withLock { seen.paths.formUnion(changes.paths) }
        })
        #expect(seen.waitForMethod() != nil)
        // The loop is held while the change happens and the watcher is disposed.
        let hold = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        loop.post { held.signal(); hold.wait() }
        held.wait()
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/src/late.txt"))
        subscription.dispose()
        hold.signal()
        #expect(left.wait(for: root + "/src/late.txt", seconds: 10))
        #expect(seen.lock.withLock { seen.paths.isEmpty })
    }

    @Test("moon's state and version control are not watched")
    func skipsStateDirectories() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/.moon", withIntermediateDirectories: true)
        let (seen, subscription) = try watch(root, poll: nil)
        defer { subscription.dispose() }
        #expect(seen.waitForMethod() == .inotify(directories: 2))
    }
}
