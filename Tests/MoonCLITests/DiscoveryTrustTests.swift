import Foundation
import Testing

/// A graph file moon finds by itself (searching upward, and the includes and
/// dotenv files that graph names) is read only when the user running moon
/// (or root) owns it and no other user can change it or its directory; TAB
/// completion then offers nothing. A file named on the command line is read
/// as always. These tests need root (to own files as another user): each
/// creates a user, as the report's reproduction does, and removes it.
@Suite(.serialized) struct DiscoveryTrustTests {
    static let canRun = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")

    /// A user for the test's duration: its name and uid.
    final class OtherUser {
        let name = "mt\(UUID().uuidString.prefix(8).lowercased())"
        let uid: uid_t
        init() throws {
            let add = spawnAndWait("/usr/sbin/useradd", ["-M", "-d", "/nonexistent", "-s", "/usr/sbin/nologin", name])
            guard add.status == 0, let entry = getpwnam(name) else { throw CocoaError(.featureUnsupported) }
            uid = entry.pointee.pw_uid
        }
        deinit { spawnAndWait("/usr/sbin/userdel", [name]) }

        /// `path` given to this user.
        func own(_ path: String) {
            #expect(chown(path, uid, uid) == 0, "chown \(path)")
        }

        /// `path` kept root's, in this user's group (`useradd` makes one of
        /// the same id): group write is then this user's write.
        func shareGroup(_ path: String) {
            #expect(chown(path, 0, uid) == 0, "chgrp \(path)")
        }
    }

    static let marking = """
        version: 1
        default: all
        nodes:
          all: { run: "touch RAN" }
          t: { for-each: ["x$(touch TAB_RAN)"], run: "true" }
        """

    static func completion(_ moon: Moon, in directory: String) throws -> Moon.Result {
        try moon.run(["---completion", "run", "--", "positional@0", "2", "0", "moon", "run", ""],
                     environment: ["SAP_SHELL": "bash"], in: directory)
    }

    /// The report's case: another user's moon.yaml in a sticky world-writable
    /// directory (a /tmp) above root's work directory is never read, by a run or by TAB.
    @Test(.enabled(if: canRun)) func anotherUsersFileAboveAStickyDirectoryIsNeverRead() throws {
        let other = try OtherUser()
        let moon = try Moon()
        let shared = moon.path("shared")
        try FileManager.default.createDirectory(atPath: shared + "/job/build", withIntermediateDirectories: true)
        chmod(shared, 0o1777)
        try moon.write("shared/moon.yaml", Self.marking)
        other.own(shared + "/moon.yaml")
        let plain = try moon.run([], in: "shared/job/build")
        #expect(plain.status == 0 && plain.stdout.contains("USAGE"), "\(plain.stdout)\(plain.stderr)")
        let run = try moon.run(["run"], in: "shared/job/build")
        #expect(run.status == 2 && run.stderr.contains("no moon.yaml or moon.yml"), "\(run.stderr)")
        let tab = try Self.completion(moon, in: "shared/job/build")
        #expect(tab.status == 0 && tab.stdout.isEmpty && tab.stderr.isEmpty, "\(tab.stdout)\(tab.stderr)")
        #expect(!FileManager.default.fileExists(atPath: shared + "/RAN") && !FileManager.default.fileExists(atPath: shared + "/TAB_RAN"))
    }

    /// The file found is another user's, or root's but writable by group or
    /// others, or in a directory others can write: an error that names the
    /// file and why, and how to read it on purpose, which then works.
    @Test(.enabled(if: canRun)) func aFileOthersOwnOrCanChangeIsAnErrorThatSaysHowToReadItOnPurpose() throws {
        let other = try OtherUser()
        func project(_ change: (Moon) -> Void) throws -> Moon {
            let moon = try Moon(graph: Self.marking)
            try moon.makeDirectory("sub")
            change(moon)
            return moon
        }
        let cases: [(String, (Moon) -> Void, String)] = [
            ("owned by another user", { other.own($0.path("moon.yaml")) }, "is owned by \(other.name) (uid \(other.uid)), not by root"),
            ("group-writable", { other.shareGroup($0.path("moon.yaml")); chmod($0.path("moon.yaml"), 0o664) }, "can be written by users other than its owner (mode 0664)"),
            ("world-writable", { chmod($0.path("moon.yaml"), 0o646) }, "can be written by users other than its owner (mode 0646)"),
            ("in a world-writable directory", { chmod($0.directory.path, 0o777) }, "its directory . can be written by users other than its owner (mode 0777)"),
            ("in another user's directory", { other.own($0.directory.path) }, "is owned by \(other.name)"),
        ]
        for (name, change, why) in cases {
            let moon = try project(change)
            // From the graph's own directory, and from below it (where a directory others can write ends the search first).
            let directoryCase = name.hasPrefix("in ")
            for (directory, path) in [(".", "moon.yaml")] + (directoryCase ? [] : [("sub", "../moon.yaml")]) {
                let run = try moon.run(["run"], in: directory)
                #expect(run.status == 2, "\(name): \(run.stdout)")
                #expect(run.stderr.contains("moon found \(path) by searching upward and does not read it"), "\(name): \(run.stderr)")
                #expect(run.stderr.contains(why), "\(name): \(run.stderr)")
                #expect(run.stderr.contains("moon run \(path)"), "\(name): \(run.stderr)")
                for command in [[], ["check"], ["list"], ["status"]] {
                    let other = try moon.run(command, in: directory)
                    #expect(other.status == 2 && other.stderr.contains("does not read it"), "\(name) \(command): \(other.stderr)")
                }
                let tab = try Self.completion(moon, in: directory)
                #expect(tab.status == 0 && tab.stdout.isEmpty && tab.stderr.isEmpty, "\(name): \(tab.stdout)\(tab.stderr)")
            }
            #expect(moon.read("RAN") == nil && moon.read("TAB_RAN") == nil, "\(name)")
            // Named on purpose, it runs.
            let named = try moon.run(["run", "../moon.yaml", "all"], in: "sub")
            #expect(named.status == 0, "\(name): \(named.stderr)")
            #expect(moon.read("RAN") != nil, "\(name)")
        }
    }

