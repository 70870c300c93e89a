import Testing

@Test func MoonRunTestsPlaceholder() {}
