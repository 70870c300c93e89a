import MoonDocument
import Testing
@testable import MoonGraph

/// `slurm: { time: … }` takes Slurm's own forms and moon's durations.
@Suite struct SlurmTimeTests {
    func time(_ value: String) -> (String?, [String]) {
        let text = """
            version: 1
            queues:
              cluster: { executor: slurm, slurm: { time: \(value) } }
            nodes:
              a: { queue: cluster, run: "true" }
            """
        let result = GraphLoader.load(SourceFile(path: "g.yaml", text: text))
        return (result.graph?.queues.first { $0.name == "cluster" }?.slurm?.time, result.errors.map(\.message))
    }

    @Test func moonDurationsBecomeSlurmClockTimes() {
        #expect(time("30m").0 == "00:30:00")
        #expect(time("1h30m").0 == "01:30:00")
        #expect(time("90s").0 == "00:01:30")
        #expect(time("25h").0 == "1-01:00:00")
    }

    @Test func slurmFormsPassThrough() {
        #expect(time("30").0 == "30", "a bare number is Slurm's minutes")
        #expect(time("\"1:00:00\"").0 == "1:00:00")
        #expect(time("2-00:00:00").0 == "2-00:00:00")
    }

    @Test func nonsenseIsAnError() {
        let (value, errors) = time("soon")
        #expect(value == nil)
        #expect(errors.first?.contains("invalid time 'soon'") == true)
    }
}
