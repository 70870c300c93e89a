import Foundation
import MoonReport

/// What moon knows of its terminal: colour decisions in one place.
package enum Terminal {
    /// One variable of moon's environment. (`ProcessInfo.environment` builds
    /// a dictionary of all of them at every call.)
    package static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Colour for diagnostics on stderr, by the rules of stdout's
    /// (`ColorPolicy`): `choice` is the command's `--color`, for those that have one.
    package static func stderrColor(_ choice: ColorPolicy.Choice = .auto) -> Bool {
        color(choice, fd: 2)
    }

    /// Colour for output on `fd` (`ColorPolicy`), reading moon's environment
    /// variable by variable.
    package static func color(_ choice: ColorPolicy.Choice, fd: Int32) -> Bool {
        ColorPolicy.resolve(choice, variable: variable, isTerminal: isatty(fd) == 1).enabled
    }

    package static var stderrColor: Bool { stderrColor() }
}
