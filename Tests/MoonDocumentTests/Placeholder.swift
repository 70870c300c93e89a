import Testing

@Test func MoonDocumentTestsPlaceholder() {}
