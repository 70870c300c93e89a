import Foundation
import MoonCommand
import MoonGraph

/// `moon export --format sbatch`: the planned nodes as a POSIX shell script
/// that submits one batch job per node with `sbatch --parsable` (a fan-out's
/// instances as one job array), each held
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
    /// `learned`: what recent runs say of the nodes (`LearnedResources`):
    /// memory for a node that declares none, a time limit for one without
    /// `timeout:` or `slurm: {time}`.
    public static func script(for plan: Plan, environment: [String: String] = ProcessInfo.processInfo.environment,
                              learned: Learned = Learned()) throws -> String {
        let graph = plan.graph
        let nodeEnvironment = NodeEnvironment(graph: graph, base: environment)
        var refusals: [Refusal] = []
        var jobs: [String] = []
        // Per node: the shell variable holding its job id, and for an
        // instance of a job array its task index.
        var variable: [Int: String] = [:]
        var task: [Int: Int] = [:]
        let order = plan.levels.flatMap { $0 }
        for (number, unit) in units(order, in: plan).enumerated() {
            let name = "j\(number + 1)"
            var parts: [JobParts] = []
            for index in unit {
                do {
                    parts.append(try jobParts(for: graph.nodes[index], variables: variable, in: graph, environment: nodeEnvironment, learned: learned))
                } catch let refusal as Refusal {
                    refusals.append(refusal)
                } catch {
                    refusals.append(Refusal(node: graph.nodes[index].name, reason: "\(error)"))
                }
            }
            guard parts.count == unit.count else {
                for index in unit { variable[index] = name }
                continue
            }
            if unit.count > 1, Set(parts.map(\.arrayKey)).count == 1 {
                jobs.append(arrayJob(parts, template: graph.nodes[unit[0]].instance!.template, graph: graph, name: name))
                for (position, index) in unit.enumerated() {
                    variable[index] = name
                    task[index] = position
                }
            } else {
                // Instances that differ in directory, resources or needs: a job each.
                for (offset, (index, part)) in zip(unit, parts).enumerated() {
                    let own = offset == 0 ? name : name + "_" + String(offset)
                    jobs.append(singleJob(part, node: graph.nodes[index], graph: graph, name: own))
                    variable[index] = own
                }
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
            let id = task[index].map { "${\(variable[index]!)}_\($0)" } ?? "$\(variable[index]!)"
            out += "printf '%s %s\\n' \(quote(graph.nodes[index].name)) \"\(id)\"\n"
        }
        return out
    }

    /// What recent runs say of each node, by name.
    public struct Learned: Sendable {
        public var memory: [String: Int64]
        public var time: [String: Duration]

        public init(memory: [String: Int64] = [:], time: [String: Duration] = [:]) {
            self.memory = memory
            self.time = time
        }

        /// `options` (a node's declared ones: `slurm:`, `resources:`,
        /// `timeout:`) with what `node` learned where they ask for no
        /// memory or no time: declared values win. The one rule of srun
        /// (`NodeCommand`) and sbatch.
        public func requesting(_ options: SlurmOptions, node: String) -> SlurmOptions {
            options.requesting(ResourceSpec(memory: memory[node])).withTime(time[node])
        }
    }

    /// What one node's job is made of: the lines of its batch script after
    /// `#!/bin/sh`, and the `sbatch` options other than its name and output.
    struct JobParts {
        var body: [String]
        var directory: String
        var options: [String]

        /// Instances of one template with equal keys become one job array.
        var arrayKey: [String] { [directory] + options }
    }

    /// The units of the export in submission order: a node alone, or every
    /// instance of a `for-each`/`matrix` template when they all sit in one
    /// level of the plan (so none needs another, and whatever needs one
    /// comes later), which may become one job array.
    static func units(_ order: [Int], in plan: Plan) -> [[Int]] {
        let graph = plan.graph
        var instances: [String: [Int]] = [:]
        for index in order {
            if let template = graph.nodes[index].instance?.template { instances[template, default: []].append(index) }
        }
        var units: [[Int]] = []
        var placed = Set<String>()
        for index in order {
            guard let template = graph.nodes[index].instance?.template, let all = instances[template], all.count > 1,
                  all.allSatisfy({ plan.level[$0] == plan.level[index] }) else {
                units.append([index])
                continue
            }
            if placed.insert(template).inserted { units.append(all) }
        }
        return units
    }

    /// The parts of one node's job (see `JobParts`).
    static func jobParts(for node: Node, variables: [Int: String], in graph: Graph, environment: NodeEnvironment,
                         learned: Learned = Learned()) throws -> JobParts {
        try refuseValuesFromNeeds(node, in: graph)
        let prepared = try environment.prepare(node, attempt: 1, inputs: NodeInputs(values: []), outputFile: nil)
        let directory = try environment.workingDirectory(for: node, interpolator: prepared.interpolator)
        var body: [String] = []
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
        var options = ["--chdir=" + directory, "--kill-on-invalid-dep=yes"]
        if let dependency = try dependency(of: node, variables: variables, in: graph) {
            options.append(dependency)
        }
        let slurm = graph.slurmOptions(for: node) ?? SlurmOptions().requesting(node.resources).limited(by: node.timeout)
        options += SlurmCommandLine.resourceArguments(learned.requesting(slurm, node: node.name))
        return JobParts(body: body, directory: directory, options: options)
    }

    /// The `sbatch` call (and the batch script it reads from stdin) for one node.
    static func singleJob(_ parts: JobParts, node: Node, graph: Graph, name: String) -> String {
        // The node's name is data (an instance's item may hold `$(…)` or a
        // quote): single-quoted unless plain; `%%` is sbatch's literal `%`.
        submission(name: name, comment: node.name, jobName: SlurmCommandLine.jobName(graph: graph.name, node: node.name),
                   options: parts.options, file: node.name.replacing("%", with: "%%") + ".%j.out",
                   body: ["#!/bin/sh"] + parts.body)
    }

    /// One job array for the instances of `template` (`--array=0-N`): task
    /// K runs the K-th instance, chosen by `$SLURM_ARRAY_TASK_ID`. Its log
    /// is `TEMPLATE.JOBID_K.out`, the id the script prints for the instance.
    static func arrayJob(_ parts: [JobParts], template: String, graph: Graph, name: String) -> String {
        var body = ["#!/bin/sh", "case \"${SLURM_ARRAY_TASK_ID:-}\" in"]
        for (task, part) in parts.enumerated() {
            body.append("\(task))")
            body += part.body.map { "  " + $0 }
            body.append("  ;;")
        }
        body += ["*) printf '%s\\n' \"moon: this job array has no task ${SLURM_ARRAY_TASK_ID:-(none)}\" >&2; exit 1 ;;", "esac"]
        return submission(name: name, comment: template + " (\(parts.count) instances)",
                          jobName: SlurmCommandLine.jobName(graph: graph.name, node: template),
                          options: ["--array=0-\(parts.count - 1)"] + parts[0].options,
                          file: template.replacing("%", with: "%%") + ".%A_%a.out", body: body)
    }

    /// `NAME=$(sbatch … <<'EOF' … EOF)`, keeping the job id alone in `$NAME`.
    static func submission(name: String, comment: String, jobName: String, options: [String], file: String, body: [String]) -> String {
        let script = body.joined(separator: "\n")
        let delimiter = hereDocumentDelimiter(for: script)
        let arguments = ["--parsable", "--job-name=" + jobName] + options
        var text = "# \(commentText(comment))\n"
        text += "\(name)=$(sbatch " + arguments.map(quoteIfNeeded).joined(separator: " ")
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
        // The instances of one job array share its id: each is named once.
        ok = unique(ok)
        any = unique(any)
        if !ok.isEmpty { parts.append("afterok:" + ok.joined(separator: ":")) }
        if !any.isEmpty { parts.append("afterany:" + any.joined(separator: ":")) }
        return "--dependency=" + parts.joined(separator: ",")
    }

    static func unique(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { seen.insert($0).inserted }
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
