#!/usr/bin/env python3
"""The output cache: restoring a node against running it, and a whole
project restored from the local cache against the least that work costs.

usage: bench/cache.py path/to/moon [--quick]

Measured, wall time of the whole `moon run` command (start-up included):
  restore vs run    one node whose command takes ~100 ms (sleep 0.1, then a
                    copy of a 1 MB file): run with --no-cache, against a
                    restore from the cache (its output and .moon/ removed
                    before each, so it is never up to date)
  300 objects       bench/cproject.py's project (300 objects, depfiles, the
                    archive) built once; then, in a second checkout of the
                    same tree with no outputs and no .moon/, every node
                    restored from the shared cache; against the least that
                    work costs, measured in the same rounds (turn about) in
                    a third checkout: bench/restore_floor.c, compiled here,
                    hashes every source and writes each output from its
                    blob (hashed once) under a temporary name, renamed into
                    place; wall and CPU medians, the ratio per round; and
                    ninja's no-op on a built copy, for scale
  remote hit        the same project restored by a third checkout with an
                    empty local cache from an nginx (WebDAV PUT) on
                    127.0.0.1: the whole command's time per node
"""
import os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ninja_binary, work_directory  # noqa: E402
import cproject  # noqa: E402

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
QUICK = "--quick" in sys.argv


