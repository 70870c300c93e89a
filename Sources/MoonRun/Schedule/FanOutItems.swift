import MoonGraph
import MoonJSON
import MoonSystem

/// The items of a `for-each` over a need's output: the output's text must
/// be a JSON list of distinct, non-empty strings without control characters
/// (each becomes an instance's name, `TEMPLATE[ITEM]`, on one line), as the
/// items of a `for-each` in the graph file. Anything else is an error that
/// quotes the value's first bytes.
enum FanOutItems {
    /// How much of a bad value an error quotes.
    static let quotedBytes = 120

    /// `expression` names the value in messages (`needs.shards.outputs.files`).
    static func parse(_ text: String, expression: String) -> Result<[String], FanOutError> {
        guard case .array(let list)? = try? JSONParser.parse(text) else {
            return .failure(FanOutError("\(expression) is not a JSON list of strings: \(quote(text))"))
        }
        guard list.count <= FanOutLimit.instances else {
            return .failure(FanOutError("\(expression) has \(list.count) items; \(FanOutLimit.beyond)"))
        }
        var items: [String] = []
        items.reserveCapacity(list.count)
        var seen = Set<String>(minimumCapacity: list.count)
        for element in list {
            guard case .string(let item) = element else {
                return .failure(FanOutError("\(expression) is not a JSON list of strings: \(quote(text))"))
            }
            if item.isEmpty {
                return .failure(FanOutError("\(expression) has an empty item: items become node names"))
            }
            if item.unicodeScalars.contains(where: isControl) {
                return .failure(FanOutError("\(expression) has an item with a control character or a bidirectional override (\(quote(item))): items become node names"))
            }
            guard seen.insert(item).inserted else {
                return .failure(FanOutError("\(expression) has '\(item)' twice: each item names one instance"))
            }
            items.append(item)
        }
        return .success(items)
    }

    /// The value's first bytes, on one line, with `…` when cut.
    static func quote(_ text: String) -> String {
        if text.isEmpty { return "'' (empty)" }
        var cut = String(decoding: text.utf8.prefix(quotedBytes), as: UTF8.self)
        if text.utf8.count > quotedBytes { cut += "…" }
        return cut.unicodeScalars.map { isControl($0) ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    }

    /// C0, DEL and C1 controls and bidirectional overrides: what a name
    /// shown on one line, as itself, cannot hold (the graph file's items follow the same rule).
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        FileName.isHidden(scalar)
    }

    struct FanOutError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }
}
