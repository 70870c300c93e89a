#!/usr/bin/env python3
"""A real project's build: a generated C library of 300 .c files and 1000
headers, compiled by moon (`depfile:`, gcc -MMD) and by ninja (`deps = gcc`)
in two copies of the same tree, at -j2.

usage: bench/cproject.py path/to/moon [--quick]

Measured, wall time of the whole command, the two tools in turns (a b a b …)
so a machine whose speed drifts slows both alike; the ratio is the median of
the per-round moon/ninja ratios (below 1.0: moon is faster). Also the
median CPU time (user + sys, the compilers included), which a host loaded by
other work disturbs less than wall time:
  clean build       every object and the archive from nothing (outputs, the
                    store and ninja's logs removed)
  no-op, no snapshot  nothing changed, and no snapshot of the node states to
                    read (`.moon/noop/`, removed before each round): moon
                    reads the store and keeps a snapshot: the first no-op
                    after a run that wrote does this
  no-op             nothing changed: moon reads that snapshot
  one header edit   one header's content changes; the objects that include
                    it (about 4% of them) and the archive are rebuilt
    the same, moon --no-cache  that edit with moon storing nothing in its
                    output cache (ninja has none): what the cache's stores cost
  nested header     a header no .c file includes itself, included by five
                    other headers: the objects reaching it through them
                    (about 6%) and the archive are rebuilt
  one-node run      a graph of one node `run: true` against ninja with one
                    edge whose output is never made (both run it every time)
  c-project no-op   examples/c-project (8 sources, 4 tests) against an
                    equivalent build.ninja
Beside the wall and CPU medians, the user-space instructions of one no-op
and one one-node run of each tool (valgrind's callgrind, which a loaded
host does not disturb; skipped without valgrind).
Each .c file includes 12 of the headers (a fixed pseudo-random choice);
every header is small. The compiler is `cc -O0`. moon's output cache is a
directory of the bench's own, emptied with the outputs before each clean
build, so a clean build compiles (and fills the cache) as a first build does.
"""
import os, random, resource, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ninja_binary, work_directory  # noqa: E402

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
QUICK = "--quick" in sys.argv
SOURCES, HEADERS, PER_FILE = 300, 1000, 12
JOBS = 2
EDITED = "include/h0007.h"
# Included by no .c file, but by five headers (h0100.h … h0104.h).
NESTED = "include/base.h"
NESTED_BY = range(100, 105)
CC = "cc -O0 -Iinclude"
# moon's environment: the output cache in the bench's directory (set in main).
MOON_ENV = dict(os.environ)


def generate(root):
    rng = random.Random(7)
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, "include"))
    os.makedirs(os.path.join(root, "build"))
    write(os.path.join(root, NESTED), nested_header(0))
    for h in range(HEADERS):
        # The five headers' functions call base(), so an edit of base.h changes their objects.
        inner, body = ('#include "base.h"\n', f"base(x) * {h + 1}") if h in NESTED_BY else ("", f"x * {h + 1}")
        write(os.path.join(root, f"include/h{h:04}.h"),
              f"#ifndef H{h:04}\n#define H{h:04}\n{inner}static inline int h{h:04}(int x) {{ return {body}; }}\n#endif\n")
    includes = {}
    for s in range(SOURCES):
        chosen = sorted(rng.sample(range(HEADERS), PER_FILE))
        if s % 25 == 0 and 7 not in chosen:
            chosen[0] = 7  # the edited header: in 12 files (4%)
        includes[s] = chosen
        body = "".join(f'#include "h{h:04}.h"\n' for h in chosen)
        body += f"int f{s:04}(int x) {{ return " + " + ".join(f"h{h:04}(x)" for h in chosen) + "; }\n"
        write(os.path.join(root, f"src/f{s:04}.c"), body)
    objects = [f"build/f{s:04}.o" for s in range(SOURCES)]
    # moon: one node per object, and the archive.
    lines = ["version: 1", "name: cproject", "nodes:"]
    for s in range(SOURCES):
        lines += [f"  f{s:04}.o:",
                  f"    sources: [src/f{s:04}.c]",
                  f"    generates: [build/f{s:04}.o]",
                  f"    depfile: build/f{s:04}.d",
                  f"    run: {CC} -MMD -MF build/f{s:04}.d -c src/f{s:04}.c -o build/f{s:04}.o"]
    lines += ["  libapp.a:",
              "    needs: [" + ", ".join(f"f{s:04}.o" for s in range(SOURCES)) + "]",
              "    sources: [build/*.o]",
              "    generates: [build/libapp.a]",
              "    run: rm -f build/libapp.a && ar rcs build/libapp.a build/*.o"]
    write(os.path.join(root, "moon.yaml"), "\n".join(lines) + "\n")
    ninja = ["rule cc", f"  command = {CC} -MMD -MF $out.d -c $in -o $out", "  depfile = $out.d", "  deps = gcc",
             "rule ar", "  command = rm -f $out && ar rcs $out $in", ""]
    for s in range(SOURCES):
        ninja.append(f"build build/f{s:04}.o: cc src/f{s:04}.c")
    ninja.append("build build/libapp.a: ar " + " ".join(objects))
    ninja.append("default build/libapp.a")
    write(os.path.join(root, "build.ninja"), "\n".join(ninja) + "\n")
    # Sources written long ago, as in a checked-out tree.
    past = time.time() - 3600
    for dirpath, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (past, past))
    return (sum(1 for s in includes.values() if 7 in s),
            sum(1 for s in includes.values() if any(h in NESTED_BY for h in s)))


