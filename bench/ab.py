#!/usr/bin/env python3
"""Two moon binaries on the same no-op, one run at a time in shuffled
order, many times: the comparison a change of a few percent needs.

usage: bench/ab.py A B [--runs N] [--tree DIR] [-- MOON ARGS...]

Each binary gets a copy of its own and a tree of its own (the generated C
project of `bench/cproject.py`, or a copy of DIR), built and then run 22
times to warm it: the compiled graph is kept per binary, so two binaries
taking turns in one tree would each parse the graph again. The copies are
dropped from the page cache first, so each is read back the same way (how
a binary came into the page cache changes its start by up to a third).
Then N rounds (300 by default), each running A and B once in a random
order, and for each: the median and first quartile of the wall time, the
median CPU time (moon and its children), and in how many rounds B was the
faster. `perf stat` rounds of 20 runs each could not tell apart changes of
3% that 300 single runs can. The arguments after `--` default to the
bench's no-op: `run -j 2 -q --output plain moon.yaml`.
"""
import os, random, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import work_directory  # noqa: E402
import cproject  # noqa: E402


def arguments():
    argv = sys.argv[1:]
    moon_args = ["run", "-j", "2", "-q", "--output", "plain", "moon.yaml"]
    if "--" in argv:
        moon_args = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    runs, tree, binaries = 300, None, []
    i = 0
    while i < len(argv):
        if argv[i] == "--runs":
            runs = int(argv[i + 1])
            i += 2
        elif argv[i] == "--tree":
            tree = os.path.abspath(argv[i + 1])
            i += 2
        else:
            binaries.append(os.path.abspath(argv[i]))
            i += 1
    if len(binaries) != 2 or runs < 1:
        raise SystemExit(__doc__)
    for b in binaries:
        if not os.access(b, os.X_OK):
            raise SystemExit(f"{b} is not an executable")
    return binaries, runs, tree, moon_args


def uncached(path):
    """Drops `path` from the page cache (its next reader reads it from the disk)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def one(binary, directory, args, env):
    start = time.perf_counter()
    proc = subprocess.Popen([binary] + args, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{binary} {' '.join(args)} failed in {directory}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main():
    binaries, runs, tree, args = arguments()
    work = work_directory("moon-ab-")
    env = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, "cache"))
    try:
        sides = []
        for label, binary in zip("AB", binaries):
            side = os.path.join(work, label)
            if tree:
                shutil.copytree(tree, side, symlinks=True, ignore=shutil.ignore_patterns(".moon"))
            else:
                cproject.generate(side)
            copy = os.path.join(work, f"moon-{label}")
            shutil.copyfile(binary, copy)
            os.chmod(copy, 0o755)
            uncached(copy)
            sides.append((label, copy, side))
        # A graph file changed less than 2 s before a load is not compiled for later runs.
        time.sleep(2.1)
        for label, copy, side in sides:
            subprocess.run([copy, "run", "-j", "2", "-q", "--output", "plain"], cwd=side, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(22):
                one(copy, side, args, env)
        # The store's files settle before a no-op's snapshot stands (NoopSnapshot.racyWindow).
        time.sleep(2.2)
        wall = {label: [] for label, _, _ in sides}
        cpu = {label: [] for label, _, _ in sides}
        b_faster = 0
        for _ in range(runs):
            order = sides[:]
            random.shuffle(order)
            this = {}
            for label, copy, side in order:
                w, c = one(copy, side, args, env)
                wall[label].append(w)
                cpu[label].append(c)
                this[label] = w
            b_faster += this["B"] < this["A"]
        print(f"moon {' '.join(args)}, {runs} rounds, in {work}")
        for label, binary in zip("AB", binaries):
            w = sorted(wall[label])
            print(f"  {label} {binary}: median {statistics.median(w) * 1e3:.3f} ms, first quartile {w[len(w) // 4] * 1e3:.3f} ms, "
                  f"CPU {statistics.median(cpu[label]) * 1e3:.3f} ms")
        ratio = statistics.median(wall["B"]) / statistics.median(wall["A"])
        print(f"  B/A {ratio:.3f}; B faster in {b_faster} of {runs} rounds")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
