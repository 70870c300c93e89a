#!/usr/bin/env python3
"""A data pipeline of two per-file stages over 5,000 input files, then one
aggregate: moon (`for-each` twice, each `count[X]` needing only its own
`text[X]`), GNU make (pattern rules) and Snakemake (wildcards), in three
copies of the same tree, at -j2.

usage: bench/pipeline.py path/to/moon [--quick] [--files N] [--snakemake-clean]

The work per file is tiny (`tr`, `wc`), so what is measured is mostly each
tool's own cost: planning, up-to-date checks and starting jobs. Measured,
wall time of the whole command, the tools in turns, with the ratio of the
medians to make's; beside it the tool's own CPU time (its process only,
read from its zombie before it is reaped: the jobs excluded) and the peak
RSS of the run's largest process (the tool itself: the jobs are small):
  dry run, clean tree   what would run, nothing built (`-n`)
  clean run             everything from nothing
  no-op                 nothing changed
  dry run, built tree   `-n` when nothing would run
  one file changed      one input's content changes: its two jobs and the
                        aggregate rerun
Snakemake plans in seconds but runs a few jobs a second at this size, so its
clean run is skipped unless --snakemake-clean is given; its built tree is a
copy of make's outputs (mtimes kept), as a user who switched tools would
have. Snakemake is installed with pip into .build/bench-venv when missing;
without it (no network) its column is left out.
"""
import os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import work_directory  # noqa: E402

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
QUICK = "--quick" in sys.argv
FILES = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else (1000 if QUICK else 5000)
SNAKEMAKE_CLEAN = "--snakemake-clean" in sys.argv
JOBS = 2
VENV = os.path.abspath(".build/bench-venv")

MOON_GRAPH = """version: 1
name: pipeline
default: total
nodes:
  text:
    for-each: { glob: "in/*.txt" }
    sources: ["${{ item }}"]
    generates: ["mid/${{ item.name }}"]
    run: tr a-z A-Z < ${{ item }} > mid/${{ item.name }}
  count:
    for-each: { glob: "in/*.txt" }
    needs: ["text[${{ item }}]"]
    sources: ["mid/${{ item.name }}"]
    generates: ["out/${{ item.name }}"]
    run: wc -w < mid/${{ item.name }} > out/${{ item.name }}
  total:
    needs: [count]
    sources: ["out/*.txt"]
    generates: [total.txt]
    run: cat out/*.txt | awk '{ s += $1 } END { print s }' > total.txt
"""

MAKEFILE = """INPUTS := $(wildcard in/*.txt)
COUNTS := $(INPUTS:in/%=out/%)
.SECONDARY:
total.txt: $(COUNTS)
\tcat out/*.txt | awk '{ s += $$1 } END { print s }' > total.txt
mid/%.txt: in/%.txt
\ttr a-z A-Z < $< > $@
out/%.txt: mid/%.txt
\twc -w < $< > $@
"""

SNAKEFILE = """NAMES, = glob_wildcards("in/{name}.txt")
rule all:
    input: "total.txt"
rule text:
    input: "in/{name}.txt"
    output: "mid/{name}.txt"
    shell: "tr a-z A-Z < {input} > {output}"
rule count:
    input: "mid/{name}.txt"
    output: "out/{name}.txt"
    shell: "wc -w < {input} > {output}"
rule total:
    input: expand("out/{name}.txt", name=NAMES)
    output: "total.txt"
    shell: "cat out/*.txt | awk '{{ s += $1 }} END {{ print s }}' > total.txt"
"""


def snakemake_binary():
    exe = os.path.join(VENV, "bin", "snakemake")
    if os.access(exe, os.X_OK):
        return exe
    try:
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "snakemake"], check=True, timeout=900)
    except (subprocess.SubprocessError, OSError) as error:
        print(f"(no Snakemake: {error}; its column is left out)")
        return None
    return exe if os.access(exe, os.X_OK) else None


