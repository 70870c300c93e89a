import Glibc
import MoonGraph
import MoonRun

extension SecretValues {
    /// The graph's secrets as a run reads them: moon's environment, the
    /// dotenv files, and `file:` secrets under the rules for hostile files
    /// (`InputFile`): a regular file of at most `fileLimit` bytes, never a
    /// device, a FIFO or a socket, which could block or never end. Nothing
    /// is read for a graph without `secrets:`.
    package static func read(for graph: Graph) -> SecretValues {
        guard !graph.secrets.isEmpty else { return SecretValues() }
        return SecretValues(graph: graph) { path in
            var info = stat()
            guard stat(path, &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw InputFile.Refusal(message: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw InputFile.Refusal(message: "\(path) is not a regular file")
            }
            do {
                return try InputFile.read(path, limit: fileLimit, kind: "secret file", stopAtNUL: true)
            } catch let refusal as InputFile.Refusal {
                if refusal.missing { return nil }
                throw refusal
            }
        }
    }
}

extension InputFile.Refusal: CustomStringConvertible {
    package var description: String { message }
}
