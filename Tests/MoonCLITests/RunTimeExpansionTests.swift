import Foundation
import Testing

/// What a node's strings become as it starts is bounded too: a var just
/// under its own cap, read twenty times in one argument, fails the node
/// with a message instead of building hundreds of megabytes.
@Suite struct RunTimeExpansionTests {
    @Test func aLongVarReadManyTimesFailsTheNode() throws {
        let doubling = (1...10).map { "  v\($0): \"${{ vars.v\($0 - 1) }}${{ vars.v\($0 - 1) }}\"" }.joined(separator: "\n")
        let twenty = String(repeating: "${{ vars.v10 }}", count: 20)
        let moon = try Moon(graph: """
            version: 1
            vars:
              v0: "\(String(repeating: "x", count: 1000))"
            \(doubling)
            nodes:
              big:
                run: [echo, "\(twenty)"]
              small:
                run: [echo, "${{ vars.v1 }}"]
            """)
        let result = try moon.run(["run", "--output", "plain"], limit: 60)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("would be longer than 16 MiB with its values put in"), "\(result.stdout.prefix(3000))")
        #expect(result.stdout.contains("1 failed"), "\(result.stdout.suffix(500))")
    }
}