def nested_header(i):
    return f"#ifndef BASE_H\n#define BASE_H\nstatic inline int base(int x) {{ return x + {i}; }}\n#endif\n"


def one_node(root):
    """One node that always runs `true`; ninja's edge names an output the command never makes."""
    os.makedirs(root)
    write(os.path.join(root, "moon.yaml"), "version: 1\nname: one\nnodes:\n  t:\n    run: \"true\"\n")
    write(os.path.join(root, "build.ninja"), "rule t\n  command = true\nbuild never-made: t\ndefault never-made\n")


def c_project(root, source):
    """examples/c-project, and a build.ninja doing what its moon.yaml does."""
    shutil.copytree(source, root)
    srcs = sorted(f[:-2] for f in os.listdir(os.path.join(root, "src")) if f.endswith(".c") and f != "main.c")
    tests = sorted(f[:-3] for f in os.listdir(os.path.join(root, "tests")) if f.endswith(".in"))
    cflags = "-O2 -Wall -Wextra -std=c11"
    lines = ["rule cc", f"  command = cc {cflags} -Iinclude -MD -MF $out.d -c $in -o $out", "  depfile = $out.d", "  deps = gcc",
             "rule ar", "  command = rm -f $out && ar rcs $out $in",
             "rule link", f"  command = cc {cflags} -Iinclude -MD -MF $out.d -o $out src/main.c build/libcalc.a -lm",
             "  depfile = $out.d", "  deps = gcc",
             "rule check", "  command = tests/check.sh build/calc $name", ""]
    for s in srcs:
        lines.append(f"build build/{s}.o: cc src/{s}.c")
    lines.append("build build/libcalc.a: ar " + " ".join(f"build/{s}.o" for s in srcs))
    lines.append("build build/calc: link src/main.c build/libcalc.a")
    for t in tests:
        lines.append(f"build build/tests/{t}.actual: check build/calc tests/check.sh tests/{t}.in tests/{t}.expected")
        lines.append(f"  name = {t}")
    lines.append("build test: phony " + " ".join(f"build/tests/{t}.actual" for t in tests))
    lines.append("default test")
    write(os.path.join(root, "build.ninja"), "\n".join(lines) + "\n")


def instructions(argv, cwd, env=None):
    """User-space instructions of one run (callgrind); None without valgrind.
    valgrind cannot read moon's DWARF 5, so moon is measured as a `strip -g` copy."""
    if shutil.which("valgrind") is None:
        return None
    out = os.path.join(cwd, ".callgrind.out")
    # Once before, unmeasured: the compiled graph is keyed on the running
    # executable, which under valgrind is valgrind's, so the first run compiles.
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv, cwd=cwd, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + argv, cwd=cwd, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            os.remove(out)
            return int(line.split(":")[1].strip())
    return None