    /// A umask of 002 makes files writable by the owner's private group
    /// (its primary group, with no other member): they stay the owner's,
    /// and the graph found is read.
    @Test(.enabled(if: canRun)) func writableByTheOwnersPrivateGroupIsStillTheOwners() throws {
        let moon = try Moon(graph: Self.marking)
        try moon.makeDirectory("sub")
        let root = try #require(getpwuid(0))
        let privateGroup = root.pointee.pw_gid
        for path in [moon.path("moon.yaml"), moon.directory.path, moon.path("sub")] {
            #expect(chown(path, 0, privateGroup) == 0)
        }
        chmod(moon.path("moon.yaml"), 0o664)
        chmod(moon.directory.path, 0o775)
        chmod(moon.path("sub"), 0o775)
        let run = try moon.run(["run", "all"], in: "sub")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(moon.read("RAN") != nil)
    }

    /// A directory above that users other than its owner can write (sticky
    /// or not) ends the search, as one owned by another user does.
    @Test(.enabled(if: canRun)) func theSearchStopsAtADirectoryOthersCanWrite() throws {
        let other = try OtherUser()
        for mode: mode_t in [0o775, 0o777, 0o1777] {
            let moon = try Moon(graph: Self.marking)
            try moon.makeDirectory("sub/deeper")
            other.shareGroup(moon.directory.path)
            chmod(moon.directory.path, mode)
            let run = try moon.run(["run", "all"], in: "sub/deeper")
            #expect(run.status == 2 && run.stderr.contains("no moon.yaml or moon.yml"), "\(String(mode, radix: 8)): \(run.stderr)")
            #expect(moon.read("RAN") == nil)
        }
    }

    /// The includes and dotenv files of a found graph follow the same rule;
    /// the same graph named on the command line reads them.
    @Test(.enabled(if: canRun)) func includesAndDotenvFilesOfAFoundGraphFollowTheSameRule() throws {
        let other = try OtherUser()
        let cases: [(String, String, (Moon) -> Void)] = [
            ("include owned by another user", "includes: { lib: lib/lib.yaml }\n", { other.own($0.path("lib/lib.yaml")) }),
            ("include writable by others", "includes: { lib: lib/lib.yaml }\n", { chmod($0.path("lib/lib.yaml"), 0o666) }),
            ("include in a directory others can write", "includes: { lib: lib/lib.yaml }\n", { chmod($0.path("lib"), 0o777) }),
            ("dotenv owned by another user", "dotenv: [lib/.env]\n", { other.own($0.path("lib/.env")) }),
            ("dotenv writable by the group", "dotenv: [lib/.env]\n", { other.shareGroup($0.path("lib/.env")); chmod($0.path("lib/.env"), 0o664) }),
        ]
        for (name, line, change) in cases {
            let moon = try Moon(graph: "version: 1\n" + line + "nodes:\n  all: { run: \"touch RAN\" }\n  t: { for-each: [\"x$(touch TAB_RAN)\"], run: \"true\" }\n")
            try moon.makeDirectory("lib")
            try moon.write("lib/lib.yaml", "version: 1\nnodes:\n  evil: { run: \"touch EVIL\" }\n")
            try moon.write("lib/.env", "GREETING=hi\n")
            change(moon)
            let run = try moon.run(["run", "all"])
            #expect(run.status == 2, "\(name): \(run.stdout)")
            #expect(run.stderr.contains("moon found the graph file by searching"), "\(name): \(run.stderr)")
            let tab = try Self.completion(moon, in: ".")
            #expect(tab.status == 0 && tab.stdout.isEmpty, "\(name): \(tab.stdout)")
            #expect(moon.read("RAN") == nil && moon.read("TAB_RAN") == nil && moon.read("EVIL") == nil, "\(name)")
            let named = try moon.run(["run", "moon.yaml", "all"])
            #expect(named.status == 0 && moon.read("RAN") != nil, "\(name): \(named.stderr)")
        }
    }
}