def timed(argv, cwd, env=None):
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd} ({proc.returncode}):\n{proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def restore_vs_run(work, env, n):
    root = os.path.join(work, "one")
    os.makedirs(root)
    with open(os.path.join(root, "input.bin"), "wb") as f:
        f.write(os.urandom(1 << 20))
    with open(os.path.join(root, "moon.yaml"), "w") as f:
        f.write("version: 1\nnodes:\n  compile:\n    sources: [input.bin]\n    generates: [out/output.bin]\n"
                "    run: sleep 0.1 && mkdir -p out && cp input.bin out/output.bin\n")

    def reset():
        shutil.rmtree(os.path.join(root, "out"), ignore_errors=True)
        shutil.rmtree(os.path.join(root, ".moon"), ignore_errors=True)

    cmd = [MOON, "run", "-q", "--output", "plain"]
    reset()
    timed(cmd, root, env)  # stores the entry
    runs, restores = [], []
    for _ in range(n):
        reset()
        runs.append(timed(cmd + ["--no-cache"], root, env))
        reset()
        restores.append(timed(cmd, root, env))
    r, s = statistics.median(runs), statistics.median(restores)
    print(f"{'restore vs run (~100 ms, 1 MB)':<34} run {r * 1000:8.1f} ms  restore {s * 1000:8.1f} ms  {r / s:5.1f}x faster  ({n} rounds)")


def whole_project(work, env, n):
    first, built = os.path.join(work, "first"), os.path.join(work, "ninja")
    cproject.generate(first)
    shutil.copytree(first, built, symlinks=True)
    cmd = [MOON, "run", "-j", str(cproject.JOBS), "-q", "--output", "plain", "moon.yaml"]
    timed(cmd, first, env)  # builds and stores every node
    ninja = ninja_binary()
    ninja_cmd = [ninja, "-j", str(cproject.JOBS), "--quiet"]
    timed(ninja_cmd, built)
    floor_bin, sha = restore_floor(work)
    floor_list = floor_work(env["MOON_CACHE_DIR"], os.path.join(work, "floor.list"))
    floor_cmd = [floor_bin, floor_list]
    moon_r, floor_r, ninja_r = [], [], []
    # A new checkout per round, all removed at the end: ext4 skips the
    # inodes freed in the last seconds when it makes a file, so files made
    # just after a tree was removed cost more, and more each round.
    for i in range(n):
        second, floor = os.path.join(work, f"second-{i}"), os.path.join(work, f"floor-{i}")
        # Alternate which goes first, so neither always meets a warm or a cold page cache.
        for directory in ((second, floor) if i % 2 == 0 else (floor, second)):
            shutil.copytree(first, directory, symlinks=True, ignore=shutil.ignore_patterns(".moon", "build"))
            os.makedirs(os.path.join(directory, "build"))
            if directory == second:
                moon_r.append(run_timed(cmd, second, env))
            else:
                floor_r.append(run_timed(floor_cmd, floor))
        ninja_r.append(run_timed(ninja_cmd, built))
    restored = sorted(os.listdir(os.path.join(second, "build")))
    if restored != sorted(os.listdir(os.path.join(floor, "build"))):
        raise SystemExit("the floor did not write the outputs moon restored")
    out = subprocess.run([MOON, "run", "--json", "moon.yaml"], cwd=second, capture_output=True, text=True, env=env).stdout
    for i in range(n):
        for d in (f"second-{i}", f"floor-{i}"):
            shutil.rmtree(os.path.join(work, d))
    (mw, mc), (fw, fc), (kw, _) = (medians(r) for r in (moon_r, floor_r, ninja_r))
    ratio = statistics.median(m[0] / f[0] for m, f in zip(moon_r, floor_r))
    print(f"{'300 objects restored (local)':<34} moon {mw * 1000:8.1f} ms  floor {fw * 1000:8.1f} ms  {ratio:5.2f}x the floor  ({n} rounds)"
          f"  CPU {mc * 1000:.1f} / {fc * 1000:.1f} ms  {mc / fc:5.2f}x")
    print(f"  the floor: {len(restored)} outputs from the cache's blobs (each hashed once), every source hashed, in C"
          f" (SHA-256: {sha}); ninja's no-op {kw * 1000:.1f} ms (moon's restore {mw / kw:.1f}x it)")
    up, started = out.count('"reason":"up-to-date"'), out.count('"event":"start"')
    print(f"  then a no-op: {up} nodes up to date, {started} started")


def run_timed(argv, cwd, env=None):
    """Wall and CPU seconds (user + sys) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {cwd}:\n{err.decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def medians(rounds):
    return statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds)


def restore_floor(work):
    """bench/restore_floor.c compiled into `work`: with OpenSSL's SHA-256
    when its headers are there (as fast as moon's), else its own."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "restore_floor.c")
    binary = os.path.join(work, "restore_floor")
    for flags, sha in ((["-DFLOOR_OPENSSL"], "OpenSSL"), ([], "portable C")):
        libs = ["-lcrypto"] if flags else []
        if subprocess.run(["cc", "-O2", *flags, "-o", binary, source, *libs], capture_output=True).returncode == 0:
            return binary, sha
    raise SystemExit("cannot compile bench/restore_floor.c (no C compiler?)")


def floor_work(cache, path):
    """The list of what the least restore does (bench/restore_floor.c), from
    the cache's entries: every source a fresh checkout's restore must hash
    (the nodes' sources and the files their depfiles listed), and every
    output file with its blob (the project's entries only: the cache holds
    the other rows' too)."""
    import json
    nodes = {f"f{s:04}.o" for s in range(cproject.SOURCES)} | {"libapp.a"}
    sources, outputs = set(), []
    for name in os.listdir(os.path.join(cache, "v1", "ac")):
        with open(os.path.join(cache, "v1", "ac", name)) as f:
            entry = json.load(f)
        if entry["node"] not in nodes:
            continue
        sources.update(d["path"] for d in entry["dependencies"])
        for file in entry["files"]:
            if file["kind"] == "file":
                blob = os.path.join(cache, "v1", "cas", file["hash"][:2], file["hash"])
                outputs.append(f"o {file.get('mode', 0o644):o} {file['hash']} {blob} {file['path']}")
    sources.update(f"src/f{s:04}.c" for s in range(cproject.SOURCES))
    with open(path, "w") as f:
        f.write("".join(f"s {s}\n" for s in sorted(sources)) + "".join(o + "\n" for o in outputs))
    return path


def remote_hit(work, n):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        print("remote hit: skipped (no nginx; make test-deps)")
        return
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = os.path.join(work, "nginx")
    os.makedirs(os.path.join(server, "data"))
    os.makedirs(os.path.join(server, "tmp"))
    with open(os.path.join(server, "nginx.conf"), "w") as f:
        f.write(f"daemon off;\n{'user root;' if os.getuid() == 0 else ''}\npid {server}/nginx.pid;\nerror_log {server}/error.log;\n"
                f"events {{}}\nhttp {{ access_log off; client_body_temp_path {server}/tmp;\n"
                f"  server {{ listen 127.0.0.1:{port}; root {server}/data;\n"
                f"    location / {{ dav_methods PUT; create_full_put_path on; client_max_body_size 0; }} }} }}\n")
    proc = subprocess.Popen([nginx, "-c", os.path.join(server, "nginx.conf"), "-p", server])
    try:
        time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/cache"
        first = os.path.join(work, "first")
        env = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, "cache-upload"))
        cmd = [MOON, "run", "-j", str(cproject.JOBS), "-q", "--output", "plain", "--remote-cache", url, "moon.yaml"]
        shutil.rmtree(os.path.join(first, ".moon"), ignore_errors=True)
        shutil.rmtree(os.path.join(first, "build"))
        os.makedirs(os.path.join(first, "build"))
        timed(cmd, first, env)  # runs (or restores locally) and uploads every node
        nodes = cproject.SOURCES + 1
        times = []
        for i in range(n):
            third = os.path.join(work, "third")
            shutil.rmtree(third, ignore_errors=True)
            shutil.copytree(first, third, symlinks=True, ignore=shutil.ignore_patterns(".moon", "build"))
            os.makedirs(os.path.join(third, "build"))
            local = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, f"cache-empty-{i}"))
            times.append(timed(cmd, third, local))
        t = statistics.median(times)
        print(f"{'remote hit over loopback':<34} {t * 1000:8.1f} ms for {nodes} nodes  {t * 1000 / nodes:5.2f} ms per node  ({n} rounds)")
    finally:
        proc.terminate()
        proc.wait()


def main():
    if not os.path.exists(MOON):
        raise SystemExit(f"no moon binary at {MOON}; run `make release` first")
    work = work_directory("moon-bench-cache-")
    env = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, "cache"))
    try:
        print(f"moon cache bench in {work}")
        restore_vs_run(work, env, 3 if QUICK else 11)
        if ninja_binary() is None:
            print("300 objects: skipped (no ninja; pip install ninja)")
        else:
            whole_project(work, env, 3 if QUICK else 9)
            remote_hit(work, 2 if QUICK else 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
