#!/usr/bin/env python3
"""Writes scripts/text-order.txt: the functions a start of moon runs, in the
order it first runs them, for the release link (lld's `--symbol-ordering-file`
in the Makefile's RELEASE_FLAGS, with every function in a section of its
own: `-function-sections`). The linker puts them side by side, so a
no-op or a one-node run touches a few hundred KiB of code instead of pages
spread over the whole 30 MiB text; each page a start touches first costs it
a page fault. A function missing from the list (renamed, new) is only laid
out elsewhere: the list needs refreshing after large changes, never for
correctness.

usage: scripts/text-order.py [path/to/release/moon]

Needs valgrind (callgrind names every function a command runs, in order);
perf, when there, adds the path of a node that really starts (valgrind has
no pidfd_open, so under it moon cannot start one).
"""
import os, re, shlex, shutil, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build/release/moon"))
OUT = os.path.join(ROOT, "scripts", "text-order.txt")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import cproject  # noqa: E402


def run(argv, cwd, env):
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def callgrind(binary, args, cwd, env, out):
    run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", binary] + args, cwd, env)
    names = []
    if not os.path.exists(out):
        return names
    with open(out, errors="replace") as f:
        for line in f:
            m = re.match(r"c?fn=(?:\(\d+\))? ?(\S+)?", line)
            if m and m.group(1):
                names.append(m.group(1))
    return names


def perf_symbols(script, cwd, env, out):
    if shutil.which("perf") is None:
        return []
    subprocess.run(["perf", "record", "-q", "-F", "30000", "-o", out, "--", "sh", "-c", script], cwd=cwd, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = subprocess.run(["perf", "script", "-i", out, "-F", "comm,ip,sym", "--no-demangle"], capture_output=True,
                          text=True).stdout
    # The main thread is named after the binary; its threads are `moon.check`, `moon.cache`, ….
    comm = os.path.basename(MOON)[:15]
    names = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and (parts[0] == comm or parts[0].startswith("moon.")) and not parts[1].startswith("ffff"):
            names.append(parts[2])
    return names


def main():
    if shutil.which("valgrind") is None:
        raise SystemExit("text-order.py needs valgrind")
    work = tempfile.mkdtemp(prefix="moon-text-order-")
    env = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, "cache"))
    try:
        big, small, one = os.path.join(work, "p300"), os.path.join(work, "c-project"), os.path.join(work, "one")
        cproject.generate(big)
        shutil.copytree(os.path.join(ROOT, "examples", "c-project"), small)
        cproject.one_node(one)
        for d in (big, small):
            run([MOON, "run", "-j2"], d, env)
        # A graph file changed less than 2 s before a load is not compiled for later runs.
        time.sleep(2.1)
        for d in (big, small, one):
            for _ in range(2):
                run([MOON, "run"], d, env)
        # valgrind gives up on the release binary's debug information; the symbols are the same without it.
        stripped = os.path.join(work, "moon")
        subprocess.run(["strip", "-g", "-o", stripped, MOON], check=True)
        order = []
        commands = [(small, ["run"]), (one, ["run"]), (big, ["run", "-j2"]), (small, ["run", "-n"]), (big, ["run", "-n"]),
                    (small, ["status"]), (small, ["list"]), (one, ["--help"])]
        for i, (d, args) in enumerate(commands):
            found = callgrind(stripped, args, d, env, os.path.join(work, f"cg.{i}"))
            if not found:
                raise SystemExit(f"callgrind recorded nothing for moon {' '.join(args)}")
            order += found
        moon = shlex.quote(MOON)
        order += perf_symbols(f"for i in $(seq 40); do {moon} run >/dev/null 2>&1; done", one, env, os.path.join(work, "p1"))
        edits = ("for i in $(seq 10); do touch src/*.c; %s run >/dev/null 2>&1; echo \"/* $i */\" >> include/calc.h; "
                 "%s run >/dev/null 2>&1; done") % (moon, moon)
        order += perf_symbols(edits, small, env, os.path.join(work, "p2"))
        seen, lines = set(), []
        for name in order:
            name = re.sub(r"'\d+$", "", name)
            if name.startswith("0x") or name in seen:
                continue
            seen.add(name)
            lines.append(name)
        with open(OUT, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"{OUT}: {len(lines)} functions")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
