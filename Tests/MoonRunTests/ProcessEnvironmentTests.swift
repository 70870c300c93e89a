import Foundation
import Testing
@testable import MoonRun

/// moon's environment read from `environ` is what Foundation reads.
@Suite struct ProcessEnvironmentTests {
    @Test func itIsWhatProcessInfoReads() {
        setenv("MOON_TEST_EQUALS", "a=b=c", 1)
        setenv("MOON_TEST_EMPTY", "", 1)
        let read = NodeEnvironment.processEnvironment()
        #expect(read == ProcessInfo.processInfo.environment)
        #expect(read["MOON_TEST_EQUALS"] == "a=b=c")
        #expect(read["MOON_TEST_EMPTY"] == "")
    }
}
