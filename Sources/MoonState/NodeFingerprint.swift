import Foundation

/// What decides whether a node is up to date, in parts so that `moon status`
/// can say which part changed: the command (text or argv, shell, working
/// directory, and for a built-in its name and arguments), the environment
/// from the file (graph and node `env`, dotenv values, vars), the outputs,
/// values and results of its needs, and its sources (the patterns, then each
/// file's path and content hash). `combined` hashes the four.
public struct NodeFingerprint: Sendable, Equatable {
    public var command: ContentHash
    public var environment: ContentHash
    public var needs: ContentHash
    public var sources: ContentHash
    /// The source files and their hashes, for reporting what changed.
    public var manifest: Manifest
    public var combined: ContentHash

    public init(command: ContentHash, environment: ContentHash, needs: ContentHash, sources: ContentHash,
                manifest: Manifest, combined: ContentHash) {
        self.command = command
        self.environment = environment
        self.needs = needs
        self.sources = sources
        self.manifest = manifest
        self.combined = combined
    }

    init(command: ContentHash, environment: ContentHash, needs: ContentHash, sources: ContentHash, manifest: Manifest) {
        var all = DigestBuilder("moon-fingerprint-1")
        for part in [command, environment, needs, sources] { all.add(part) }
        self.init(command: command, environment: environment, needs: needs, sources: sources, manifest: manifest,
                  combined: all.finish())
    }

    public static func == (a: NodeFingerprint, b: NodeFingerprint) -> Bool { a.combined == b.combined }
}

/// The source files of a node with their stats and content hashes, in the
/// order the scan found them. It doubles as the node's own stat cache: an
/// unchanged tree is checked by walking it and this list in step, with no
/// dictionary and no file read. Stored as binary records: path length
/// (u32), path, size, mtime (ns), inode (64 bits each), racy (u8), hash (32).
public struct Manifest: Sendable {
    public struct Entry: Sendable, Equatable {
        public var path: String
        public var stat: FileStat
        public var racy: Bool
        public var hash: ContentHash

        public init(path: String, stat: FileStat, racy: Bool, hash: ContentHash) {
            self.path = path
            self.stat = stat
            self.racy = racy
            self.hash = hash
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    static let fixedSize = 4 + 8 + 8 + 8 + 1 + 32

    /// Marks a record that starts with the node's `CheckStamp` (16 bytes).
    /// Read by an older moon as a path of 843 MB, that is as no entries:
    /// it then hashes the files again, as for a node it never saw.
    static let stampedMagic: UInt32 = 0x3246_4e4d  // "MNF2"

    public init(encoded data: Data) {
        self = Self.decode(data).manifest
    }

    /// The entries, and the check stamp a newer moon stored before them.
    public static func decode(_ data: Data) -> (manifest: Manifest, stamp: CheckStamp?) {
        data.withUnsafeBytes { decode($0) }
    }

    /// As `decode(_:)`, from bytes in place.
    public static func decode(_ raw: UnsafeRawBufferPointer) -> (manifest: Manifest, stamp: CheckStamp?) {
        var entries: [Entry] = []
        var stamp: CheckStamp?
        do {
            var i = 0
            if raw.count >= 20, UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)) == stampedMagic {
                stamp = CheckStamp(a: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 4, as: UInt64.self)),
                                   b: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 12, as: UInt64.self)))
                i = 20
            }
            // Counted first, so the array is made once (every run decodes every node's manifest).
            var count = 0
            var at = i
            while at + 4 <= raw.count {
                at += Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))) + Self.fixedSize
                count += 1
            }
            entries.reserveCapacity(count)
            while i + 4 <= raw.count {
                let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt32.self)))
                let start = i + 4
                guard start + length + Self.fixedSize - 4 <= raw.count else { break }
                let path = String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]), as: UTF8.self)
                var o = start + length
                let size = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: Int64.self)); o += 8
                let mtime = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: Int64.self)); o += 8
                let inode = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: o, as: UInt64.self)); o += 8
                let racy = raw[o] != 0; o += 1
                guard let hash = ContentHash(bytes: UnsafeRawBufferPointer(rebasing: raw[o..<(o + 32)])) else { break }
                o += 32
                entries.append(Entry(path: path, stat: FileStat(size: size, mtimeNanoseconds: mtime, inode: inode), racy: racy, hash: hash))
                i = o
            }
        }
        return (Manifest(entries: entries), stamp)
    }

    public var encoded: Data { encoded(stamp: nil) }

    /// The binary record, with `stamp` before the entries when given.
    public func encoded(stamp: CheckStamp?) -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(20 + entries.count * (Self.fixedSize + 32))
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
        }
        if let stamp {
            append(Self.stampedMagic)
            append(stamp.a)
            append(stamp.b)
        }
        for entry in entries {
            var path = entry.path
            path.withUTF8 { utf8 in
                append(UInt32(utf8.count))
                out.append(contentsOf: utf8)
            }
            append(entry.stat.size)
            append(entry.stat.mtimeNanoseconds)
            append(entry.stat.inode)
            out.append(entry.racy ? 1 : 0)
            entry.hash.appendBytes(to: &out)
        }
        return Data(out)
    }

    /// What differs from `old`: files whose content changed, new files, and files gone (each sorted).
    public func changes(since old: Manifest) -> (changed: [String], added: [String], removed: [String]) {
        var before: [String: ContentHash] = [:]
        for entry in old.entries { before[entry.path] = entry.hash }
        var changed: [String] = [], added: [String] = []
        for entry in entries {
            if let hash = before.removeValue(forKey: entry.path) {
                if hash != entry.hash { changed.append(entry.path) }
            } else {
                added.append(entry.path)
            }
        }
        return (changed.sorted(), added.sorted(), before.keys.sorted())
    }
}
