import Glibc

/// Finds the file to execute in PATH, and explains why a spawn failed: a
/// missing or unusable working directory or program gets a clear message
/// instead of a bare errno from the spawn.
enum ExecutableResolver {
    /// Whether a spawn failing with `code` may be the fault of the
    /// working directory or the program's path (then they are examined).
    static func mayConcernThePath(_ code: Int32) -> Bool {
        [ENOENT, EACCES, ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG, ENOEXEC, EPERM].contains(code)
    }

    /// The working directory, checked: it exists, is a directory, and can be
    /// entered.
    static func checkWorkingDirectory(_ spec: ProcessSpec) throws {
        guard let directory = spec.workingDirectory else { return }
        func failure(_ code: Int32, _ reason: String) -> ProcessLaunchError {
            ProcessLaunchError(
                kind: .invalidWorkingDirectory, program: spec.executable, errno: code,
                message: "cannot run '\(spec.executable)': working directory '\(directory)' \(reason)")
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            let code = errno
            if code == ENOENT { throw failure(code, "does not exist") }
            throw failure(code, "cannot be used: \(ProcessLaunchError.errorText(code))")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw failure(ENOTDIR, "is not a directory")
        }
        guard access(directory, X_OK) == 0 else {
            let code = errno
            throw failure(code, "cannot be entered: \(ProcessLaunchError.errorText(code))")
        }
    }

    /// The path to execute.
    static func resolve(_ spec: ProcessSpec) throws -> String {
        let name = spec.executable
        guard !name.isEmpty else {
            throw ProcessLaunchError(kind: .programNotFound, program: name, errno: ENOENT,
                                     message: "cannot run an empty program name")
        }
        if name.utf8.contains(UInt8(ascii: "/")) {
            let path = absolute(name, in: spec.workingDirectory)
            switch check(path) {
            case .executable:
                return path
            case .notExecutable(let code, let reason):
                throw ProcessLaunchError(kind: .notExecutable, program: name, errno: code,
                                         message: "cannot run '\(name)': \(reason)")
            case .missing(let code):
                throw ProcessLaunchError(kind: .programNotFound, program: name, errno: code,
                                         message: "cannot run '\(name)': \(ProcessLaunchError.errorText(code))")
            }
        }
        let searchPath = spec.processEnvironment["PATH"] ?? ProcessSpec.defaultSearchPath
        var firstNonExecutable: (path: String, code: Int32, reason: String)?
        for entry in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let directory = absolute(entry.isEmpty ? "." : String(entry), in: spec.workingDirectory)
            let candidate = directory + "/" + name
            switch check(candidate) {
            case .executable:
                return candidate
            case .notExecutable(let code, let reason):
                // Like execvp: keep looking, but report EACCES if nothing runs.
                if firstNonExecutable == nil, code != EISDIR { firstNonExecutable = (candidate, code, reason) }
            case .missing:
                continue
            }
        }
        if let found = firstNonExecutable {
            throw ProcessLaunchError(kind: .notExecutable, program: name, errno: found.code,
                                     message: "cannot run '\(name)': \(found.path): \(found.reason)")
        }
        throw ProcessLaunchError(kind: .programNotFound, program: name, errno: ENOENT,
                                 message: "cannot run '\(name)': program not found in PATH (\(searchPath))")
    }

    private enum Check {
        case executable
        case notExecutable(Int32, String)
        case missing(Int32)
    }

    private static func check(_ path: String) -> Check {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing(errno) }
        if info.st_mode & S_IFMT == S_IFDIR {
            return .notExecutable(EISDIR, "is a directory")
        }
        guard access(path, X_OK) == 0 else {
            let code = errno
            return .notExecutable(code, "\(ProcessLaunchError.errorText(code)) (not executable)")
        }
        return .executable
    }

    static func absolute<S: StringProtocol>(_ path: S, in directory: String?) -> String {
        // (A byte test: `hasPrefix` works on characters, visibly slower per spawn.)
        if path.utf8.first == UInt8(ascii: "/") { return String(path) }
        guard let directory else { return String(path) }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}
