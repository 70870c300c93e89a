import Testing

@Test func MoonCLITestsPlaceholder() {}
