import Foundation
import MoonProcess
import Testing

@Suite struct ProcessEnvironmentSetTests {
    /// Setting 200,000 variables over a base is linear: a quadratic set
    /// took minutes.
    @Test func settingManyVariablesIsLinear() {
        var environment = ProcessEnvironment(base: ProcessEnvironment.Base(["PATH": "/bin", "MOON_EXPR_7": "base"]))
        environment.set("A", "1")
        let started = Date()
        environment.set(contentsOf: (1...200_000).lazy.map { ("MOON_EXPR_\($0)", String($0)) })
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(environment.overrides.count == 200_001)
        #expect(environment["MOON_EXPR_7"] == "7")
        #expect(environment["A"] == "1")
    }
}
