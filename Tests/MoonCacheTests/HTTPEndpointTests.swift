import Foundation
import Testing
@testable import MoonCache

/// How a remote cache URL is taken apart, and how it is printed.
@Suite struct HTTPEndpointTests {
    @Test func aURLIsTakenApart() throws {
        let endpoint = try HTTPClient.Endpoint(parsing: "Http://Cache.Local:8080/moon/")
        #expect(endpoint.host == "Cache.Local" && endpoint.port == 8080 && endpoint.path == "/moon")
        #expect(endpoint.authority == "Cache.Local:8080" && endpoint.basicAuthorization == nil)
        let bare = try HTTPClient.Endpoint(parsing: "http://h")
        #expect(bare.port == 80 && bare.path == "")
    }

    @Test func anHTTPSURLIsSecureOnPort443ByDefault() throws {
        let endpoint = try HTTPClient.Endpoint(parsing: "HTTPS://cache.example/moon")
        #expect(endpoint.secure && endpoint.port == 443 && endpoint.path == "/moon")
        #expect(try HTTPClient.Endpoint(parsing: "https://127.0.0.1:8443").port == 8443)
        #expect(try !HTTPClient.Endpoint(parsing: "http://h").secure)
    }

    @Test func anIPv6LiteralIsBracketedInTheHostHeaderOnly() throws {
        let endpoint = try HTTPClient.Endpoint(parsing: "http://[::1]:18931/x")
        #expect(endpoint.host == "::1" && endpoint.authority == "[::1]:18931")
        #expect(try HTTPClient.Endpoint(parsing: "http://[fe80::1]/").port == 80)
    }

    @Test func aPathIsPercentEncodedOnce() throws {
        #expect(try HTTPClient.Endpoint(parsing: "http://h/my cache/é%20x%zz").path == "/my%20cache/%C3%A9%20x%25zz")
    }

    @Test func userAndPasswordBecomeBasicAuth() throws {
        let endpoint = try HTTPClient.Endpoint(parsing: "http://us%40er:p%3Ass@h:1/x")
        #expect(endpoint.basicAuthorization == "Basic " + Data("us@er:p:ss".utf8).base64EncodedString())
        #expect(try HTTPClient.Endpoint(parsing: "http://user@h/x").basicAuthorization == "Basic " + Data("user:".utf8).base64EncodedString())
    }

    @Test(arguments: ["http://h:65536/x", "http://h:-1/x", "http://h:1x/x", "http://h:0/x", "http://h/x?a", "http://h/x#b",
                      "http://:80/x", "http://[]/x", "http://[::1]x/x", "http://::1/x", "http://h h/x", "h:80/x", "ftp://h/x"])
    func aURLMoonCannotUseIsRefused(url: String) {
        #expect(throws: HTTPClient.Endpoint.Invalid.self) { try HTTPClient.Endpoint(parsing: url) }
    }

    @Test func aPasswordIsNeverPrinted() {
        #expect(HTTPClient.Endpoint.redacted("http://user:pa55word@h:1/x") == "http://user:***@h:1/x")
        #expect(HTTPClient.Endpoint.redacted("http://t0ken@h/x") == "http://***@h/x")
        #expect(HTTPClient.Endpoint.redacted("HTTPS://u:p@h?q=a@b") == "HTTPS://u:***@h?…")
        #expect(HTTPClient.Endpoint.redacted("http://h/x#token=abc") == "http://h/x#…")
        #expect(HTTPClient.Endpoint.redacted("http://h/a@b") == "http://h/a@b")
    }

    @Test func aTokenWithAControlCharacterIsRefused() throws {
        let endpoint = try HTTPClient.Endpoint(parsing: "http://h/x")
        #expect(throws: HTTPClient.Endpoint.Invalid.self) { try HTTPClient(endpoint: endpoint, token: "a\r\nb") }
        #expect(throws: HTTPClient.Endpoint.Invalid.self) {
            try HTTPClient(endpoint: HTTPClient.Endpoint(parsing: "http://u:p@h/x"), token: "t")
        }
    }
}
