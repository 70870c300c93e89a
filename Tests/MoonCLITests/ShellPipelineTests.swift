import Foundation
import Testing

/// What a failing pipeline stage does (docs/decisions.md, "sh without
/// pipefail"): under the default `sh -e` a pipeline's status is its last
/// command's, as the docs say; `shell: bash` runs with pipefail, so a
/// failing first stage (`zcat missing.gz | …`) fails the node.
@Suite struct ShellPipelineTests {
    @Test(arguments: [("sh", 0), ("bash", 1)])
    func aFailingFirstStage(_ shell: String, _ status: Int32) throws {
        let moon = try Moon(graph: """
            version: 1
            defaults:
              shell: \(shell)
            nodes:
              text:
                run: zcat missing.gz | cat > out.txt
            """)
        let result = try moon.run(["run"])
        #expect(result.status == status, "\(shell): \(result.stderr)")
    }
}
