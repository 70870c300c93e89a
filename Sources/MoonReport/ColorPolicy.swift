#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a reporter may write colour (and, for the terminal view, any
/// escape sequence at all). One place decides it, from `--color`, the
/// environment and whether the output is a terminal.
///
/// Precedence: `--color always|never` wins (a flag is the most explicit
/// request, as no-color.org recommends); then `NO_COLOR` (non-empty) turns
/// colour off; then `FORCE_COLOR` / `CLICOLOR_FORCE` (non-empty, not `0`)
/// turn it on; then `TERM=dumb` turns it off; else colour is on exactly when
/// the output is a terminal.
public struct ColorPolicy: Sendable, Equatable {
    public enum Choice: String, Sendable, CaseIterable {
        case auto, always, never
    }

    public var enabled: Bool

    public init(enabled: Bool) {
        self.enabled = enabled
    }

    public static let off = ColorPolicy(enabled: false)
    public static let on = ColorPolicy(enabled: true)

    /// Resolves `choice` for output on `isTerminal` with `environment`.
    public static func resolve(_ choice: Choice, environment: [String: String], isTerminal: Bool) -> ColorPolicy {
        resolve(choice, variable: { environment[$0] }, isTerminal: isTerminal)
    }

    /// Resolves `choice` reading each variable through `variable` (moon's
    /// own environment needs no dictionary of it).
    public static func resolve(_ choice: Choice, variable: (String) -> String?, isTerminal: Bool) -> ColorPolicy {
        switch choice {
        case .always: return .on
        case .never: return .off
        case .auto: break
        }
        if let value = variable("NO_COLOR"), !value.isEmpty { return .off }
        for key in ["FORCE_COLOR", "CLICOLOR_FORCE"] {
            if let value = variable(key), !value.isEmpty, value != "0", value != "false" { return .on }
        }
        if variable("TERM") == "dumb" { return .off }
        return ColorPolicy(enabled: isTerminal)
    }

    /// Resolves `choice` for output written to file descriptor `fd`.
    public static func resolve(_ choice: Choice, environment: [String: String], fd: Int32) -> ColorPolicy {
        resolve(choice, environment: environment, isTerminal: isatty(fd) == 1)
    }
}