def count_row(label, moon_cmd, ninja_cmd, moon_dir, ninja_dir):
    m = instructions(moon_cmd, moon_dir, MOON_ENV)
    k = instructions(ninja_cmd, ninja_dir)
    if m is None or k is None:
        print(f"{label:<34} (no valgrind: instructions not counted)")
        return
    print(f"{label:<34} moon {m / 1e6:7.2f} M instructions  ninja {k / 1e6:7.2f} M  {m / k:5.2f}x ninja")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def timed(argv, cwd, env=None):
    """Wall time and CPU time (user + sys of the command and its children), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd} ({proc.returncode}):\n{proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def clean(moon_dir, ninja_dir):
    for d in (moon_dir, ninja_dir):
        shutil.rmtree(os.path.join(d, "build"), ignore_errors=True)
        os.makedirs(os.path.join(d, "build"))
    shutil.rmtree(os.path.join(moon_dir, ".moon"), ignore_errors=True)
    shutil.rmtree(MOON_ENV["MOON_CACHE_DIR"], ignore_errors=True)
    for f in (".ninja_log", ".ninja_deps"):
        p = os.path.join(ninja_dir, f)
        if os.path.exists(p):
            os.remove(p)


def unsettle(moon_dir):
    """The state of a no-op that follows a change: no snapshot of the node
    states (`.moon/noop/`), so the run reads the store and writes one; and
    the store's last write older than the snapshot's racy window (100 ms)."""
    shutil.rmtree(os.path.join(moon_dir, ".moon", "noop"), ignore_errors=True)
    time.sleep(0.15)


def rounds(label, n, moon_cmd, ninja_cmd, moon_dir, ninja_dir, before=None):
    moon_t, ninja_t, ratios, moon_cpu, ninja_cpu = [], [], [], [], []
    for i in range(n):
        if before:
            before(i)
        # Alternate which goes first, so neither always meets a warm or a cold cache.
        if i % 2 == 0:
            m = timed(moon_cmd, moon_dir, MOON_ENV)
            k = timed(ninja_cmd, ninja_dir)
        else:
            k = timed(ninja_cmd, ninja_dir)
            m = timed(moon_cmd, moon_dir, MOON_ENV)
        moon_t.append(m[0])
        ninja_t.append(k[0])
        ratios.append(m[0] / k[0])
        moon_cpu.append(m[1])
        ninja_cpu.append(k[1])
    mm, km, r = statistics.median(moon_t), statistics.median(ninja_t), statistics.median(ratios)
    mc, kc = statistics.median(moon_cpu), statistics.median(ninja_cpu)
    cpu = f"{mc / kc:5.2f}x" if kc > 0 else "    -"
    print(f"{label:<34} moon {mm * 1000:9.1f} ms  ninja {km * 1000:9.1f} ms  {r:5.2f}x ninja  ({n} rounds)"
          f"  CPU {mc * 1000:.1f} / {kc * 1000:.1f} ms  {cpu}")
    return r


def main():
    if not os.path.exists(MOON):
        raise SystemExit(f"no moon binary at {MOON}; run `make release` first")
    ninja = ninja_binary()
    if ninja is None:
        raise SystemExit("no ninja (pip install ninja)")
    work = work_directory("moon-bench-c-")
    MOON_ENV["MOON_CACHE_DIR"] = os.path.join(work, "cache")
    # The instruction counts read a copy without debug info (valgrind cannot read DWARF 5).
    counted = os.path.join(work, "moon-stripped")
    subprocess.run(["strip", "-g", "-o", counted, MOON], check=False)
    if not os.path.exists(counted):
        counted = MOON
    try:
        moon_dir, ninja_dir = os.path.join(work, "moon"), os.path.join(work, "ninja")
        including, nesting = generate(moon_dir)
        shutil.copytree(moon_dir, ninja_dir, symlinks=True)
        print(f"moon cproject bench: {SOURCES} .c files, {HEADERS} headers, {PER_FILE} includes each, -j{JOBS}, in {work}")
        args = ["run", "-j", str(JOBS), "-q", "--output", "plain", "moon.yaml"]
        moon_cmd = [MOON] + args
        ninja_cmd = [ninja, "-j", str(JOBS), "--quiet"]

        rounds("clean build", 1 if QUICK else 3, moon_cmd, ninja_cmd, moon_dir, ninja_dir,
               before=lambda i: clean(moon_dir, ninja_dir))
        rounds("no-op, no snapshot", 3 if QUICK else 9, moon_cmd, ninja_cmd, moon_dir, ninja_dir,
               before=lambda i: unsettle(moon_dir))
        rounds("no-op", 5 if QUICK else 21, moon_cmd, ninja_cmd, moon_dir, ninja_dir)
        count_row("no-op, instructions", [counted] + args, ninja_cmd, moon_dir, ninja_dir)

        def edit(i):
            for d in (moon_dir, ninja_dir):
                write(os.path.join(d, EDITED), f"#ifndef H0007\n#define H0007\nstatic inline int h0007(int x) {{ return x * {100 + i}; }}\n#endif\n")
        rounds(f"one header edit ({including} objects)", 3 if QUICK else 9, moon_cmd, ninja_cmd, moon_dir, ninja_dir, before=edit)
        # ninja keeps no output cache: without moon's, the two rows split
        # moon's time between running the nodes and storing their outputs.
        rounds("  the same, moon --no-cache", 3 if QUICK else 9, moon_cmd[:-1] + ["--no-cache"] + moon_cmd[-1:], ninja_cmd,
               moon_dir, ninja_dir, before=lambda i: edit(50 + i))

        def edit_nested(i):
            for d in (moon_dir, ninja_dir):
                write(os.path.join(d, NESTED), nested_header(100 + i))
        rounds(f"nested header edit ({nesting} objects)", 3 if QUICK else 9, moon_cmd, ninja_cmd, moon_dir, ninja_dir,
               before=edit_nested)

        # What moon rebuilt after one more edit: only the objects that include the header, and the archive.
        edit(99)
        out = subprocess.run([MOON, "run", "-j", str(JOBS), "--json", "moon.yaml"], cwd=moon_dir, env=MOON_ENV,
                             capture_output=True, text=True).stdout
        ran = out.count('"event":"complete"')
        print(f"after an edit of {EDITED}: moon ran {ran} nodes ({including} objects include it, plus the archive)")
        edit_nested(99)
        out = subprocess.run([MOON, "run", "-j", str(JOBS), "--json", "moon.yaml"], cwd=moon_dir, env=MOON_ENV,
                             capture_output=True, text=True).stdout
        ran = out.count('"event":"complete"')
        print(f"after an edit of {NESTED}: moon ran {ran} nodes ({nesting} objects reach it, plus the archive)")

        one = os.path.join(work, "one")
        one_node(one)
        # As below: a graph file changed less than 2 s before a load is not
        # compiled for later runs (GraphCache.racyWindow), and a user's is older.
        time.sleep(2.1)
        rounds("one-node run (true)", 7 if QUICK else 31, moon_cmd, ninja_cmd, one, one)
        # valgrind has no pidfd_open: under it moon's spawn fails, so this counts moon's path to a failed start.
        count_row("one-node run, instructions*", [counted] + args, ninja_cmd, one, one)
        print("  * under valgrind moon cannot start the node (no pidfd_open): its path to the failed start")

        example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "c-project")
        ex_moon, ex_ninja = os.path.join(work, "ex-moon"), os.path.join(work, "ex-ninja")
        c_project(ex_moon, example)
        c_project(ex_ninja, example)
        # A graph file changed less than 2 s before a load is not compiled
        # for later runs (GraphCache.racyWindow): a checkout is older than that.
        time.sleep(2.1)
        rounds("examples/c-project clean build", 1 if QUICK else 3, moon_cmd, ninja_cmd, ex_moon, ex_ninja,
               before=lambda i: clean(ex_moon, ex_ninja))
        rounds("examples/c-project no-op, no snapshot", 3 if QUICK else 9, moon_cmd, ninja_cmd, ex_moon, ex_ninja,
               before=lambda i: unsettle(ex_moon))
        rounds("examples/c-project no-op", 5 if QUICK else 21, moon_cmd, ninja_cmd, ex_moon, ex_ninja)
        count_row("examples/c-project no-op, instr.", [counted] + args, ninja_cmd, ex_moon, ex_ninja)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
