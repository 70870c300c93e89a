import Foundation
import Testing

/// The edges of a restore's shortcuts: a file's mode is set on the open
/// file only when the umask took bits of it, a file or link replaces the
/// old output with a rename alone (a directory in its place is moved aside
/// first), and a blob is read to its size, its trailing zeros left a hole.
@Suite struct RestoreShortcutTests {
    /// Each output comes back with the entry's mode whatever the umask of
    /// the moon that restores it: one the umask leaves alone, one it would
    /// take bits of, one it would leave without any.
    @Test(arguments: ["000", "022", "027", "077"])
    func aRestoredFileHasItsModeWhateverTheUmask(_ umask: String) throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              make:
                sources: [src.txt]
                generates: [shared.txt, tool.sh, private.txt]
                run: |
                  cp src.txt shared.txt && chmod 666 shared.txt
                  printf '#!/bin/sh\\necho tool\\n' > tool.sh && chmod 777 tool.sh
                  cp src.txt private.txt && chmod 640 private.txt
            """)
        try moon.write("src.txt", "x\n")
        let first = try moon.run(["run"])
        #expect(first.status == 0, "\(first.stderr)")
        for name in ["shared.txt", "tool.sh", "private.txt", ".moon"] { try FileManager.default.removeItem(atPath: moon.path(name)) }
        let restored = try shell("umask \(umask) && \"$MOON\" run --json", in: moon)
        #expect(restored.outcome("make") == "cache-hit", "\(restored.stdout)\(restored.stderr)")
        for (name, mode) in [("shared.txt", 0o666), ("tool.sh", 0o777), ("private.txt", 0o640)] {
            let attributes = try FileManager.default.attributesOfItem(atPath: moon.path(name))
            let found = attributes[.posixPermissions] as? Int
            #expect(found == mode, "\(name) under umask \(umask): \(found.map { String($0, radix: 8) } ?? "none")")
        }
        #expect(moon.read("shared.txt") == "x\n")
    }

    /// One output that is a file, a directory or a link by its source:
    /// each restored over each of the others, so the rename alone (a file
    /// or link over a file or link) and the move aside (a directory on
    /// either side) both run, and nothing temporary is left.
    @Test func anOutputOfEachKindIsRestoredOverEachOther() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              out:
                sources: [kind.txt]
                generates: [out]
                run: |
                  rm -rf out
                  case $(cat kind.txt) in
                    file) echo file > out ;;
                    dir) mkdir out && echo dir > out/inside.txt ;;
                    link) ln -s kind.txt out ;;
                  esac
            """)
        let kinds = ["file", "dir", "link"]
        for kind in kinds {
            try moon.write("kind.txt", kind + "\n")
            let ran = try moon.run(["run", "--json"])
            #expect(ran.outcome("out") == "ran", "\(ran.stdout)\(ran.stderr)")
        }
        let fm = FileManager.default
        for kind in ["file", "link", "dir", "file", "dir", "link", "file"] {
            try moon.write("kind.txt", kind + "\n")
            let restored = try moon.run(["run", "--json"])
            #expect(restored.outcome("out") == "cache-hit", "\(kind): \(restored.stdout)\(restored.stderr)")
            let type = try fm.attributesOfItem(atPath: moon.path("out"))[.type] as? FileAttributeType
            switch kind {
            case "file":
                #expect(type == .typeRegular && moon.read("out") == "file\n", "file: \(String(describing: type))")
            case "dir":
                #expect(type == .typeDirectory && moon.read("out/inside.txt") == "dir\n", "dir: \(String(describing: type))")
            default:
                #expect(type == .typeSymbolicLink, "link: \(String(describing: type))")
                #expect(try fm.destinationOfSymbolicLink(atPath: moon.path("out")) == "kind.txt")
            }
        }
        let left = try fm.contentsOfDirectory(atPath: moon.directory.path).filter { $0.hasPrefix(".moon-restore") }
        #expect(left.isEmpty, "\(left)")
    }

    /// Outputs that end in zeros (past a block, within one, all zeros) and
    /// one that ends exactly at a block's end come back byte for byte at
    /// their size.
    @Test func anOutputEndingInZerosComesBackAtItsSize() throws {
        let moon = try Moon(graph: """
            version: 1
            nodes:
              make:
                sources: [src.txt]
                generates: [tail.bin, short.bin, zeros.bin, block.bin]
                run: |
                  { cat src.txt; head -c 200000 /dev/zero; } > tail.bin
                  { cat src.txt; head -c 10 /dev/zero; } > short.bin
                  head -c 131072 /dev/zero > zeros.bin
                  head -c 65536 /dev/urandom > block.bin
            """)
        try moon.write("src.txt", "data\n")
        #expect(try moon.run(["run"]).status == 0)
        for name in ["tail.bin", "short.bin", "zeros.bin", "block.bin"] {
            try FileManager.default.moveItem(atPath: moon.path(name), toPath: moon.path(name + ".ran"))
        }
        let restored = try moon.run(["run", "--json"])
        #expect(restored.outcome("make") == "cache-hit", "\(restored.stdout)\(restored.stderr)")
        for name in ["tail.bin", "short.bin", "zeros.bin", "block.bin"] {
            let ran = FileManager.default.contents(atPath: moon.path(name + ".ran"))
            let back = FileManager.default.contents(atPath: moon.path(name))
            #expect(ran != nil && ran == back, "\(name): \(ran?.count ?? -1) bytes ran, \(back?.count ?? -1) restored")
        }
    }
}
