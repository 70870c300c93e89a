import Testing

@Test func MoonCommandTestsPlaceholder() {}
