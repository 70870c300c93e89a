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
  no-op             nothing changed
  one header edit   one header's content changes; the objects that include
                    it (about 4% of them) and the archive are rebuilt
Each .c file includes 12 of the headers (a fixed pseudo-random choice);
every header is small. The compiler is `cc -O0`. moon's output cache is a
directory of the bench's own, emptied with the outputs before each clean
build, so a clean build compiles (and fills the cache) as a first build does.
"""
import os, random, resource, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ninja_binary  # noqa: E402

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
QUICK = "--quick" in sys.argv
SOURCES, HEADERS, PER_FILE = 300, 1000, 12
JOBS = 2
EDITED = "include/h0007.h"
CC = "cc -O0 -Iinclude"
# moon's environment: the output cache in the bench's directory (set in main).
MOON_ENV = dict(os.environ)


def generate(root):
    rng = random.Random(7)
    os.makedirs(os.path.join(root, "src"))
    os.makedirs(os.path.join(root, "include"))
    os.makedirs(os.path.join(root, "build"))
    for h in range(HEADERS):
        write(os.path.join(root, f"include/h{h:04}.h"),
              f"#ifndef H{h:04}\n#define H{h:04}\nstatic inline int h{h:04}(int x) {{ return x * {h + 1}; }}\n#endif\n")
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
    return sum(1 for s in includes.values() if 7 in s)


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
        shutil.rmtree(os.path.join(d, "build"))
        os.makedirs(os.path.join(d, "build"))
    shutil.rmtree(os.path.join(moon_dir, ".moon"), ignore_errors=True)
    shutil.rmtree(MOON_ENV["MOON_CACHE_DIR"], ignore_errors=True)
    for f in (".ninja_log", ".ninja_deps"):
        p = os.path.join(ninja_dir, f)
        if os.path.exists(p):
            os.remove(p)


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
    work = tempfile.mkdtemp(prefix="moon-bench-c-")
    MOON_ENV["MOON_CACHE_DIR"] = os.path.join(work, "cache")
    try:
        moon_dir, ninja_dir = os.path.join(work, "moon"), os.path.join(work, "ninja")
        including = generate(moon_dir)
        shutil.copytree(moon_dir, ninja_dir, symlinks=True)
        print(f"moon cproject bench: {SOURCES} .c files, {HEADERS} headers, {PER_FILE} includes each, -j{JOBS}, in {work}")
        moon_cmd = [MOON, "run", "-j", str(JOBS), "-q", "--output", "plain", "moon.yaml"]
        ninja_cmd = [ninja, "-j", str(JOBS), "--quiet"]

        rounds("clean build", 1 if QUICK else 3, moon_cmd, ninja_cmd, moon_dir, ninja_dir,
               before=lambda i: clean(moon_dir, ninja_dir))
        rounds("no-op", 5 if QUICK else 21, moon_cmd, ninja_cmd, moon_dir, ninja_dir)

        def edit(i):
            for d in (moon_dir, ninja_dir):
                write(os.path.join(d, EDITED), f"#ifndef H0007\n#define H0007\nstatic inline int h0007(int x) {{ return x * {100 + i}; }}\n#endif\n")
        rounds(f"one header edit ({including} objects)", 3 if QUICK else 9, moon_cmd, ninja_cmd, moon_dir, ninja_dir, before=edit)

        # What moon rebuilt after one more edit: only the objects that include the header, and the archive.
        edit(99)
        out = subprocess.run([MOON, "run", "-j", str(JOBS), "--json", "moon.yaml"], cwd=moon_dir, env=MOON_ENV,
                             capture_output=True, text=True).stdout
        ran = out.count('"event":"complete"')
        print(f"after an edit of {EDITED}: moon ran {ran} nodes ({including} objects include it, plus the archive)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
