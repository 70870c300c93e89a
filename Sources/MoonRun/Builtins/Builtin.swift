import Foundation
import MoonCommand
import MoonGraph
import MoonJSON

/// The built-in commands (`uses:`), run inside moon without a process. Their
/// parameters are declared once in MoonGraph's `BuiltinCatalog` (validation
/// and `moon schema` read it); here is only what they do. Each runs on the
/// runner's scheduler, so `sleep` and `wait-for` are virtual-time testable,
/// and each is cancellable through the disposable it returns.
enum Builtin {
    /// Where a built-in reports: values, then exactly one of complete or fail.
    struct Result {
        let next: (String) -> Void
        let complete: () -> Void
        let fail: (String) -> Void
    }

    struct Context {
        let scheduler: DateScheduler
        /// The graph file's directory; relative paths are resolved against it.
        let directory: String
        /// The values each need sent, in `needs` order.
        let inputs: NodeInputs
        /// The arguments written with `${{ … }}`: a path made from values
        /// must stay inside `directory` (`WritePath`).
        var fromValues: Set<String> = []
    }

    /// Starts built-in `name`. The returned disposable cancels it; a cancelled
    /// built-in reports nothing more (the caller reports the cancellation).
    static func run(_ name: String, with arguments: [String: BuiltinArgument], context: Context, result: Result) -> Disposable {
        switch name {
        case "sleep":
            let delay = arguments["duration"].flatMap(duration) ?? .zero
            return context.scheduler.schedule(after: delay) { result.complete() } ?? ActionDisposable()
        case "echo":
            result.next(arguments["message"]?.text ?? "")
            result.complete()
        case "fail":
            var message = arguments["message"]?.text ?? "failed on purpose"
            if let code = arguments["code"]?.text { message += " (code \(code))" }
            result.fail(message)
        case "write-file":
            switch WritePath.resolve(arguments["path"]?.text ?? "", in: context.directory,
                                     fromValues: context.fromValues.contains("path")) {
            case .success(let target): writeFile(target, content: arguments["content"]?.text ?? "", result: result)
            case .failure(let refusal): result.fail(refusal.message)
            }
        case "exists":
            let path = resolve(arguments["path"]?.text ?? "", in: context.directory)
            if FileManager.default.fileExists(atPath: path) {
                result.complete()
            } else {
                result.fail("\(path) does not exist")
            }
        case "wait-for":
            return WaitFor.start(arguments: arguments, context: context, result: result)
        case "reduce":
            reduce(op: arguments["op"]?.text ?? "list", inputs: context.inputs, result: result)
        default:
            // Validation rejects unknown built-ins; this is for library users.
            result.fail("unknown built-in '\(name)'")
        }
        return ActionDisposable()
    }

    static func duration(_ argument: BuiltinArgument) -> Duration? {
        if case .duration(let d) = argument { return d }
        guard let seconds = Double(argument.text), !seconds.isNaN else { return nil }
        return .seconds(min(max(seconds, 0), 1e9))
    }

    static func resolve(_ path: String, in directory: String) -> String {
        path.hasPrefix("/") ? path : (directory as NSString).appendingPathComponent(path)
    }

    /// Atomic: the content goes to a temporary file in the same directory,
    /// which is then renamed over the target, so readers never see half a file.
    /// Missing directories on the way are made (`out/report.txt` in a fresh
    /// checkout), as `install -D` and the write-file steps of other runners do.
    /// Only a regular file (or a symbolic link, which is replaced, not
    /// followed) is replaced: renaming over a device, FIFO or socket would
    /// swap the node itself for a file (as root, `/dev/null`).
    static func writeFile(_ target: WritePath, content: String, result: Result) {
        let path = target.path
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        if path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue) {
            result.fail("cannot write \(path): it names a directory; give the name of the file to write")
            return
        }
        if let kind = WritePath.specialFile(at: path) {
            result.fail("cannot write \(path): it is \(kind), not a regular file; write-file replaces only regular files")
            return
        }
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            // The usual cause: a file where a directory of the path should be.
            var parent = url.deletingLastPathComponent()
            while parent.path != "/" {
                if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    result.fail("cannot write \(path): \(parent.path) is a file, not a directory")
                    return
                }
                parent = parent.deletingLastPathComponent()
            }
            result.fail("cannot write \(path): cannot make its directory (\((error as NSError).localizedFailureReason ?? error.localizedDescription))")
            return
        }
        if let refusal = target.leavesDirectory() {
            result.fail(refusal.message)
            return
        }
        do {
            try Data(content.utf8).write(to: url, options: .atomic)
            result.complete()
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? "\(error.localizedDescription)"
            result.fail("cannot write \(path): \(reason)")
        }
    }

    /// `sum` adds numbers, `concat` joins text, `list` sends every value
    /// (as a JSON array); all over the values the node's needs sent, in order.
    /// A need that sent no value but has an output `value` (a shell node that
    /// wrote `value=…` to `$MOON_OUTPUT`) contributes that.
    static func reduce(op: String, inputs: NodeInputs, result: Result) {
        let all = inputs.values.enumerated().flatMap { index, values -> [String] in
            guard values.isEmpty, index < inputs.needs.count,
                  let value = inputs.outputs[inputs.needs[index]]?["value"] else { return values }
            return [value]
        }
        switch op {
        case "sum":
            var total = 0.0
            var allIntegers = true
            for value in all {
                let trimmed = value.trimmingCharacters(in: .whitespaces)
                guard let number = Double(trimmed) else {
                    result.fail("reduce sum: '\(value)' is not a number")
                    return
                }
                if Int(trimmed) == nil { allIntegers = false }
                total += number
            }
            result.next(allIntegers && abs(total) < 9e15 ? String(Int(total)) : String(total))
        case "concat":
            result.next(all.joined())
        default:
            result.next(JSONString.array(all))
        }
        result.complete()
    }
}
