import Glibc

/// A child could not be started. Thrown by `ProcessLaunching.launch`; never a
/// crash, whatever the cause (bad spec, or moon out of descriptors/processes).
public struct ProcessLaunchError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// No such program (not in the child's `PATH`, or no file at the path).
        case programNotFound
        /// The file exists but cannot be executed (permissions, a directory,
        /// not a binary or script).
        case notExecutable
        /// The working directory does not exist, is not a directory, or
        /// cannot be entered.
        case invalidWorkingDirectory
        /// Out of file descriptors (EMFILE/ENFILE), processes (EAGAIN) or
        /// memory (ENOMEM); on moon's event loop also a program still open
        /// for writing (ETXTBSY), which the loop retries on a timer rather
        /// than sleep (`ProcessLauncher.waitForResources`). Retrying later
        /// may work.
        case outOfResources
        /// Any other failure of the system calls that start a child.
        case systemError
    }

    public var kind: Kind
    /// The program as written in the spec.
    public var program: String
    /// The `errno` behind the failure (0 when there is none).
    public var errno: Int32
    /// A complete sentence naming the program (and directory), with the
    /// system's error text.
    public var message: String
    /// Whether `withResourceHint` added its hint already.
    private var hasHint = false

    public init(kind: Kind, program: String, errno: Int32, message: String) {
        self.kind = kind
        self.program = program
        self.errno = errno
        self.message = message
    }

    public var description: String { message }

    /// Adds what the user can do about exhausted resources.
    public func withResourceHint() -> ProcessLaunchError {
        guard kind == .outOfResources, !hasHint else { return self }
        var copy = self
        copy.hasHint = true
        switch errno {
        case EMFILE:
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            copy.message += " (moon's limit is \(limit.rlim_cur) open files, about 5 per running process: lower -j or raise ulimit -n)"
        case EAGAIN:
            copy.message += " (the process limit is reached: lower -j or raise ulimit -u)"
        default:
            break
        }
        return copy
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    /// Classifies an errno from `pipe2`, the spawn (`posix_spawn`: the child's setup, `execve`)…
    static func from(errno code: Int32, program: String, doing what: String) -> ProcessLaunchError {
        let kind: Kind
        switch code {
        case EMFILE, ENFILE, EAGAIN, ENOMEM: kind = .outOfResources
        case ENOENT, ENOTDIR: kind = .programNotFound
        case EACCES, EPERM, ENOEXEC, EISDIR, ETXTBSY: kind = .notExecutable
        default: kind = .systemError
        }
        var text = "cannot run '\(program)': \(what): \(errorText(code))"
        if code == ENOENT && what == "exec" {
            text += " (is the interpreter on its #! line missing?)"
        }
        return ProcessLaunchError(kind: kind, program: program, errno: code, message: text)
    }
}
