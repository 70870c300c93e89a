import Testing

@Test func MoonProcessTestsPlaceholder() {}
