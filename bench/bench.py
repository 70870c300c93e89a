#!/usr/bin/env python3
"""moon's benchmarks: the same generated graphs run by moon, ninja and make
in one session, reported as ratios (a ratio below 1.0 means moon is faster).

usage: bench/bench.py path/to/moon [--quick] [--only fanout]

--only fanout runs only the fan-out rows: a 10,000-instance for-each over a
glob, loaded, expanded and dry-run against `ninja -n` on the same build, and
a dynamic fan-out of 10,000 items, from the upstream's end to the first
instance's start.

Each measurement is the median of several runs, wall time of the whole
command, and the peak resident memory of the moon process. The commands
compared on one graph run in turns, so a machine whose speed drifts during
the bench does not favour one of them.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
QUICK = "--quick" in sys.argv
ONLY = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv[:-1] else None
# A virtual machine's speed can drift in phases of seconds; nine
# interleaved runs keep one phase from deciding.
REPEAT = 3 if QUICK else 9
JOBS = 2


def work_directory(prefix):
    """A new directory for one script's trees, under `MOON_BENCH_DIR`, else
    the repository's `.build/bench/`: where a project lives, not in /tmp.
    Where /tmp is a directory of the root file system, every compiler's
    temporary files are made and removed there, and ext4 without a journal
    searches a new file's inode past the recently removed ones
    (`recently_deleted`), so a file made under /tmp can cost tens of times
    what one made elsewhere on the same disk does: a charge on every file a
    tool makes (moon's output cache makes two per stored node), not on the
    tool's own work."""
    base = os.environ.get("MOON_BENCH_DIR") or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                             ".build", "bench")
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def ninja_binary():
    """The ninja executable itself: `pip install ninja` puts it in the Python
    package, and PATH may only hold a shim (a shell script) in front of it,
    whose start-up would be counted against ninja."""
    try:
        import ninja
        path = os.path.join(ninja.BIN_DIR, "ninja")
        if os.access(path, os.X_OK):
            return path
    except ImportError:
        pass
    return shutil.which("ninja")


def measure(argv, cwd, repeat=REPEAT):
    """Median wall seconds and max RSS (MB) over `repeat` runs; checks the exit code."""
    times, rss = [], 0
    for _ in range(repeat):
        for f in (".ninja_log", ".ninja_deps"):
            p = os.path.join(cwd, f)
            if os.path.exists(p):
                os.remove(p)
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed in {cwd} with {proc.returncode}:\n{err[-2000:]}")
        times.append(elapsed)
        rss = max(rss, usage.ru_maxrss / 1024)
    return statistics.median(times), rss


def measure_interleaved(commands, cwd, repeat=REPEAT):
    """Like `measure` for several commands, run in turns (a, b, c, a, b, c…),
    so that a machine whose speed drifts during the bench slows all of them
    alike and their ratios stay fair. Returns [(median seconds, max RSS MB)]."""
    results = [([], 0.0) for _ in commands]
    for _ in range(repeat):
        for i, argv in enumerate(commands):
            t, rss = measure(argv, cwd, repeat=1)
            times, peak = results[i]
            times.append(t)
            results[i] = (times, max(peak, rss))
    return [(statistics.median(times), peak) for times, peak in results]


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Graph:
    """A DAG: names in file order, needs per name, and a shell command per node."""

    def __init__(self, name):
        self.name, self.order, self.needs, self.cmd = name, [], {}, {}

    def add(self, node, cmd, needs=()):
        self.order.append(node)
        self.needs[node] = list(needs)
        self.cmd[node] = cmd

    def moon(self, exec_form=False):
        lines = ["version: 1", f"name: {self.name}", "nodes:"]
        for n in self.order:
            lines.append(f"  {n}:")
            c = self.cmd[n]
            if c.startswith("uses:"):
                lines.append(f"    {c}")
            elif exec_form:
                lines.append(f"    run: [{', '.join(c.split())}]")
            else:
                lines.append(f"    run: {c}")
            if self.needs[n]:
                lines.append(f"    needs: [{', '.join(self.needs[n])}]")
        return "\n".join(lines) + "\n"

    def ninja(self):
        lines = ["rule r", "  command = $cmd", ""]
        for n in self.order:
            deps = " ".join(self.needs[n])
            lines.append(f"build {n}: r" + (f" | {deps}" if deps else ""))
            lines.append(f"  cmd = {self.cmd[n]}")
        lines.append(f"build all: phony {' '.join(self.order)}")
        lines.append("default all")
        return "\n".join(lines) + "\n"

    def make(self):
        lines = [".PHONY: all " + " ".join(self.order), "all: " + " ".join(self.order)]
        for n in self.order:
            lines.append(f"{n}: {' '.join(self.needs[n])}")
            lines.append(f"\t@{self.cmd[n]}")
        return "\n".join(lines) + "\n"


