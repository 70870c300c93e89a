import MoonDocument
import Testing
@testable import MoonGraph

/// `Node` is a value: its rarely set fields live in a box shared between
/// copies, and writing one through a copy leaves every other copy as it was.
@Suite struct NodeTests {
    static let span = SourceSpan.wholeFile("g.yaml")

    @Test func aCopysRareFieldsAreItsOwn() {
        var original = Node(name: "obj", nameSpan: Self.span, description: "compiles", action: .shell("cc"),
                            slurm: SlurmOptions(partition: "gpu"))
        var copy = original
        copy.instance = NodeInstance(template: "obj", label: "a.c", item: "a.c")
        copy.params = [NodeParameter(name: "level", defaultValue: "2", required: false, span: Self.span)]
        copy.description = nil
        copy.isInternal = true
        copy.namespace = "lib:"
        copy.vars = Variables()
        copy.arguments = NodeArguments(args: ["-v"])
        copy.fanOut = DynamicFanOut(need: 0, key: "files")
        copy.slurm.partition = "cpu"
        #expect(original.instance == nil && original.params.isEmpty && original.description == "compiles")
        #expect(!original.isInternal && original.namespace == "" && original.vars == nil && original.arguments.isEmpty)
        #expect(original.fanOut == nil && original.slurm.partition == "gpu")
        #expect(copy.instance?.name == "obj[a.c]" && copy.params.map(\.name) == ["level"] && copy.description == nil)
        #expect(copy.isInternal && copy.namespace == "lib:" && copy.vars != nil && copy.arguments.args == ["-v"])
        #expect(copy.fanOut?.key == "files" && copy.slurm.partition == "cpu")
        original.slurm = SlurmOptions()
        #expect(original.slurm.isEmpty && copy.slurm.partition == "cpu")
    }
}
