/// One validated `with:` value of a built-in, typed by the built-in's parameter schema.
public enum BuiltinArgument: Sendable, Hashable, Codable {
    case string(String)
    case integer(Int)
    case duration(Duration)
    case path(String)
    /// One of the parameter's enumerated values.
    case choice(String)
    /// A value containing `${{ … }}`: kept as written, to be interpolated and
    /// then checked against the parameter's type (`BuiltinCatalog`) by a later stage.
    case template(String)

    /// The value as text (durations in the file's notation: `1m30s`).
    public var text: String {
        switch self {
        case .string(let s), .path(let s), .choice(let s), .template(let s): return s
        case .integer(let n): return String(n)
        case .duration(let d): return DurationText.format(d)
        }
    }
}