def independent(n=1000):
    g = Graph("independent")
    for i in range(n):
        g.add(f"n{i}", "true")
    return g


def layers(count=50, width=20, fan_in=None):
    """`count` layers of `width` nodes; each needs the whole previous layer,
    or `fan_in` nodes of it."""
    g = Graph("layers")
    prev = []
    for l in range(count):
        cur = [f"l{l}_{i}" for i in range(width)]
        for i, c in enumerate(cur):
            needs = prev if fan_in is None or not prev else [prev[(i + k) % width] for k in range(fan_in)]
            g.add(c, "true", needs)
        prev = cur
    return g


def chain(n=300):
    g = Graph("chain")
    for i in range(n):
        g.add(f"c{i}", "true", [f"c{i-1}"] if i else [])
    return g


def seed():
    # The seed scenario: 3 needs 1 and 2, 0 needs 3 and 4, final needs 0 and 5.
    g = Graph("seed")
    s = "sleep 0.2"
    g.add("one", s); g.add("two", s); g.add("four", s); g.add("five", s)
    g.add("three", s, ["one", "two"])
    g.add("zero", s, ["three", "four"])
    g.add("final", s, ["zero", "five"])
    return g


def foreach_glob(d, n=10000):
    """A C build of `n` files written as one for-each over a glob, and the
    same build as build.ninja (one build line per object)."""
    os.makedirs(os.path.join(d, "src"))
    for i in range(n):
        write(os.path.join(d, "src", f"f{i:05}.c"), "")
    write(os.path.join(d, "moon.yaml"), "\n".join([
        "version: 1", "name: foreach", "nodes:", "  obj:",
        '    for-each: { glob: "src/*.c" }',
        '    sources: ["${{ item }}"]',
        '    generates: ["build/${{ item.stem }}.o"]',
        '    depfile: "build/${{ item.stem }}.d"',
        "    run: cc -MD -MF build/${{ item.stem }}.d -c ${{ item }} -o build/${{ item.stem }}.o",
        "  app:", "    needs: [obj]", "    run: cc -o app build/*.o", ""]))
    lines = ["rule cc", "  command = cc -MD -MF $out.d -c $in -o $out", "  depfile = $out.d", "  deps = gcc",
             "rule link", "  command = cc -o $out build/*.o", ""]
    for i in range(n):
        lines.append(f"build build/f{i:05}.o: cc src/f{i:05}.c")
    lines.append("build app: link " + " ".join(f"build/f{i:05}.o" for i in range(n)))
    lines.append("default app")
    write(os.path.join(d, "build.ninja"), "\n".join(lines) + "\n")


def dynamic_fanout(d, n=10000):
    """`shards` lists `n` items in $MOON_OUTPUT; `process` fans out over them."""
    import json
    write(os.path.join(d, "items.json"), json.dumps([f"f{i:05}" for i in range(n)]) + "\n")
    write(os.path.join(d, "moon.yaml"), "\n".join([
        "version: 1", "name: dynamic", "nodes:",
        "  shards:", '    run: printf \'files=%s\\n\' "$(cat items.json)" >> "$MOON_OUTPUT"',
        "  process:", "    needs: [shards]", "    for-each: ${{ needs.shards.outputs.files }}",
        "    run: [true]", ""]))


def first_instance_delay(d, template="process", upstream="shards"):
    """Milliseconds from the upstream's complete to the first instance's
    start, from one run's --json timestamps; the run is stopped there."""
    import json, signal
    proc = subprocess.Popen([MOON, "run", "-j", str(JOBS), "--json", "moon.yaml"], cwd=d,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    done = None
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] == "complete" and event["node"] == upstream:
                done = event["ts"]
            elif event["event"] == "start" and event.get("template") == template:
                return (parse_ts(event["ts"]) - parse_ts(done)) * 1000
        raise SystemExit(f"no instance of {template} started in {d}")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.stdout.close()
        proc.wait()


def parse_ts(ts):
    from datetime import datetime
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def fanout_rows(work, ninja):
    """The fan-out rows (targets: dry run within 0.5x ninja -n; the first
    instance within 50 ms of its upstream's end)."""
    d = os.path.join(work, "foreach"); os.makedirs(d)
    foreach_glob(d)
    nt = measure([ninja, "-n", "-j", str(JOBS)], d)[0] if ninja else None
    mt, rss = measure([MOON, "run", "-n", "moon.yaml"], d)
    row("for-each over a glob, 10,000 instances, dry run vs ninja -n", mt, nt, "ninja", rss)
    d = os.path.join(work, "dynamic"); os.makedirs(d)
    dynamic_fanout(d)
    delays = [first_instance_delay(d) for _ in range(3 if QUICK else 7)]
    print(f"{'dynamic fan-out, 10,000 items: end of upstream to first instance':<70} {statistics.median(delays):7.1f} ms "
          f"(median of {len(delays)}; target 50 ms)")


