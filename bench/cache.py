#!/usr/bin/env python3
"""The output cache: restoring a node against running it, and a whole
project restored from the local cache against ninja's no-op.

usage: bench/cache.py path/to/moon [--quick]

Measured, wall time of the whole `moon run` command (start-up included):
  restore vs run    one node whose command takes ~100 ms (sleep 0.1, then a
                    copy of a 1 MB file): run with --no-cache, against a
                    restore from the cache (its output and .moon/ removed
                    before each, so it is never up to date)
  300 objects       bench/cproject.py's project (300 objects, depfiles, the
                    archive) built once; then, in a second checkout of the
                    same tree with no outputs and no .moon/, every node
                    restored from the shared cache; against ninja's no-op
                    on a built copy; and the least any restore does (hash
                    the sources, write the outputs: least_restore) in a
                    third copy, timed in python without start-up
  remote hit        the same project restored by a third checkout with an
                    empty local cache from an nginx (WebDAV PUT) on
                    127.0.0.1: the whole command's time per node
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import ninja_binary  # noqa: E402
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
    first, second, built = (os.path.join(work, d) for d in ("first", "second", "ninja"))
    cproject.generate(first)
    shutil.copytree(first, built, symlinks=True)
    cmd = [MOON, "run", "-j", str(cproject.JOBS), "-q", "--output", "plain", "moon.yaml"]
    timed(cmd, first, env)  # builds and stores every node
    ninja = ninja_binary()
    ninja_cmd = [ninja, "-j", str(cproject.JOBS), "--quiet"]
    timed(ninja_cmd, built)
    moon_t, ninja_t, floor_t = [], [], []
    for _ in range(n):
        for t, directory in ((moon_t, second), (floor_t, os.path.join(work, "floor"))):
            shutil.rmtree(directory, ignore_errors=True)
            shutil.copytree(first, directory, symlinks=True, ignore=shutil.ignore_patterns(".moon", "build"))
            os.makedirs(os.path.join(directory, "build"))
            t.append(timed(cmd, directory, env) if directory == second else least_restore(first, directory))
        ninja_t.append(timed(ninja_cmd, built))
    out = subprocess.run([MOON, "run", "--json", "moon.yaml"], cwd=second, capture_output=True, text=True, env=env).stdout
    m, k, f = statistics.median(moon_t), statistics.median(ninja_t), statistics.median(floor_t)
    print(f"{'300 objects restored (local)':<34} moon {m * 1000:8.1f} ms  ninja no-op {k * 1000:8.1f} ms  {m / k:5.1f}x ninja  ({n} rounds)")
    print(f"  the least any restore does: {f * 1000:.1f} ms ({f / k:.1f}x ninja's no-op; moon {m / f:.2f}x that)")
    up, started = out.count('"reason":"up-to-date"'), out.count('"event":"start"')
    print(f"  then a no-op: {up} nodes up to date, {started} started")


def least_restore(built, root):
    """The work no content-addressed restore of the project can skip, in
    one thread of plain system calls: hash every source (a fresh checkout
    has no stat cache), then write each output from a copy (blob) and hash
    it, under a temporary name renamed into place. No start-up, no graph,
    no store: what is left of moon's time beside it is moon's own."""
    import hashlib
    start = time.perf_counter()
    for folder in ("src", "include"):
        for name in os.listdir(os.path.join(root, folder)):
            with open(os.path.join(root, folder, name), "rb") as f:
                hashlib.sha256(f.read()).digest()
    outputs = os.path.join(built, "build")
    for i, name in enumerate(os.listdir(outputs)):
        with open(os.path.join(outputs, name), "rb") as f:
            data = f.read()
        hashlib.sha256(data).digest()
        temp = os.path.join(root, "build", f".restore-{i}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data)
        os.close(fd)
        os.rename(temp, os.path.join(root, "build", name))
    return time.perf_counter() - start


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
    work = tempfile.mkdtemp(prefix="moon-bench-cache-")
    env = dict(os.environ, MOON_CACHE_DIR=os.path.join(work, "cache"))
    try:
        print(f"moon cache bench in {work}")
        restore_vs_run(work, env, 3 if QUICK else 11)
        if ninja_binary() is None:
            print("300 objects: skipped (no ninja; pip install ninja)")
        else:
            whole_project(work, env, 2 if QUICK else 5)
            remote_hit(work, 2 if QUICK else 3)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
