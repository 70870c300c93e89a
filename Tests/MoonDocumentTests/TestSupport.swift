import MoonDocument

/// Loads `text` as the file `t.yaml`.
func load(_ text: String, limits: YAMLLoader.Limits = YAMLLoader.Limits()) throws(Diagnostics) -> YAMLNode {
    try YAMLLoader.load(SourceFile(path: "t.yaml", text: text), limits: limits)
}

/// The diagnostics loading `bytes` produces (empty if it loads).
func problems(_ bytes: [UInt8], limits: YAMLLoader.Limits = YAMLLoader.Limits()) -> [Diagnostic] {
    do {
        _ = try YAMLLoader.load(SourceFile(path: "t.yaml", bytes: bytes), limits: limits)
        return []
    } catch {
        return error.items
    }
}

func problems(_ text: String, limits: YAMLLoader.Limits = YAMLLoader.Limits()) -> [Diagnostic] {
    problems(Array(text.utf8), limits: limits)
}

extension YAMLNode {
    /// The value of `key` in a mapping (by scalar text).
    subscript(_ key: String) -> YAMLNode? {
        pairs?.first { $0.key.scalar == key }?.value
    }

    /// The keys of a mapping, in order.
    var keys: [String] { pairs?.compactMap { $0.key.scalar } ?? [] }
}

/// "line:column" of a location, for compact expectations.
func lc(_ location: SourceLocation) -> String { "\(location.line):\(location.column)" }
