import Testing
@testable import MoonGraph

@Suite struct SuggestionTests {
    @Test func suggestsCloseWords() {
        #expect(Suggestion.closest(to: "biuld", in: ["test", "build"]) == "build")
        #expect(Suggestion.closest(to: "nodez", in: ["name", "nodes"]) == "nodes")
        #expect(Suggestion.closest(to: "Build", in: ["build"]) == "build")
        #expect(Suggestion.closest(to: "duratoin", in: ["duration"]) == "duration")
        #expect(Suggestion.closest(to: "rn", in: ["run", "uses"]) == "run")
    }

    @Test func staysQuietWhenNothingIsClose() {
        #expect(Suggestion.closest(to: "deploy", in: ["build", "test"]) == nil)
        #expect(Suggestion.closest(to: "zzz", in: [String]()) == nil)
        #expect(Suggestion.closest(to: "build", in: ["build"]) == nil, "never suggests the word itself")
    }

    @Test func distanceCountsATranspositionAsOne() {
        func d(_ a: String, _ b: String) -> Int? { Suggestion.distance(Array(a.unicodeScalars), Array(b.unicodeScalars), limit: 10) }
        #expect(d("ab", "ba") == 1)
        #expect(d("kitten", "sitting") == 3)
        #expect(d("", "abc") == 3)
        #expect(Suggestion.distance(Array("abcdef".unicodeScalars), Array("uvwxyz".unicodeScalars), limit: 2) == nil)
    }
}
