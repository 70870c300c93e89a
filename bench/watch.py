#!/usr/bin/env python3
"""Watch mode's speed: `moon run --watch` on real files.

usage: bench/watch.py path/to/moon [--quick]

- latency: from a source file's write to the affected node's `start` event
  (the event's own timestamp), median over many edits; the goal is the
  debounce (100 ms) plus 20 ms;
- idle CPU: moon's user+system time while it watches 10,000 files and
  nothing changes, as a share of one core (goal: under 1%);
- memory: moon's resident set while it watches those files (goal: under 40 MB).
"""
import calendar, json, os, shutil, signal, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import work_directory  # noqa: E402

MOON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else ".build/release/moon")
QUICK = "--quick" in sys.argv
EDITS = 10 if QUICK else 30
FILES = 10_000
IDLE_SECONDS = 5 if QUICK else 20


class Watch:
    """A `moon run --watch --json` process and the events it has written."""

    def __init__(self, directory, extra=()):
        self.out = open(os.path.join(directory, ".events.jsonl"), "w+")
        self.err = open(os.path.join(directory, ".stderr"), "w+")
        # An output cache of the bench's own: an edit back to content some
        # earlier run stored would be restored, not run, and start nothing.
        env = dict(os.environ, MOON_CACHE_DIR=os.path.join(directory, ".cache"))
        self.process = subprocess.Popen([MOON, "run", "--watch", "--json", *extra], cwd=directory, env=env,
                                        stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL)
        self.read = 0
        self.events = []

    def poll(self):
        self.out.flush()
        with open(self.out.name) as f:
            f.seek(self.read)
            text = f.read()
        complete = text[: text.rfind("\n") + 1]
        self.read += len(complete.encode())
        self.events += [json.loads(line) for line in complete.splitlines() if line]

    def wait(self, predicate, limit=60):
        deadline = time.time() + limit
        while time.time() < deadline:
            self.poll()
            found = [e for e in self.events if predicate(e)]
            if found:
                return found
            time.sleep(0.005)
        raise SystemExit("moon did not get there in time")

    def stop(self):
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=60)


def timestamp(event):
    """The event's `ts` (UTC, milliseconds) as seconds since the epoch."""
    whole, fraction = event["ts"].rstrip("Z").split(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + int(fraction) / 1000


def latency(root):
    directory = os.path.join(root, "latency")
    os.makedirs(os.path.join(directory, "src"))
    with open(os.path.join(directory, "moon.yaml"), "w") as f:
        f.write("version: 1\nnodes:\n  build:\n    run: cat src/a.txt\n    sources: [src/a.txt]\n")
    path = os.path.join(directory, "src", "a.txt")
    with open(path, "w") as f:
        f.write("0\n")
    watch = Watch(directory)
    last = watch.wait(lambda e: e["event"] == "graph-complete")[-1]["seq"]
    samples = []
    for i in range(1, EDITS + 1):
        time.sleep(0.2)
        written = time.time()
        with open(path, "w") as f:
            f.write(f"{i}\n")
        start = watch.wait(lambda e: e["event"] == "start" and e["seq"] > last)[0]
        samples.append((timestamp(start) - written) * 1000)
        last = watch.wait(lambda e: e["event"] == "graph-complete" and e["seq"] > start["seq"])[0]["seq"]
    watch.stop()
    return samples


def idle(root):
    directory = os.path.join(root, "idle")
    for d in range(100):
        os.makedirs(os.path.join(directory, "src", f"d{d}"))
        for n in range(FILES // 100):
            with open(os.path.join(directory, "src", f"d{d}", f"f{n}.c"), "w") as f:
                f.write(f"{d} {n}\n")
    with open(os.path.join(directory, "moon.yaml"), "w") as f:
        f.write("version: 1\nnodes:\n  all:\n    run: 'true'\n    sources: [\"src/**/*.c\"]\n")
    watch = Watch(directory)
    watch.wait(lambda e: e["event"] == "graph-complete")
    # The first run hashed every file; what follows it (the state written,
    # the files counted) is not idling yet.
    time.sleep(5)
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu():
        fields = open(f"/proc/{watch.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    before, t0 = cpu(), time.time()
    time.sleep(IDLE_SECONDS)
    used, elapsed = cpu() - before, time.time() - t0
    rss = 0
    for line in open(f"/proc/{watch.process.pid}/status"):
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    watch.stop()
    watch.err.seek(0)
    if "polling" in watch.err.read():
        print("note: moon fell back to polling")
    return used / elapsed * 100, rss


def main():
    if not os.access(MOON, os.X_OK):
        raise SystemExit(f"no moon binary at {MOON}; run `swift build -c release` first")
    root = work_directory("moon-bench-watch-")
    try:
        samples = latency(root)
        cpu, rss = idle(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    samples.sort()
    print(f"write -> start (debounce 100 ms): median {statistics.median(samples):.0f} ms, "
          f"p90 {samples[int(len(samples) * 0.9) - 1]:.0f} ms over {len(samples)} edits (goal <= 120 ms)")
    print(f"idle, watching {FILES} files: {cpu:.2f}% of a core over {IDLE_SECONDS} s (goal < 1%), RSS {rss:.1f} MB (goal < 40 MB)")
    print(f"load average during the bench: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
