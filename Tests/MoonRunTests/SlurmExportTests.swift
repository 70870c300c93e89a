import Foundation
import MoonGraph
import Testing
@testable import MoonRun

@Suite struct SlurmExportTests {
    func script(_ yaml: String, targets: [String] = []) throws -> String {
        let graph = try slurmTestGraph(yaml)
        return try SlurmExport.script(for: try Plan.make(graph: graph, targets: targets), environment: ["HOME": "/home/u"])
    }

    @Test func eachNodeIsABatchJobHeldUntilItsNeedsSucceeded() throws {
        let text = try script("""
            version: 1
            name: rel
            queues:
              cluster: { executor: slurm, slurm: { partition: debug, mem: 4G } }
            nodes:
              a: { run: make a, queue: cluster }
              b: { run: [cc, -o, b], dir: src }
              c: { needs: [a, b], run: "echo it's", queue: cluster, slurm: { cpus-per-task: 4 } }
            """)
        #expect(text.hasPrefix("#!/bin/sh\n"))
        #expect(text.contains("j1=$(sbatch --parsable --job-name=moon.rel.a --chdir=/work/proj --kill-on-invalid-dep=yes --partition=debug --mem=4G --output=\"$logs/a.%j.out\" <<'MOON_JOB_EOF'\n"))
        #expect(text.contains("j2=$(sbatch --parsable --job-name=moon.rel.b --chdir=/work/proj/src --kill-on-invalid-dep=yes --output="))
        #expect(text.contains("j3=$(sbatch --parsable --job-name=moon.rel.c --chdir=/work/proj --kill-on-invalid-dep=yes \"--dependency=afterok:$j1:$j2\" --partition=debug --cpus-per-task=4 --mem=4G --output="))
        #expect(text.contains("exec 'sh' '-e' '-c' 'make a'\n"))
        #expect(text.contains("exec 'cc' '-o' 'b'\n"))
        #expect(text.contains("exec 'sh' '-e' '-c' 'echo it'\\''s'\n"))
        #expect(text.contains("export MOON_NODE='c'\n"))
        #expect(text.contains("j3=${j3%%;*}\n"))
        #expect(text.hasSuffix("printf '%s %s\\n' 'a' \"$j1\"\nprintf '%s %s\\n' 'b' \"$j2\"\nprintf '%s %s\\n' 'c' \"$j3\"\n"))
    }

    @Test func conditionsAndContinueOnErrorPickTheDependencyType() throws {
        let text = try script("""
            version: 1
            nodes:
              a: { run: "true" }
              flaky: { run: "false", continue-on-error: true }
              b: { needs: [a, flaky], run: "true" }
              always: { needs: b, if: always, run: "true" }
              onfail: { needs: b, if: failure, run: "true" }
            """)
        #expect(text.contains("\"--dependency=afterok:$j1,afterany:$j2\""))
        #expect(text.contains("\"--dependency=afterany:$j3\""))
        #expect(text.contains("\"--dependency=afternotok:$j3\""))
    }

    @Test func simpleBuiltinsBecomeShellAndVarsAreResolved() throws {
        let text = try script("""
            version: 1
            vars: { who: world }
            env: { GREETING: "hello ${{ vars.who }}" }
            nodes:
              nap: { uses: sleep, with: { duration: 1500ms } }
              say: { uses: echo, with: { message: "hi ${{ vars.who }}" } }
              write: { uses: write-file, with: { path: out/x.txt, content: "x" } }
              check: { uses: exists, with: { path: /etc/hostname } }
              boom: { uses: fail, with: { message: no, code: 3 } }
            """)
        #expect(text.contains("exec sleep 1.500\n"))
        #expect(text.contains("printf '%s\\n' 'hi world'\n"))
        #expect(text.contains("export GREETING='hello world'\n"))
        #expect(text.contains("mkdir -p '/work/proj/out' || exit 1\nmoon_tmp='/work/proj/out/x.txt'.moon-tmp.$$\n"))
        #expect(text.contains("exec mv -f \"$moon_tmp\" '/work/proj/out/x.txt'\n"))
        #expect(text.contains("[ -e '/etc/hostname' ] && exit 0\n"))
        #expect(text.contains("printf '%s\\n' 'no' >&2\nexit 3\n"))
    }

