import Foundation
import MoonReport

/// What moon knows of its terminal: colour decisions in one place.
package enum Terminal {
    /// One variable of moon's environment. (`ProcessInfo.environment` builds
    /// a dictionary of all of them at every call.)
    package static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The variables colour decisions read, for `ColorPolicy`.
    package static var colorEnvironment: [String: String] {
        var result: [String: String] = [:]
        for name in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM"] { result[name] = variable(name) }
        return result
    }

    /// Colour for diagnostics on stderr, by the rules of stdout's
    /// (`ColorPolicy`): `choice` is the command's `--color`, for those that have one.
    package static func stderrColor(_ choice: ColorPolicy.Choice = .auto) -> Bool {
        ColorPolicy.resolve(choice, environment: colorEnvironment, fd: 2).enabled
    }

    package static var stderrColor: Bool { stderrColor() }
}
