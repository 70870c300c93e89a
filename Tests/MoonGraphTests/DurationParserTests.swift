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
        (.milliseconds(1500), "1.5s"), (.zero, "0s"), (.milliseconds(90_500), "1m30.5s"), (.seconds(7200 + 5), "2h00m05s"),
        (.seconds(65), "1m05s"), (.seconds(120), "2m"), (.seconds(5400), "1h30m"), (.microseconds(500), "0.0005s"),
        (.milliseconds(12_250), "12.25s"), (.seconds(-2), "-2s"),
    ])
    func formats(duration: Duration, expected: String) throws {
        #expect(DurationText.format(duration) == expected)
        if duration >= .zero { #expect(try DurationParser.parse(expected) == duration) }
    }

    /// A measured duration is rounded down in the same style, and reads
    /// back too (to its precision): the summary, the live view and history.
    @Test(arguments: [
        (12, "12ms", "0.0s"), (999, "999ms", "0.9s"), (2_000, "2.0s", "2.0s"), (59_999, "59.9s", "59.9s"),
        (123_456, "2m03s", "2m03s"), (3_723_000, "1h02m", "1h02m"), (-5, "0ms", "0.0s"),
    ])
    func measuredDurationsShareTheStyle(ms: Int, measured: String, ticking: String) throws {
        #expect(DurationText.format(.milliseconds(ms), .measured) == measured)
        #expect(DurationText.format(.milliseconds(ms), .ticking) == ticking)
        let back = try DurationParser.parse(measured)
        #expect(back <= .milliseconds(max(0, ms)) && back > .milliseconds(ms) - .seconds(60))
    }
}