    @Test func timeoutsAndRetriesAreKeptInTheJob() throws {
        let text = try script("""
            version: 1
            nodes:
              t: { run: ./slow, timeout: 90s, retry: { times: 2, delay: 1s, backoff: 2 } }
            """)
        #expect(text.contains("""
            for moon_delay in 1 2; do
              timeout -k 5 90 'sh' '-e' '-c' './slow' && exit 0
              sleep "$moon_delay"
            done
            exec timeout -k 5 90 'sh' '-e' '-c' './slow'
            """))
    }

    @Test func onlyTheTargetsAndTheirNeedsAreExported() throws {
        let text = try script("""
            version: 1
            nodes:
              a: { run: "true" }
              b: { needs: a, run: "true" }
              c: { run: "true" }
            """, targets: ["b"])
        #expect(text.contains("moon.moon.a"))
        #expect(text.contains("moon.moon.b"))
        #expect(!text.contains("moon.moon.c"))
    }

    @Test func whatOnlyMoonCanDoIsRefusedNodeByNode() throws {
        let graph = try slurmTestGraph("""
            version: 1
            nodes:
              a: { run: echo "n=1" >> "$MOON_OUTPUT" }
              b: { needs: a, run: 'echo ${{ needs.a.outputs.n }}' }
              w: { uses: wait-for, with: { path: /tmp/x } }
              r: { needs: a, uses: reduce, with: { op: sum } }
              f: { needs: [a, w], if: failure, run: "true" }
            """)
        #expect {
            try SlurmExport.script(for: try Plan.make(graph: graph))
        } throws: { error in
            guard let refusals = error as? SlurmExport.Refusals else { return false }
            let text = refusals.description
            return refusals.items.map(\.node) == ["w", "b", "r", "f"]
                && text.contains("${{ needs.a.outputs.n }} is a value from a need")
                && text.contains("the built-in 'wait-for' runs inside moon")
                && text.contains("'if: failure' with several needs")
        }
    }

    /// A fan-out is one job array: task K runs instance K, its dependents
    /// wait on the array's id once, and the script prints each instance's
    /// task id (`JOB_K`, the name of its log).
    @Test func aFanOutIsOneJobArray() throws {
        let text = try script("""
            version: 1
            name: arr
            queues:
              cluster: { executor: slurm, slurm: { mem: 1G } }
            nodes:
              prep: { run: mkdir -p out }
              item:
                for-each: [a, b, c, "d e", "$(x)", f, g, h]
                needs: prep
                run: echo ${{ item }} > out/${{ item }}.txt
                queue: cluster
              sum: { needs: item, run: cat out/*.txt }
            """)
        #expect(text.components(separatedBy: "sbatch ").count - 1 == 3, "\(text)")
        #expect(text.contains("j2=$(sbatch --parsable --job-name=moon.arr.item --array=0-7 --chdir=/work/proj --kill-on-invalid-dep=yes \"--dependency=afterok:$j1\" --mem=1G --output=\"$logs/item.%A_%a.out\" <<'MOON_JOB_EOF'\n#!/bin/sh\ncase \"${SLURM_ARRAY_TASK_ID:-}\" in\n0)\n"))
        #expect(text.contains("\n4)\n  export MOON_NODE='item[$(x)]'\n"))
        #expect(text.contains("printf '%s\\n' \"moon: this job array has no task ${SLURM_ARRAY_TASK_ID:-(none)}\" >&2; exit 1 ;;\nesac\n"))
        // The barrier (and through it `sum`) waits on the array once.
        #expect(text.contains("\"--dependency=afterok:$j2\""))
        #expect(!text.contains("$j2:$j2"))
        #expect(text.contains("printf '%s %s\\n' 'item[a]' \"${j2}_0\"\n"))
        #expect(text.contains("printf '%s %s\\n' 'item[h]' \"${j2}_7\"\n"))
        #expect(text.contains("printf '%s %s\\n' 'item[$(x)]' \"${j2}_4\"\n"))
    }

    /// Instances whose jobs differ (here their directories) are submitted
    /// one by one, and a `timeout:` without a `time:` asks Slurm for a minute more.
    @Test func instancesThatDifferAreJobsOfTheirOwn() throws {
        let text = try script("""
            version: 1
            nodes:
              item: { for-each: [a, b], dir: "${{ item }}", run: "true", timeout: 90s, resources: { memory: 1.5G, cpus: 2 } }
              after: { needs: item, run: "true" }
            """)
        #expect(!text.contains("--array"))
        #expect(text.contains("j1=$(sbatch --parsable '--job-name=moon.moon.item[a]' --chdir=/work/proj/a"))
        #expect(text.contains("j1_1=$(sbatch --parsable '--job-name=moon.moon.item[b]' --chdir=/work/proj/b"))
        #expect(text.contains("\"--dependency=afterok:$j1:$j1_1\""))
        #expect(text.contains("--time=00:02:30"))
        #expect(text.contains("--mem=1536M --cpus-per-task=2") || text.contains("--cpus-per-task=2 --mem=1536M"))
        #expect(text.contains("printf '%s %s\\n' 'item[b]' \"$j1_1\"\n"))
    }

    /// What recent runs learned asks for `--mem` and `--time` where the
    /// node declares neither; what it declares wins.
    @Test func learnedMemoryAndTimeAreAskedForWhereNothingIsDeclared() throws {
        let graph = try slurmTestGraph("""
            version: 1
            nodes:
              learn: { run: "true" }
              declared: { run: "true", resources: { memory: 1G }, timeout: 10m }
            """)
        let learned = SlurmExport.Learned(memory: ["learn": 300 << 20, "declared": 5 << 20],
                                          time: ["learn": .seconds(700), "declared": .seconds(9)])
        let text = try SlurmExport.script(for: try Plan.make(graph: graph), environment: ["HOME": "/home/u"], learned: learned)
        #expect(text.contains("--job-name=moon.moon.learn --chdir=/work/proj --kill-on-invalid-dep=yes --mem=300M --time=00:11:40 "))
        #expect(text.contains("--job-name=moon.moon.declared --chdir=/work/proj --kill-on-invalid-dep=yes --mem=1024M --time=00:11:00 "))
    }

    /// The here-document's delimiter occurs nowhere in the job's text, in
    /// one pass, whatever the text holds.
    @Test func theHereDocumentDelimiterIsFoundNowhereInTheBody() {
        #expect(SlurmExport.hereDocumentDelimiter(for: "echo hi") == "MOON_JOB_EOF")
        let candidates = ["MOON_JOB_EOF", "MOON_JOB_EOF_1", "MOON_JOB_EOF_11", "MOON_JOB_EOF_111", "MOON_JOB_EOF_9999"]
        let body = candidates.joined(separator: "\n")
        let delimiter = SlurmExport.hereDocumentDelimiter(for: body)
        #expect(!body.contains(delimiter))
        #expect(delimiter == "MOON_JOB_EOF_11111")
        let huge = String(repeating: "MOON_JOB_EOF_1\n", count: 20_000)
        #expect(!huge.contains(SlurmExport.hereDocumentDelimiter(for: huge)))
    }
}
