import Foundation
import Testing

/// After a header edit, the local cache still holds each object's entry
/// under its key (the key leaves out what the depfile lists), made with the
/// old header. Such an entry is declined on the event loop: the run's checks
/// stay there, and no check thread (`moon.check`) is started for them.
@Suite struct HeaderEditCheckTests {
    static let objects = ["a", "b", "c", "d", "e", "f"]

    static var graph: String {
        var text = "version: 1\nnodes:\n"
        for name in objects {
            text += """
              \(name).o:
                sources: [src/\(name).c]
                generates: [out/\(name).o]
                depfile: out/\(name).d
                run: |
                  mkdir -p out && printf 'out/\(name).o: src/\(name).c include/h.h\\n' > out/\(name).d && cat src/\(name).c include/h.h > out/\(name).o && cat /proc/$PPID/task/*/comm >> threads.txt

            """
        }
        return text
    }

    @Test func aHeaderEditsChecksStayOnTheLoop() throws {
        let moon = try Moon(graph: Self.graph)
        try moon.makeDirectory("src")
        try moon.makeDirectory("include")
        for name in Self.objects { try moon.write("src/\(name).c", "int \(name);\n") }
        try moon.write("include/h.h", "#define H 1\n")
        #expect(try moon.run(["run", "-j", "2"]).status == 0)
        try FileManager.default.removeItem(atPath: moon.path("threads.txt"))

        try moon.write("include/h.h", "#define H 2\n")
        let edit = try moon.run(["run", "-j", "2", "--json"])
        #expect(edit.status == 0, "\(edit.stderr)")
        // Every object ran again, with the new header, none restored from the old entry.
        #expect(edit.stdout.components(separatedBy: "\"event\":\"complete\"").count - 1 == Self.objects.count, "\(edit.stdout)")
        for name in Self.objects { #expect(moon.read("out/\(name).o") == "int \(name);\n#define H 2\n") }
        // The threads of moon each node saw: none was checking nodes off the loop.
        let threads = try #require(moon.read("threads.txt"))
        #expect(!threads.contains("moon.check"), "\(threads)")
    }
}
