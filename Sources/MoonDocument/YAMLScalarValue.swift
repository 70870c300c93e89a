/// The value of a scalar as the YAML 1.2 core schema reads it.
///
/// The loader keeps scalars as text (with their style) so that later stages
/// decide what they expect; this is the one place that says what `yes`, `0x1F`
/// or `.inf` mean. moon follows YAML 1.2, not 1.1: `yes`/`no`/`on`/`off` are
/// strings, and `010` is the decimal 10, not octal.
public enum YAMLScalarValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int)
    /// Also used for an integer too large for `Int`.
    case float(Double)
    case string(String)

    /// Resolves `text` as the core schema does for a plain (unquoted, untagged) scalar.
    public static func resolvePlain(_ text: String) -> YAMLScalarValue {
        let utf8 = text.utf8
        // Every non-string form starts with one of these bytes, so most words skip all checks.
        guard let first = utf8.first else { return .null }
        switch first {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
             UInt8(ascii: "n"), UInt8(ascii: "N"), UInt8(ascii: "~"),
             UInt8(ascii: "t"), UInt8(ascii: "T"), UInt8(ascii: "f"), UInt8(ascii: "F"):
            break
        default:
            return .string(text)
        }
        switch text {
        case "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
        case ".nan", ".NaN", ".NAN": return .float(.nan)
        default: break
        }
        if let value = integer(text) { return value }
        if isFloat(text), let value = Double(text) { return .float(value) }
        return .string(text)
    }

    /// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`.
    private static func integer(_ text: String) -> YAMLScalarValue? {
        let bytes = Array(text.utf8)
        if bytes.count > 2, bytes[0] == UInt8(ascii: "0") {
            let digits = String(decoding: bytes[2...], as: UTF8.self)
            if bytes[1] == UInt8(ascii: "x"), digits.utf8.allSatisfy(isHexDigit) {
                return Int(digits, radix: 16).map { .int($0) } ?? hugeInteger(digits, radix: 16)
            }
            if bytes[1] == UInt8(ascii: "o"), digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x37 }) {
                return Int(digits, radix: 8).map { .int($0) } ?? hugeInteger(digits, radix: 8)
            }
        }
        var body = bytes[...]
        if let sign = body.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { body = body.dropFirst() }
        guard !body.isEmpty, body.allSatisfy(isDigit) else { return nil }
        // Int("+5") works; Int overflow falls back to a float, which is still a number.
        if let value = Int(text) { return .int(value) }
        return Double(text).map { .float($0) }
    }

    private static func hugeInteger(_ digits: String, radix: Double) -> YAMLScalarValue {
        var value = 0.0
        for byte in digits.utf8 {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: digit = byte - UInt8(ascii: "A") + 10
            }
            value = value * radix + Double(digit)
        }
        return .float(value)
    }

    /// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`
    private static func isFloat(_ text: String) -> Bool {
        let b = Array(text.utf8)
        var i = 0
        if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
        var intDigits = 0
        while i < b.count, isDigit(b[i]) { i += 1; intDigits += 1 }
        var fracDigits = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            while i < b.count, isDigit(b[i]) { i += 1; fracDigits += 1 }
        }
        guard intDigits > 0 || fracDigits > 0 else { return false }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "-") || b[i] == UInt8(ascii: "+") { i += 1 }
            var expDigits = 0
            while i < b.count, isDigit(b[i]) { i += 1; expDigits += 1 }
            guard expDigits > 0 else { return false }
        }
        return i == b.count
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
    private static func isHexDigit(_ b: UInt8) -> Bool {
        isDigit(b) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46)
    }
}

extension YAMLNode {
    /// The scalar's value by the YAML 1.2 core schema, or nil for a collection.
    ///
    /// Quoted and block scalars are strings. An explicit core tag (`!!str`,
    /// `!!int`, `!!bool`, `!!float`, `!!null`) picks the type when the text fits
    /// it; `!` and any other tag give the text as a string.
    public var resolvedScalar: YAMLScalarValue? {
        guard case .scalar(let text, let style, let tag) = kind else { return nil }
        guard let tag else {
            return style == .plain ? YAMLScalarValue.resolvePlain(text) : .string(text)
        }
        let resolved = YAMLScalarValue.resolvePlain(text)
        switch (tag, resolved) {
        case ("tag:yaml.org,2002:null", .null),
             ("tag:yaml.org,2002:bool", .bool),
             ("tag:yaml.org,2002:int", .int),
             ("tag:yaml.org,2002:float", .float):
            return resolved
        case ("tag:yaml.org,2002:float", .int(let value)):
            return .float(Double(value))
        default:
            return .string(text)
        }
    }
}