def row(label, moon_t, other_t=None, other="", rss=None):
    ratio = f"{moon_t / other_t:5.2f}x {other}" if other_t else ""
    mem = f"{rss:6.1f} MB" if rss is not None else ""
    other_s = f"{other_t:7.3f}s" if other_t else "        "
    print(f"{label:<44} moon {moon_t:7.3f}s  {other_s}  {ratio:<12} {mem}")


def main():
    if not os.path.exists(MOON):
        raise SystemExit(f"no moon binary at {MOON}; run `make release` first")
    ninja = ninja_binary()
    have_ninja = ninja is not None
    work = work_directory("moon-bench-")
    # An output cache of the bench's own, empty at the start: what earlier
    # runs stored in the user's cache would otherwise change what is measured.
    os.environ["MOON_CACHE_DIR"] = os.path.join(work, "cache")
    if ONLY == "fanout":
        try:
            fanout_rows(work, ninja)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    print(f"moon bench: {JOBS} jobs, median of {REPEAT} runs, in {work}")
    print(f"{'graph':<44} {'moon':>12}  {'other':>8}  {'ratio':<12} peak RSS")
    try:
        for g in (independent(), layers(), chain(), seed()):
            d = os.path.join(work, g.name)
            os.makedirs(d)
            write(os.path.join(d, "moon.yaml"), g.moon())
            write(os.path.join(d, "exec.yaml"), g.moon(exec_form=True))
            write(os.path.join(d, "build.ninja"), g.ninja())
            write(os.path.join(d, "Makefile"), g.make())
            commands = [[MOON, "run", "-j", str(JOBS), "--output", "plain", "-q", "moon.yaml"],
                        [MOON, "run", "-j", str(JOBS), "--output", "plain", "-q", "exec.yaml"],
                        ["make", "-s", "-j", str(JOBS)]]
            if have_ninja:
                commands.append([ninja, "-j", str(JOBS), "--quiet"])
            # The event stream too, on one graph: every event is encoded, so
            # what it costs per node shows here and nowhere else.
            json = g.name == "independent"
            if json:
                commands.append([MOON, "run", "-j", str(JOBS), "--json", "moon.yaml"])
            measured = measure_interleaved(commands, d)
            (mt, rss), (et, erss), (kt, _) = measured[:3]
            if have_ninja:
                row(f"{g.name} ({len(g.order)} nodes, shell) vs ninja", mt, measured[3][0], "ninja", rss)
                if json:
                    jt, jrss = measured[4]
                    row(f"{g.name} ({len(g.order)} nodes, --json) vs ninja", jt, measured[3][0], "ninja", jrss)
            row(f"{g.name} ({len(g.order)} nodes, shell) vs make", mt, kt, "make", rss)
            row(f"{g.name} ({len(g.order)} nodes, exec) vs make", et, kt, "make", erss)

        # 10,000 built-in nodes: no processes, only moon's own overhead.
        g = Graph("builtins")
        for i in range(10000):
            g.add(f"b{i}", "uses: echo\n    with: { message: hi }", [f"b{i-1}"] if i % 10 else [])
        d = os.path.join(work, g.name); os.makedirs(d)
        write(os.path.join(d, "moon.yaml"), g.moon())
        mt, rss = measure([MOON, "run", "-j", str(JOBS), "--output", "plain", "-q", "moon.yaml"], d)
        row("10,000 built-in nodes", mt, rss=rss)

        # Dry run and check of 10,000 nodes (100 layers of 100, 3 needs each) against ninja -n.
        g = layers(100, 100, fan_in=3)
        g.name = "dry"
        d = os.path.join(work, g.name); os.makedirs(d)
        write(os.path.join(d, "moon.yaml"), g.moon())
        write(os.path.join(d, "build.ninja"), g.ninja())
        nt = measure([ninja, "-n", "-j", str(JOBS)], d)[0] if have_ninja else None
        mt, rss = measure([MOON, "run", "-n", "moon.yaml"], d)
        row("dry run, 10,000 nodes vs ninja -n", mt, nt, "ninja", rss)
        mt, rss = measure([MOON, "check", "moon.yaml"], d)
        row("check, 10,000 nodes vs ninja -n", mt, nt, "ninja", rss)

        # Before the 100,000-node chain: a child's peak RSS (wait4) counts
        # the bench's own memory at the fork, and that chain's text is large.
        fanout_rows(work, ninja if have_ninja else None)

        # 100,000 nodes in a chain: dry run (goal: under 5 s).
        g = chain(100000)
        d = os.path.join(work, "chain100k"); os.makedirs(d)
        write(os.path.join(d, "moon.yaml"), g.moon())
        mt, rss = measure([MOON, "run", "-n", "moon.yaml"], d, repeat=1)
        row("dry run, 100,000-node chain", mt, rss=rss)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
