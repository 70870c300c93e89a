import Foundation
import Glibc

/// Writes a cache entry's outputs back, never half: every root is first
/// built beside its place (`.moon-restore-…` in the same directory, from
/// blobs checked against their hashes and sizes), and only when all are built is
/// each renamed over the old one (a directory replaced whole; the old one
/// removed after). Any failure before the renames leaves the old outputs
/// untouched, and the node runs instead.
struct OutputRestorer {
    let root: String
    let cache: CacheDirectory
    /// Ends a restore within a block of a blob (`CacheError.stopped`, nothing written).
    var shouldStop: () -> Bool = { false }

    /// What a restore wrote: the files and their bytes.
    struct Restored {
        var files: Int
        var bytes: Int64
    }

    func restore(_ entry: CacheEntry) throws -> Restored {
        // (A missing blob fails its copy, before any rename: `missingBlob`.)
        var built: [(temp: String, final: String)] = []
        do {
            for root in entry.roots {
                built.append((try build(root, of: entry), fullPath(root)))
            }
        } catch {
            for (temp, _) in built { Self.remove(temp) }
            throw error
        }
        for (temp, final) in built { try replace(final, with: temp) }
        let files = entry.files.filter { $0.kind == .file }
        return Restored(files: files.count, bytes: entry.bytes)
    }

    /// Builds `root`'s files under a temporary name beside it; that name.
    private func build(_ root: String, of entry: CacheEntry) throws -> String {
        let final = fullPath(root)
        // A validated root has plain parts: split at its last slash.
        let slash = final.utf8.lastIndex(of: UInt8(ascii: "/"))
        let parent = slash.map { $0 == final.utf8.startIndex ? "/" : String(final[..<$0]) } ?? ""
        if !parent.isEmpty { try CacheDirectory.makeDirectories(parent) }
        // Without the output's name: the temporary name fits wherever the output's does.
        let temp = (parent.isEmpty ? "" : parent + "/") + ".moon-restore-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var directories: [(String, UInt32)] = []
        do {
            for file in entry.files where CacheEntry.isWithin(file.path, root) {
                let path = temp + String(decoding: file.path.utf8.dropFirst(root.utf8.count), as: UTF8.self)
                switch file.kind {
                case .directory:
                    guard mkdir(path, 0o700) == 0 else { throw CacheError.io("cannot create \(path)", errno) }
                    directories.append((path, Self.permissions(file.mode, or: 0o755)))
                case .file:
                    let size = try cache.copyBlob(file.hash!, size: file.size, to: path,
                                                  mode: mode_t(Self.permissions(file.mode, or: 0o644)), shouldStop: shouldStop)
                    guard size == file.size else {
                        throw CacheError.invalidEntry("the size of '\(file.path)' is \(file.size ?? -1) by the entry, \(size) by its blob")
                    }
                case .symlink:
                    guard symlink(file.target!, path) == 0 else { throw CacheError.io("cannot create the link \(path)", errno) }
                }
            }
            // Modes last and innermost first: a read-only directory is filled first.
            for (path, mode) in directories.reversed() where chmod(path, mode_t(mode)) != 0 {
                throw CacheError.io("cannot set the mode of \(path)", errno)
            }
        } catch {
            Self.remove(temp)
            throw error
        }
        return temp
    }

    /// Puts `temp` in `final`'s place: one rename, after moving an old
    /// directory (or anything a directory replaces) aside.
    private func replace(_ final: String, with temp: String) throws {
        var old = stat()
        var new = stat()
        let exists = lstat(final, &old) == 0
        _ = lstat(temp, &new)
        var aside: String?
        if exists && ((old.st_mode & S_IFMT) == S_IFDIR || (new.st_mode & S_IFMT) == S_IFDIR) {
            let name = temp + ".old"
            guard rename(final, name) == 0 else { throw CacheError.io("cannot replace \(final)", errno) }
            aside = name
        }
        guard rename(temp, final) == 0 else {
            let code = errno
            if let aside { rename(aside, final) }
            Self.remove(temp)
            throw CacheError.io("cannot replace \(final)", code)
        }
        if let aside { Self.remove(aside) }
    }

    /// Only the permission bits of an entry's mode: an entry (perhaps from
    /// a server) never makes a setuid, setgid or sticky output.
    private static func permissions(_ mode: UInt32?, or fallback: UInt32) -> UInt32 {
        (mode ?? fallback) & 0o777
    }

    private func fullPath(_ path: String) -> String {
        root == "." ? path : root + "/" + path
    }

    /// Removes a file, link or tree (read-only directories included).
    static func remove(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            chmod(path, 0o700)
            if let names = try? FileManager.default.contentsOfDirectory(atPath: path) {
                for name in names { remove(path + "/" + name) }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
