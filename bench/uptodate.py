#!/usr/bin/env python3
"""The up-to-date check over 20,000 small source files (issue 7).

usage: bench/uptodate.py path/to/moon [--files N] [--quick]

One node with `sources: [src/**/*.txt]` over N files (default 20,000, in
200 directories). Measured, wall time of the whole `moon run`:
  first    no store yet: every file is read and hashed, the store is written
  second   nothing changed: the stat cache answers, nothing is read (median)
  touched  every mtime changed, content the same: all re-hashed, still skipped
and, reported by moon itself (MOON_STATE_STATS=1), the time spent inside the
check. For reference: the same `moon run` of a node without sources (moon's
own start-up), and a plain stat walk of the tree in Python (os.scandir).
The goal: the second check under 50 ms (release build).
go-task's figures from the issue, same 20,000 files: checksum 420 ms,
timestamp 144 ms, a plain stat walk about 20 ms.
"""
import os, re, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import work_directory  # noqa: E402

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
FILES = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 20000
REPEAT = 3 if "--quick" in sys.argv else 7
GOAL_MS = 50


def run(cwd, *extra):
    """Wall ms of `moon run`, the check's own ms, and whether the node was skipped."""
    env = dict(os.environ, MOON_STATE_STATS="1")
    start = time.perf_counter()
    proc = subprocess.run([MOON, "run", "--json", *extra], cwd=cwd, env=env, capture_output=True, text=True)
    wall = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"moon run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    m = re.search(r"checks took ([0-9.]+) ms; (\d+) files hashed, (\d+) from the stat cache", proc.stderr)
    check = float(m.group(1)) if m else float("nan")
    skipped = '"reason":"up-to-date"' in proc.stdout
    return wall, check, skipped, (m.group(2), m.group(3)) if m else ("?", "?")


def stat_walk(root):
    start = time.perf_counter()
    count = 0
    stack = [root]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                entry.stat()
                count += 1
    return (time.perf_counter() - start) * 1000, count


def main():
    if not os.path.exists(MOON):
        raise SystemExit(f"no moon binary at {MOON}; run `swift build -c release` first")
    work = work_directory("moon-uptodate-")
    try:
        per_dir = 100
        for d in range((FILES + per_dir - 1) // per_dir):
            os.makedirs(os.path.join(work, "src", f"d{d:03}"))
        for i in range(FILES):
            with open(os.path.join(work, "src", f"d{i // per_dir:03}", f"f{i:05}.txt"), "w") as f:
                f.write(f"file {i}\n")
        # Old mtimes, as a real tree has: nothing is "racily clean".
        past = time.time() - 3600
        for dirpath, _, names in os.walk(os.path.join(work, "src")):
            for n in names:
                os.utime(os.path.join(dirpath, n), (past, past))
        with open(os.path.join(work, "moon.yaml"), "w") as f:
            f.write("version: 1\nnodes:\n  check:\n    sources: [src/**/*.txt]\n    run: [true]\n")
        base = os.path.join(work, "base")
        os.makedirs(base)
        with open(os.path.join(base, "moon.yaml"), "w") as f:
            f.write("version: 1\nnodes:\n  check:\n    run: [true]\n")

        print(f"up-to-date check, {FILES} files, {MOON}")
        wall, check, skipped, (hashed, cached) = run(work)
        print(f"  first (cold)       moon run {wall:7.1f} ms   check {check:7.1f} ms   hashed {hashed}, cached {cached}")
        walls, checks = [], []
        for _ in range(REPEAT):
            wall, check, skipped, (hashed, cached) = run(work)
            if not skipped:
                raise SystemExit("the second run did not skip the node as up to date")
            walls.append(wall)
            checks.append(check)
        second = statistics.median(checks)
        print(f"  second (unchanged) moon run {statistics.median(walls):7.1f} ms   check {second:7.1f} ms   hashed {hashed}, cached {cached}  (median of {REPEAT})")
        now = time.time()
        for dirpath, _, names in os.walk(os.path.join(work, "src")):
            for n in names:
                os.utime(os.path.join(dirpath, n), (now - 60, now - 60))
        wall, check, skipped, (hashed, cached) = run(work)
        print(f"  touched, same text moon run {wall:7.1f} ms   check {check:7.1f} ms   hashed {hashed}, skipped: {skipped}")
        base_walls = [run(base)[0] for _ in range(REPEAT)]
        print(f"  no sources (moon start-up)  {statistics.median(base_walls):7.1f} ms")
        walk = statistics.median([stat_walk(os.path.join(work, "src"))[0] for _ in range(REPEAT)])
        print(f"  python stat walk            {walk:7.1f} ms")
        print(f"  go-task (issue): checksum 420 ms, timestamp 144 ms")
        verdict = "meets" if second < GOAL_MS else "MISSES"
        print(f"  goal: unchanged check under {GOAL_MS} ms: {verdict} ({second:.1f} ms)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