def generate(root):
    for d in ("in", "mid", "out"):
        os.makedirs(os.path.join(root, d))
    for i in range(FILES):
        write(os.path.join(root, f"in/p{i:05}.txt"), f"page {i} of the corpus\n" + "some words here\n" * (i % 7 + 1))
    write(os.path.join(root, "moon.yaml"), MOON_GRAPH)
    write(os.path.join(root, "Makefile"), MAKEFILE)
    write(os.path.join(root, "Snakefile"), SNAKEFILE)
    past = time.time() - 3600
    for dirpath, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (past, past))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def timed(argv, cwd, env=None):
    """Wall seconds, the process's own CPU seconds and the peak RSS (MB) of
    the largest process of the run."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Wait without reaping, to read the zombie's own CPU time.
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    elapsed = time.perf_counter() - start
    with open(f"/proc/{proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    _, status, usage = os.wait4(proc.pid, 0)
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{stderr[-2000:]}")
    return elapsed, own, usage.ru_maxrss / 1024


def clean(d):
    for sub in ("mid", "out"):
        shutil.rmtree(os.path.join(d, sub))
        os.makedirs(os.path.join(d, sub))
    for path in ("total.txt",):
        if os.path.exists(os.path.join(d, path)):
            os.remove(os.path.join(d, path))
    for sub in (".moon", ".snakemake"):
        shutil.rmtree(os.path.join(d, sub), ignore_errors=True)


def row(label, n, tools, before=None):
    """Runs each tool `n` times in turns and prints medians and ratios to make."""
    results = {name: [] for name in tools}
    for i in range(n):
        if before:
            before(i)
        order = list(tools) if i % 2 == 0 else list(reversed(tools))
        for name in order:
            argv, cwd, env = tools[name]
            results[name].append(timed(argv, cwd, env))
    medians = {name: tuple(statistics.median(r[k] for r in runs) for k in range(3)) for name, runs in results.items()}
    base = medians["make"][0]
    cells = []
    for name, (wall, cpu, rss) in medians.items():
        cells.append(f"{name} {wall:7.2f} s ({wall / base:5.2f}x, own CPU {cpu:6.2f} s, {rss:5.0f} MB)")
    print(f"{label:<20} " + "  ".join(cells) + f"  [{n} rounds]")
    sys.stdout.flush()


def main():
    if not os.path.exists(MOON):
        raise SystemExit(f"no moon binary at {MOON}; run `make release` first")
    snakemake = snakemake_binary()
    work = work_directory("moon-bench-pipeline-")
    env = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, "cache"), LC_ALL="C")
    try:
        dirs = {name: os.path.join(work, name) for name in ("moon", "make", "snakemake")}
        generate(dirs["moon"])
        shutil.copytree(dirs["moon"], dirs["make"], symlinks=True)
        shutil.copytree(dirs["moon"], dirs["snakemake"], symlinks=True)
        print(f"moon pipeline bench: {FILES} files, two per-file stages and an aggregate "
              f"({2 * FILES + 1} jobs), -j{JOBS}, in {work}")
        moon = [MOON, "run", "-j", str(JOBS), "-q", "--no-cache", "--output", "plain"]
        make = ["make", "-j", str(JOBS), "-s"]
        smk = [snakemake, "-c", str(JOBS), "-q", "all"] if snakemake else None
        run = {"moon": (moon, dirs["moon"], env), "make": (make, dirs["make"], env)}
        dry = {"moon": (moon + ["-n"], dirs["moon"], env), "make": (make + ["-n"], dirs["make"], env)}
        if smk:
            dry["snakemake"] = (smk + ["-n"], dirs["snakemake"], env)
        small = 1 if QUICK else 3

        row("dry run, clean tree", small, dry)
        row("clean run", 1 if QUICK else 2, run, before=lambda i: [clean(dirs["moon"]), clean(dirs["make"])])
        if smk:
            # Snakemake's built tree: make's outputs, mtimes kept.
            for sub in ("mid", "out"):
                shutil.rmtree(os.path.join(dirs["snakemake"], sub))
                shutil.copytree(os.path.join(dirs["make"], sub), os.path.join(dirs["snakemake"], sub))
            shutil.copy2(os.path.join(dirs["make"], "total.txt"), os.path.join(dirs["snakemake"], "total.txt"))
            run["snakemake"] = (smk, dirs["snakemake"], env)
            if SNAKEMAKE_CLEAN:
                clean(dirs["snakemake"])
                row("clean run, Snakemake", 1, {"make": run["make"], "snakemake": run["snakemake"]},
                    before=lambda i: clean(dirs["make"]))
        row("no-op", 3 if QUICK else 7, run)
        row("dry run, built tree", small, dry)

        def edit(i):
            for d in dirs.values():
                write(os.path.join(d, "in/p00007.txt"), f"page 7, edit {i}\n")
        row("one file changed", small, run, before=edit)
        totals = {name: open(os.path.join(d, "total.txt")).read() for name, d in dirs.items() if name in run}
        if len(set(totals.values())) != 1:
            raise SystemExit(f"the tools disagree on total.txt: {totals}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
