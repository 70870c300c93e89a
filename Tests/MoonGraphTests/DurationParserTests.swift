import Testing
@testable import MoonGraph

@Suite struct DurationParserTests {
    @Test(arguments: [
        ("250ms", Duration.milliseconds(250)), ("2s", .seconds(2)), ("1m30s", .seconds(90)), ("1h", .seconds(3600)),
        ("30", .seconds(30)), ("0.5", .milliseconds(500)), ("1.5s", .milliseconds(1500)), ("1h2m3s4ms", .milliseconds(3_723_004)),
        ("0s", .zero), (" 2s ", .seconds(2)),
    ])
    func parses(text: String, expected: Duration) throws {
        #expect(try DurationParser.parse(text) == expected)
    }

    @Test(arguments: ["", "s", "2x", "2 s", "-1s", "1.s", ".5s", "1m30", "1e3", "ms", "2s3", "999999999999h"])
    func rejects(text: String) {
        #expect(throws: DurationParser.ParseError.self) { try DurationParser.parse(text) }
    }

    @Test func errorSaysTheAcceptedForms() {
        #expect(DurationParser.ParseError(text: "soon").description
            == "invalid duration 'soon'; write a duration like 250ms, 2s, 1.5s, 1m30s, 1h, or a number of seconds")
    }

    @Test(arguments: [
        (Duration.milliseconds(250), "250ms"), (.seconds(2), "2s"), (.seconds(90), "1m30s"), (.seconds(3600), "1h"),
        (.milliseconds(1500), "1.5s"), (.zero, "0s"), (.milliseconds(90_500), "1m30.5s"), (.seconds(7200 + 5), "2h5s"),
    ])
    func formats(duration: Duration, expected: String) throws {
        #expect(DurationParser.format(duration) == expected)
        #expect(try DurationParser.parse(expected) == duration)
    }
}
