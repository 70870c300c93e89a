import Testing

@Test func MoonGraphTestsPlaceholder() {}
