import Foundation

/// What to run: everything a child process gets from moon.
///
/// The child inherits nothing implicitly: `environment` is the complete
/// environment, stdin is `/dev/null`, stdout and stderr are pipes read by the
/// launcher, and no other file descriptor is open.
public struct ProcessSpec: Sendable, Hashable {
    /// An absolute path; a path with a `/` (relative paths are taken from
    /// `workingDirectory`); or a bare name looked up in the `PATH` of
    /// `environment` — the child's environment, not moon's. Without a `PATH`
    /// entry the search path is `/usr/bin:/bin`.
    public var executable: String
    /// The arguments after `argv[0]`; `argv[0]` is `executable` as written.
    public var arguments: [String]
    /// The complete environment of the child.
    public var environment: [String: String]
    /// The child's working directory; `nil` keeps moon's. It must exist and
    /// be a directory, or `launch` throws `.invalidWorkingDirectory`.
    public var workingDirectory: String?

    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String] = ProcessSpec.currentEnvironment,
        workingDirectory: String? = nil
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.workingDirectory = workingDirectory
    }

    /// moon's own environment, the usual base for a node's environment.
    public static var currentEnvironment: [String: String] {
        ProcessInfo.processInfo.environment
    }

    /// The search path used when `environment` has no `PATH`.
    public static let defaultSearchPath = "/usr/bin:/bin"
}
