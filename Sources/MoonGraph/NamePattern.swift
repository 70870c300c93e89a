/// Globs over node names (`test[*]`, `lib:*`): only `*` and `?` are special,
/// because brackets are part of instance names.
public enum NamePattern {
    /// Whether `pattern` has a `*` or `?`, and so names a set of nodes.
    public static func isPattern(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0 == "*" || $0 == "?" }
    }

    public static func matches(_ pattern: String, _ name: String) -> Bool {
        matches(Array(pattern.unicodeScalars), Array(name.unicodeScalars))
    }

    /// Linear backtracking on the last `*` (no exponential cases).
    static func matches(_ p: [Unicode.Scalar], _ s: [Unicode.Scalar]) -> Bool {
        var i = 0, j = 0
        var star = -1, mark = 0
        while j < s.count {
            if i < p.count && (p[i] == "?" || p[i] == s[j]) && p[i] != "*" {
                i += 1; j += 1
            } else if i < p.count && p[i] == "*" {
                star = i; mark = j; i += 1
            } else if star >= 0 {
                i = star + 1; mark += 1; j = mark
            } else {
                return false
            }
        }
        while i < p.count && p[i] == "*" { i += 1 }
        return i == p.count
    }
}
