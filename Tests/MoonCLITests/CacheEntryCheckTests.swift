import Foundation
import Testing

/// A cache entry, local or from a server, is restored only when it writes
/// what the node's `generates` (or depfile) can produce, with sizes that
/// match its blobs: one edited to write `.git/hooks`, a source or `.moon/`
/// is a miss with a warning, nothing is written, and `moon status` does
/// not forecast it.
@Suite struct CacheEntryCheckTests {
    static let graph = """
        version: 1
        nodes:
          gen:
            sources: [in.txt]
            generates: [g.txt]
            run: cp in.txt g.txt
        """

    /// Paths an entry must never write for `gen`: a hook, a source, moon's state.
    static let foreign = [".git/hooks/pre-commit", "in.txt", ".moon/x", "g.txt.d/x", "sub/g.txt"]

    /// The one entry file under `directory` (a cache's `ac`).
    static func entryFile(in directory: String) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.count == 1, "\(names)")
        return directory + "/" + (try #require(names.first))
    }

    /// The SHA-256 (hex) of `text`.
    static func sha256(_ text: String, in moon: Moon) throws -> String {
        try moon.write(".blob", text)
        let out = try shell("sha256sum .blob", in: moon).stdout
        try FileManager.default.removeItem(atPath: moon.path(".blob"))
        return String(out.prefix(64))
    }

    /// Edits the entry at `entry`: adds `path` (a root and a file with
    /// `text`, mode 0755), its blob written where `blobPath` says.
    static func poison(_ entry: String, adding path: String, text: String, in moon: Moon,
                       blobPath: (String) -> String) throws {
        let hash = try sha256(text, in: moon)
        let blob = blobPath(hash)
        try FileManager.default.createDirectory(atPath: (blob as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: blob))
        try edit(entry) { json in
            json["roots"] = (json["roots"] as? [String] ?? []) + [path]
            let file: [String: Any] = ["path": path, "kind": "file", "mode": 493, "hash": hash, "size": text.utf8.count]
            json["files"] = (json["files"] as? [[String: Any]] ?? []) + [file]
        }
    }

    static func edit(_ entry: String, _ change: (inout [String: Any]) -> Void) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: entry))
        var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        change(&json)
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: entry))
    }

    func checkout() throws -> Moon {
        let moon = try Moon(graph: Self.graph)
        try moon.write("in.txt", "source\n")
        try moon.makeDirectory(".git/hooks")
        return moon
    }

    /// The local entry edited to write another file: a miss, a warning
    /// naming the node, the node runs, and the file is not written.
    @Test(arguments: foreign)
    func aLocalEntryThatWritesBeyondGeneratesIsRefused(path: String) throws {
        let moon = try checkout()
        #expect(try moon.run(["run"]).status == 0)
        let entry = try Self.entryFile(in: moon.path(".cache/v1/ac"))
        try Self.poison(entry, adding: path, text: "#!/bin/sh\necho owned\n", in: moon) {
            moon.path(".cache/v1/cas/" + $0.prefix(2) + "/" + $0)
        }
        try FileManager.default.removeItem(atPath: moon.path("g.txt"))
        let before = moon.read(path)
        // Nor does `moon status` promise a restore.
        let status = try moon.run(["status"])
        #expect(status.stdout.contains("output missing") && !status.stdout.contains("restored from the cache"), "\(status.stdout)")
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.outcome("gen") == "ran")
        #expect(moon.read(path) == before, "the entry wrote \(path)")
        #expect(moon.read("g.txt") == "source\n")
        #expect(result.stderr.contains("node 'gen'") && result.stderr.contains("'\(path)'"), "\(result.stderr)")
        #expect(result.stderr.contains("generates"), "\(result.stderr)")
    }

    /// A server's entry edited to write an
    /// executable `.git/hooks/pre-commit`; a fresh checkout with an empty
    /// local cache refuses it and keeps nothing of it.
    @Test(.enabled(if: Nginx.binary != nil, "nginx is not installed (make test-deps)"))
    func aRemoteEntryThatWritesAGitHookIsRefused() throws {
        let server = try Nginx()
        let first = try checkout()
        let url = server.url.replacingOccurrences(of: "/cache", with: "/evil")
        #expect(try first.run(["run", "--remote-cache", url]).status == 0)
        let entry = try Self.entryFile(in: server.directory.path("data/evil/ac"))
        try Self.poison(entry, adding: ".git/hooks/pre-commit", text: "#!/bin/sh\necho owned\n", in: first) {
            server.directory.path("data/evil/cas/" + $0)
        }
        let second = try checkout()
        let result = try second.run(["run", "--json", "--remote-cache", url])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.outcome("gen") == "ran")
        #expect(!FileManager.default.fileExists(atPath: second.path(".git/hooks/pre-commit")))
        #expect(result.stderr.contains("node 'gen'") && result.stderr.contains("'.git/hooks/pre-commit'"), "\(result.stderr)")
        // Nor is the refused entry kept in the local cache.
        let local = (try? FileManager.default.contentsOfDirectory(atPath: second.path(".cache/v1/ac"))) ?? []
        let kept = try local.map { try String(contentsOfFile: second.path(".cache/v1/ac/" + $0), encoding: .utf8) }
        #expect(!kept.contains { $0.contains("pre-commit") })
    }

    /// An entry whose size disagrees with its blob is refused before anything is written.
    @Test func anEntryWhoseSizeDisagreesWithItsBlobIsRefused() throws {
        let moon = try checkout()
        #expect(try moon.run(["run"]).status == 0)
        let entry = try Self.entryFile(in: moon.path(".cache/v1/ac"))
        try Self.edit(entry) { json in
            json["files"] = (json["files"] as? [[String: Any]] ?? []).map { var f = $0; f["size"] = 999_999; return f }
        }
        try FileManager.default.removeItem(atPath: moon.path("g.txt"))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.outcome("gen") == "ran", "\(result.stderr)")
        #expect(result.stderr.contains("size"), "\(result.stderr)")
        #expect(moon.read("g.txt") == "source\n")
    }

    /// Only permission bits are restored: an entry that asks for setuid,
    /// setgid or sticky bits gets the file without them.
    @Test func aRestoreSetsNoSetuidBit() throws {
        let moon = try checkout()
        #expect(try moon.run(["run"]).status == 0)
        let entry = try Self.entryFile(in: moon.path(".cache/v1/ac"))
        try Self.edit(entry) { json in
            json["files"] = (json["files"] as? [[String: Any]] ?? []).map { var f = $0; f["mode"] = 0o7755; return f }
        }
        try FileManager.default.removeItem(atPath: moon.path("g.txt"))
        let result = try moon.run(["run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.outcome("gen") == "cache-hit", "\(result.stderr)")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: moon.path("g.txt"))[.posixPermissions] as? Int)
        #expect(mode == 0o755, "mode \(String(mode, radix: 8))")
    }

    /// A wildcard pattern allows the files it matches, not a hidden file
    /// beside them nor a directory below them; a plain path allows its
    /// whole tree.
    @Test func wildcardsAllowOnlyTheFilesTheyMatch() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              gen:
                sources: [in.txt]
                generates: ["out/*.txt", dist]
                run: mkdir -p out dist/sub && cp in.txt out/a.txt && cp in.txt dist/sub/b.txt
            """)
        try moon.write("in.txt", "source\n")
        #expect(try moon.run(["run"]).status == 0)
        let entry = try Self.entryFile(in: moon.path(".cache/v1/ac"))
        let original = try Data(contentsOf: URL(fileURLWithPath: entry))
        for path in ["out/.hidden.txt", "out/a.txt/inner", "out/x.bin", "dist2/x"] {
            try original.write(to: URL(fileURLWithPath: entry))
            try Self.poison(entry, adding: path, text: "evil\n", in: moon) {
                moon.path(".cache/v1/cas/" + $0.prefix(2) + "/" + $0)
            }
            try? FileManager.default.removeItem(atPath: moon.path("out"))
            let result = try moon.run(["run", "--json"])
            #expect(result.outcome("gen") == "ran", "\(path): \(result.stderr)")
            #expect(result.stderr.contains("'\(path)'"), "\(path): \(result.stderr)")
        }
        // The untouched entry restores, a tree below a plain path included.
        try original.write(to: URL(fileURLWithPath: entry))
        try FileManager.default.removeItem(atPath: moon.path("out"))
        try FileManager.default.removeItem(atPath: moon.path("dist"))
        let clean = try moon.run(["run", "--json"])
        #expect(clean.outcome("gen") == "cache-hit", "\(clean.stderr)")
        #expect(moon.read("dist/sub/b.txt") == "source\n")
    }
}
