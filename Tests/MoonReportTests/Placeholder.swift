import Testing

@Test func MoonReportTestsPlaceholder() {}
