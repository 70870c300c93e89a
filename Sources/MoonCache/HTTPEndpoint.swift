import Foundation

extension HTTPClient {
    /// A remote cache's `http[s]://[USER:PASSWORD@]HOST[:PORT][/PATH]` URL,
    /// checked and taken apart once, before any request: the scheme in any
    /// case, a host name, IPv4 address or bracketed IPv6 literal, a port from
    /// 1 to 65535 (default 80, or 443 for https), and a path sent percent-encoded. A user and
    /// password become `Authorization: Basic`. A query or fragment has no
    /// meaning for a cache and is refused rather than sent as part of a path.
    struct Endpoint: Sendable {
        /// The host as `getaddrinfo` takes it (an IPv6 literal without brackets).
        var host: String
        var port: UInt16
        /// `https://`: the connection is TLS (`TLSStream`).
        var secure = false
        /// The base path, percent-encoded, without a trailing slash ("" or "/cache").
        var path: String
        /// The `Authorization` header's value from the URL's user and password.
        var basicAuthorization: String?

        /// What is wrong with a URL, said without its password.
        struct Invalid: Error, CustomStringConvertible {
            var description: String
        }

        /// `HOST:PORT` as the `Host` header and messages write it.
        var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

        init?(_ url: String) {
            guard let endpoint = try? Endpoint(parsing: url) else { return nil }
            self = endpoint
        }

        init(parsing url: String) throws(Invalid) {
            guard let schemeEnd = url.range(of: "://") else {
                throw Invalid(description: "moon takes an http:// or https://HOST[:PORT]/PATH URL")
            }
            switch url[..<schemeEnd.lowerBound].lowercased() {
            case "http": break
            case "https": secure = true
            default: throw Invalid(description: "moon takes an http:// or https://HOST[:PORT]/PATH URL")
            }
            let rest = url[schemeEnd.upperBound...]
            guard !rest.contains("?"), !rest.contains("#") else {
                throw Invalid(description: "a cache URL has no query (?…) or fragment (#…): remove it")
            }
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            var authority = rest[..<slash]
            if let at = authority.lastIndex(of: "@") {
                basicAuthorization = try Self.basic(authority[..<at])
                authority = authority[authority.index(after: at)...]
            }
            (host, port) = try Self.hostAndPort(authority, defaultPort: secure ? 443 : 80)
            var path = rest[slash...]
            while path.hasSuffix("/") { path = path.dropLast() }
            self.path = Self.percentEncoded(path)
        }

        /// The host (an IPv6 literal without its brackets) and port of `HOST[:PORT]`.
        private static func hostAndPort(_ authority: Substring, defaultPort: UInt16) throws(Invalid) -> (String, UInt16) {
            let notIPv6 = Invalid(description: "the host is not a bracketed IPv6 address like [::1]")
            let host: String
            let portText: Substring?
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]"), authority.distance(from: authority.startIndex, to: close) > 1 else { throw notIPv6 }
                host = String(authority[authority.index(after: authority.startIndex)..<close])
                let after = authority[authority.index(after: close)...]
                guard after.isEmpty || after.hasPrefix(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw notIPv6 }
                portText = after.isEmpty ? nil : after.dropFirst()
            } else {
                let colon = authority.lastIndex(of: ":")
                host = String(authority[..<(colon ?? authority.endIndex)])
                portText = colon.map { authority[authority.index(after: $0)...] }
                guard !host.isEmpty else { throw Invalid(description: "the URL names no host") }
                guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") }) else {
                    throw Invalid(description: "the host is not a host name or address (an IPv6 address goes in brackets: [::1])")
                }
            }
            guard let portText, !portText.isEmpty else { return (host, defaultPort) }
            guard portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(portText),
                  (1...65535).contains(number) else {
                throw Invalid(description: "the port is not a number from 1 to 65535")
            }
            return (host, UInt16(number))
        }

        /// `Basic` and the base64 of `user:password`, each part percent-decoded as URLs write them.
        private static func basic(_ userinfo: Substring) throws(Invalid) -> String {
            let colon = userinfo.firstIndex(of: ":")
            guard let user = userinfo[..<(colon ?? userinfo.endIndex)].removingPercentEncoding, !user.isEmpty,
                  let password = colon.map({ userinfo[userinfo.index(after: $0)...].removingPercentEncoding }) ?? ""
            else { throw Invalid(description: "the user and password are not percent-encoded text") }
            return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }

        /// `path` with every byte a request line cannot carry as it is
        /// percent-encoded; a `%` that already starts an escape is kept.
        static func percentEncoded(_ path: Substring) -> String {
            let bytes = Array(path.utf8)
            var out = ""
            for (i, byte) in bytes.enumerated() {
                let startsEscape = byte == UInt8(ascii: "%") && i + 2 < bytes.count && isHex(bytes[i + 1]) && isHex(bytes[i + 2])
                if startsEscape || (byte > 32 && byte < 127 && !"\"<>\\^`{|}%".utf8.contains(byte)) {
                    out.append(Character(Unicode.Scalar(byte)))
                } else {
                    out += String(format: "%%%02X", byte)
                }
            }
            return out
        }

        private static func isHex(_ byte: UInt8) -> Bool {
            (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
        }

        /// `url` fit to print: a password in it (`user:secret@`) replaced
        /// by `***`, and a user alone too (it may be a token), and a query
        /// or fragment (which may hold one) by `…`, whatever the URL's other
        /// faults.
        static func redacted(_ url: String) -> String {
            var url = url
            if let query = url.firstIndex(where: { $0 == "?" || $0 == "#" }) {
                url = String(url[...query]) + "…"
            }
            guard let schemeEnd = url.range(of: "://") else { return url }
            let rest = url[schemeEnd.upperBound...]
            let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            guard let at = rest[..<end].lastIndex(of: "@") else { return url }
            let userinfo = rest[..<at]
            guard let colon = userinfo.firstIndex(of: ":") else { return String(url[..<rest.startIndex]) + "***" + String(url[at...]) }
            return String(url[..<colon]) + ":***" + String(url[at...])
        }
    }
}
