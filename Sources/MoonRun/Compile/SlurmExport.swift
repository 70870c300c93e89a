import Foundation
import MoonCommand
import MoonGraph

/// `moon export --format sbatch`: the planned nodes as a POSIX shell script
/// that submits one batch job per node with `sbatch --parsable`, each held
/// with `--dependency` until its needs have ended as its `if:` requires, and
/// `--kill-on-invalid-dep=yes` so that a job whose need failed is cancelled
/// instead of pending forever. For users who submit and log off: after the
/// script has run, Slurm alone drives the graph.
///
/// What moon does at run time and Slurm cannot, the export refuses (an
/// `SlurmExport.Refusal` per node): values passed between nodes
/// (`needs.*.outputs`, `needs.*.result`), built-ins without a shell
/// equivalent (`wait-for`, `reduce`), and `if: failure` with several needs.
/// Simple built-ins become shell: `sleep`, `echo`, `fail`, `write-file`,
/// `exists`.
public enum SlurmExport {
    /// Why a node cannot be exported.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public var node: String
        public var reason: String
        public var description: String { "cannot export node '\(node)': \(reason)" }
    }

    /// Every problem of the plan at once, like `moon check`.
    public struct Refusals: Error, Sendable, CustomStringConvertible {
        public var items: [Refusal]
        public var description: String { items.map(\.description).joined(separator: "\n") }
    }

    /// The script for `plan`. `environment` is moon's own, for `${{ env.X }}`
    /// (resolved now, at export time, like `${{ vars.X }}`).
    public static func script(for plan: Plan, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let graph = plan.graph
        let nodeEnvironment = NodeEnvironment(graph: graph, base: environment)
        var refusals: [Refusal] = []
        var jobs: [String] = []
        var variable: [Int: String] = [:]
        let order = plan.levels.flatMap { $0 }
        for (number, index) in order.enumerated() {
            let node = graph.nodes[index]
            variable[index] = "j\(number + 1)"
            do {
                jobs.append(try job(for: node, number: number + 1, variables: variable, in: graph, environment: nodeEnvironment))
            } catch let refusal as Refusal {
                refusals.append(refusal)
            } catch {
                refusals.append(Refusal(node: node.name, reason: "\(error)"))
            }
        }
        guard refusals.isEmpty else { throw Refusals(items: refusals) }
        var out = """
            #!/bin/sh
            # Submits the graph '\(commentText(graph.name))' (\(commentText(graph.path))) to Slurm: one batch job per
            # node, each held with --dependency until its needs have ended as its `if:`
            # requires. Written by `moon export --format sbatch`; run it where sbatch
            # works (a login node): sh THIS-FILE. It prints each node's job id; watch
            # them with squeue, cancel them all with: scancel --name=\(SlurmCommandLine.jobName(graph: graph.name, node: "NODE"))
            # (or the ids printed). Each job's output goes to $MOON_SLURM_LOGS/NODE.JOBID.out
            # (default ./moon-slurm-logs). Working directories and files must be on
            # storage that the compute nodes share with the submitting host.
            set -eu
            logs=${MOON_SLURM_LOGS:-$PWD/moon-slurm-logs}
            mkdir -p "$logs"
            submitted=
            # If a submission fails, cancel what was already submitted.
            trap 'status=$?; if [ "$status" -ne 0 ] && [ -n "$submitted" ]; then scancel $submitted; fi' EXIT

            """
        for job in jobs { out += "\n" + job }
        out += "\n"
        for index in order {
            out += "printf '%s %s\\n' \(quote(graph.nodes[index].name)) \"$\(variable[index]!)\"\n"
        }
        return out
    }

    /// The `sbatch` call (and the batch script it reads from stdin) for one node.
    static func job(for node: Node, number: Int, variables: [Int: String], in graph: Graph, environment: NodeEnvironment) throws -> String {
        try refuseValuesFromNeeds(node, in: graph)
        let prepared = try environment.prepare(node, attempt: 1, inputs: NodeInputs(values: []), outputFile: nil)
        let directory = try environment.workingDirectory(for: node, interpolator: prepared.interpolator)
        var body = ["#!/bin/sh"]
        // The variables moon would set from the graph; the rest of the job's
        // environment is the submitter's (sbatch's default --export=ALL).
        var names = graph.dotenvValues.map(\.name) + graph.env.map(\.name) + node.env.map(\.name)
        names += ["MOON_NODE", "MOON_ATTEMPT", "MOON_GRAPH_DIR"]
        var seen = Set<String>()
        for name in names where seen.insert(name).inserted {
            if let value = prepared.environment[name] { body.append("export \(name)=\(quote(value))") }
        }
        // Outputs have no reader in an export; writing them still works.
        body.append("export MOON_OUTPUT=/dev/null")
        body += try command(for: node, prepared: prepared, directory: environment.graphDirectory)

        var arguments = ["--parsable", "--job-name=" + SlurmCommandLine.jobName(graph: graph.name, node: node.name),
                         "--chdir=" + directory, "--kill-on-invalid-dep=yes"]
        if let dependency = try dependency(of: node, variables: variables, in: graph) {
            arguments.append(dependency)
        }
        arguments += SlurmCommandLine.resourceArguments(graph.slurmOptions(for: node) ?? SlurmOptions())
        let script = body.joined(separator: "\n")
        let delimiter = hereDocumentDelimiter(for: script)
        let name = "j\(number)"
        var text = "# \(commentText(node.name))\n"
        text += "\(name)=$(sbatch " + arguments.map(quoteIfNeeded).joined(separator: " ")
        // The node's name is data (an instance's item may hold `$(…)` or a
        // quote): single-quoted unless plain; `%%` is sbatch's literal `%`.
        let file = node.name.replacing("%", with: "%%") + ".%j.out"
        let output = quoteIfNeeded(file) == file ? "\"$logs/\(file)\"" : "\"$logs\"/" + quote(file)
        text += " --output=\(output) <<'\(delimiter)'\n"
        text += script + "\n\(delimiter)\n)\n"
        text += "\(name)=${\(name)%%;*}\n"
        text += "submitted=\"$submitted $\(name)\"\n"
        return text
    }

    /// `--dependency=afterok:…`: `afterok` on needs that must succeed,
    /// `afterany` on needs with `continue-on-error` (their failure counts as
    /// success) and for `if: always`, `afternotok` for `if: failure` (one need only).
    static func dependency(of node: Node, variables: [Int: String], in graph: Graph) throws -> String? {
        guard !node.needs.isEmpty else { return nil }
        var ok: [String] = []
        var any: [String] = []
        for need in node.needs {
            let id = "$" + variables[need]!
            switch node.condition {
            case .always: any.append(id)
            case .success:
                if graph.nodes[need].continueOnError { any.append(id) } else { ok.append(id) }
            case .failure: ok.append(id)
            }
        }
        if node.condition == .failure {
            guard node.needs.count == 1 else {
                throw Refusal(node: node.name, reason: "'if: failure' with several needs has no Slurm dependency equivalent (afternotok waits for all of them to fail)")
            }
            return "--dependency=afternotok:" + ok[0]
        }
        var parts: [String] = []
        if !ok.isEmpty { parts.append("afterok:" + ok.joined(separator: ":")) }
        if !any.isEmpty { parts.append("afterany:" + any.joined(separator: ":")) }
        return "--dependency=" + parts.joined(separator: ",")
    }

    /// The lines of the batch script that run the node.
    static func command(for node: Node, prepared: NodeEnvironment.Prepared, directory: String) throws -> [String] {
        let interpolator = prepared.interpolator
        let argv: [String]
        var exports: [String] = []
        switch node.action {
        case .shell(let script):
            let rendered = try interpolator.script(script, shell: node.shell)
            exports = rendered.bindings.map { "export \($0.name)=\(quote($0.value))" }
            argv = node.shell.arguments(for: rendered.script)
        case .exec(let arguments): argv = try interpolator.arguments(arguments)
        case .group: return ["true"]
        case .builtin(let name, let written):
            var arguments: [String: String] = [:]
            var fromValues: Set<String> = []
            for (key, argument) in written {
                if case .template(let text) = argument {
                    arguments[key] = try interpolator.string(text)
                    fromValues.insert(key)
                } else {
                    arguments[key] = argument.text
                }
            }
            return try builtin(name, arguments, node: node, directory: directory, fromValues: fromValues)
        }
        var run = argv.map(quote).joined(separator: " ")
        if let timeout = node.timeout {
            // Slurm's --time has minute granularity: coreutils timeout is exact.
            run = "timeout -k 5 \(seconds(timeout)) " + run
        }
        guard node.retry.times > 0 else { return exports + ["exec " + run] }
        let delays = (1...node.retry.times).map { seconds(node.retry.delay(afterAttempt: $0)) }
        return exports + ["for moon_delay in \(delays.joined(separator: " ")); do",
                "  \(run) && exit 0",
                "  sleep \"$moon_delay\"",
                "done",
                "exec " + run]
    }

    /// The simple built-ins in shell.
    static func builtin(_ name: String, _ with: [String: String], node: Node, directory: String,
                        fromValues: Set<String> = []) throws -> [String] {
        func path(_ key: String) -> String {
            let written = with[key] ?? ""
            return written.hasPrefix("/") ? written : (directory as NSString).appendingPathComponent(written)
        }
        switch name {
        case "sleep":
            let duration = with["duration"].flatMap { try? DurationParser.parse($0) } ?? .zero
            return ["exec sleep \(seconds(duration))"]
        case "echo":
            return ["printf '%s\\n' \(quote(with["message"] ?? ""))"]
        case "fail":
            let message = with["message"] ?? "failed on purpose"
            let code = with["code"].flatMap { Int($0) } ?? 1
            return ["printf '%s\\n' \(quote(message)) >&2", "exit \(code == 0 ? 1 : code)"]
        case "write-file":
            if (with["path"] ?? "").hasSuffix("/") {
                throw Refusal(node: node.name, reason: "write-file's path ends in '/', which names a directory; give the name of the file to write")
            }
            let target: String
            switch WritePath.resolve(with["path"] ?? "", in: directory, fromValues: fromValues.contains("path")) {
            case .success(let resolved): target = resolved.path
            case .failure(let refusal): throw Refusal(node: node.name, reason: refusal.message)
            }
            let directory = (target as NSString).deletingLastPathComponent
            return ["if [ -e \(quote(target)) ] && [ ! -f \(quote(target)) ] && [ ! -L \(quote(target)) ]; then",
                    "  printf '%s\\n' \(quote("cannot write \(target): it is not a regular file; write-file replaces only regular files")) >&2; exit 1",
                    "fi",
                    "mkdir -p \(quote(directory.isEmpty ? "." : directory)) || exit 1",
                    "moon_tmp=\(quote(target)).moon-tmp.$$",
                    "printf '%s' \(quote(with["content"] ?? "")) > \"$moon_tmp\"",
                    "exec mv -f \"$moon_tmp\" \(quote(target))"]
        case "exists":
            let target = path("path")
            return ["[ -e \(quote(target)) ] && exit 0",
                    "printf '%s\\n' \(quote(target + " does not exist")) >&2",
                    "exit 1"]
        default:
            throw Refusal(node: node.name, reason: "the built-in '\(name)' runs inside moon and has no sbatch equivalent (only sleep, echo, fail, write-file and exists are exported)")
        }
    }

    /// Values from needs exist only while moon drives the run.
    static func refuseValuesFromNeeds(_ node: Node, in graph: Graph) throws {
        if let fanOut = node.fanOut {
            let expression = "needs.\(graph.nodes[fanOut.need].name).outputs.\(fanOut.key)"
            throw Refusal(node: node.name, reason: "its for-each reads \(expression), a value from a need, so its instances are made only while moon runs the graph; an sbatch export cannot make them (run it with `moon run` on a Slurm queue instead)")
        }
        var texts: [String] = node.env.map(\.value) + [node.dir].compactMap { $0 }
        switch node.action {
        case .shell(let script): texts.append(script)
        case .exec(let arguments): texts += arguments
        case .group: break
        case .builtin(let name, let written):
            if name == "reduce" { break }
            for argument in written.values { if case .template(let text) = argument { texts.append(text) } }
        }
        for text in texts where Template.containsExpression(text) {
            for expression in Template.parse(text).template.expressions {
                // The script would hold the value: a file moon writes (docs/secrets.md).
                if case .secret = expression.reference {
                    throw Refusal(node: node.name, reason: "\(expression.raw) is a secret, which an exported script would hold in its text; pass it to the job in an environment variable (sbatch --export) and read it as \"$NAME\"")
                }
                guard expression.reference.node != nil else { continue }
                throw Refusal(node: node.name, reason: "\(expression.raw) is a value from a need, which only exists while moon runs the graph; an sbatch export cannot pass values between jobs (run it with `moon run` on a Slurm queue instead)")
            }
        }
    }

    /// A here-document delimiter that occurs nowhere in `body`, so no line
    /// of it (a value with newlines included) can end the here-document:
    /// `MOON_JOB_EOF`, or when the body holds that, `MOON_JOB_EOF_` and more
    /// digits than follow it anywhere in the body (one pass, whatever the body).
    static func hereDocumentDelimiter(for body: String) -> String {
        let base = Array("MOON_JOB_EOF".utf8)
        let bytes = Array(body.utf8)
        var found = false
        var longest = 0
        var i = 0
        while i + base.count <= bytes.count {
            guard bytes[i] == base[0], bytes[i..<(i + base.count)].elementsEqual(base) else { i += 1; continue }
            found = true
            var j = i + base.count
            if j < bytes.count, bytes[j] == UInt8(ascii: "_") {
                j += 1
                let digits = bytes[j...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
                longest = max(longest, digits)
            }
            i += 1
        }
        guard found else { return "MOON_JOB_EOF" }
        return "MOON_JOB_EOF_" + String(repeating: "1", count: longest + 1)
    }

    /// `1.5`, `30`: seconds as `sleep` and `timeout` take them.
    static func seconds(_ duration: Duration) -> String {
        let value = duration.timeInterval
        if value == value.rounded() { return String(Int(value)) }
        return String(format: "%.3f", value)
    }

    /// One shell word, single-quoted.
    public static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A text from the graph as it goes into a comment of the script: on one
    /// line and without control characters (`\n`, `\e`, `\u{9b}` written
    /// out), so a name can neither start a command line of its own nor send
    /// an escape sequence to the terminal of whoever reads the script.
    static func commentText(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x1B: out += "\\e"
            case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Leaves plain words (`--mem=4G`, `$j1`-free) unquoted, for a readable script.
    static func quoteIfNeeded(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "-_=.,:/+@%".unicodeScalars.contains($0)
        }
        if plain && !text.isEmpty { return text }
        // Dependencies name shell variables: double quotes keep them live.
        if text.hasPrefix("--dependency=") { return "\"" + text + "\"" }
        return quote(text)
    }
}
