#!/usr/bin/env python3
"""Fuzzes the shell-value path end to end: random shell text around
`${{ vars.vN }}`, with values that run `touch MARK_N` if a shell ever reads
them as code, through the built `moon` binary and the real sh and bash.

    FUZZ_SECONDS=60 fuzz/shell-values.py        # what `make fuzz` runs
    MOON_BIN=.build/release/moon fuzz/shell-values.py --seed 7

Each round writes a graph of NODES nodes; `moon check` may refuse some
(moon's documented refusals, e.g. `eval`), which are dropped; the rest run
with `-k`. A MARK_N file afterwards is a failure: the node's script and value
are saved under .build-fuzz/shell-artifacts/ and the script exits 1. Values
refused at run time (non-integers in arithmetic) fail their node, which is
fine: only a mark counts.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODES = 40

# Values that create MARK if any shell evaluates them as code. `{m}` is the
# mark's name.
PAYLOADS = [
    "$(touch {m})", "`touch {m}`", "a[$(touch {m})]", "x[`touch {m}`]", "'; touch {m}; '", '"; touch {m}; "',
    "\ntouch {m}\n", "$(touch {m})'\"", "EOF\ntouch {m}\nEOF", "-e $(touch {m})", "1; touch {m}",
    "1$(touch {m})", "a[1]$(touch {m})", "$((1))$(touch {m})", "\\\ntouch {m}", "*$(touch {m})*",
    "${{x}}$(touch {m})", "')\ntouch {m}\n('", ";;\ntouch {m}\n", "esac)\ntouch {m}\n$(case x in x)",
    "1 ]] || touch {m} || [[ 1", "0 )) ; touch {m} ; (( 0", "}\ntouch {m}\n{", "$IFS$(touch {m})",
]

# Shell text with holes `{}`; each hole is filled with the expression or another fragment.
FRAGMENTS = [
    "echo {}", 'echo "{}"', "echo '{}'", 'echo "$(echo {})"', 'echo "$(echo "{}")"',
    'echo "$(case x in x) echo {};; esac)"', 'echo "$(case x in y|x) echo {};; esac)"',
    'echo "$(case x in\n  x) echo {};;\nesac)"', 'x={}; echo "$x"', "arr[{}]=1", "let n={}", 'let "n={}"',
    "declare -i n={}", "[[ {} -eq 0 ]]", "printf -v {} x", "echo $(( {} + 1 ))", "(( {} ))", "echo $[ {} ]",
    "cat <<EOF\n{}\nEOF", "cat <<'EOF'\n{}\nEOF", "cat <<-EOF\n\t{}\n\tEOF", "cat <<EOF\n$(( {} ))\nEOF",
    "echo ${X:-{}}", 'echo "${X:-{}}"', "echo ${X#{}}", "echo ${A[{}]}", "echo ${S:{}}", "eval \"echo {}\"",
    "trap 'echo {}' EXIT", 'sh -c "echo {}"', "sh -c 'echo \"$1\"' sh {}", "echo `echo {}`",
    'echo "`echo {}`"', "read -r -a arr <<< {}", "export -n X={}", "echo a \\\n {}", "f() { echo {}; }; f",
    "if true; then echo {}; fi", 'for i in {}; do echo "$i"; done', "echo {} # {}", "echo $'{}'",
    'echo $"{}"', "echo {}{}", "x=( {} )", "case {} in *) echo hi;; esac", "test {} -eq 1", "[ {} = x ]",
    "echo {} | cat", "echo {} >devnull", "{ echo {}; }", "( echo {} )", 'echo "a\\"{}"', "echo '\\'{}",
    "declare -i n; n={}", "x={}; echo $(( x ))", "echo ${!X} {}", ": {} && echo ok", "echo $(({}))",
    "echo \"${X:-'{}'}\"", "echo ${X:-\"{}\"}", "while false; do echo {}; done", "echo {} &\nwait",
    "select x in {}; do break; done <devnull", "local_f() { local v={}; echo \"$v\"; }; local_f",
    "echo {} | sh", "printf '%s\\n' \"{}\" | bash", "sh <<EOF\n{}\nEOF", "cat <<EOF | sh\necho {}\nEOF",
    'eval "$(echo {})"', "bash -s <<EOF\n{}\nEOF", 'sh -c "$(echo {})"', "echo {} | tee devnull | sh -s",
    "x=$(echo {} | sh)", "command eval echo {}", "exec sh -c 'echo {}'", "echo {} || echo {} | cat",
    "sh <(echo {})", "bash <<< \"echo {}\"", "cat <(echo {})", ". /dev/stdin <<< {}", "bash < <(echo {})",
    "echo {} 2>devnull | sh", "echo {} >&2 | cat", "echo {} |& sh", "{ echo {}; } | sh", "(echo {}) | bash",
]

NOISE = list("'\"$(){}[]`\\;|&<># \n") + ["$(", "${", "$((", "<<", "))", "]]", "[[", "case ", "esac", "'\"", "\\\n"]


def fragment(rng, expression, depth):
    text = rng.choice(FRAGMENTS)
    holes = text.count("{}")
    parts = text.split("{}")
    out = parts[0]
    for k in range(holes):
        if depth > 0 and rng.random() < 0.3:
            inner = fragment(rng, expression, depth - 1)
        else:
            inner = expression
        out += inner + parts[k + 1]
    return out


def script(rng, expression):
    body = fragment(rng, expression, rng.randint(0, 2))
    if rng.random() < 0.3:
        for _ in range(rng.randint(1, 3)):
            # Never in or next to a /dev path: `>/d<noise>ev/null` would write the
            # value into a file outside the round's directory, which a later
            # round's `. /d…` could then run (the script's own doing, not moon's).
            inside = [(m.start(), m.end()) for m in re.finditer(r"/dev/\w*", body)]
            at = rng.randint(0, len(body))
            if any(lo <= at <= hi for lo, hi in inside):
                continue
            body = body[:at] + rng.choice(NOISE) + body[at:]
    if rng.random() < 0.3:
        body = rng.choice(["echo start\n", "set -u\n", ": 'a'\n", "# c\n"]) + body
    return body


def yaml_block(text, indent):
    pad = " " * indent
    return "\n".join(pad + line if line else "" for line in text.split("\n"))


def yaml_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def graph(items):
    """`items`: (number, (script, value, shell)); node nN reads var vN."""
    lines = ["version: 1", "vars:"]
    for n, (_, value, _) in items:
        lines.append(f"  v{n}: {yaml_string(value)}")
    lines.append("nodes:")
    for n, (text, _, shell) in items:
        lines.append(f"  n{n}:")
        lines.append(f"    shell: {shell}")
        lines.append("    timeout: 10s")
        lines.append("    run: |-")
        lines.append(yaml_block(text, 6))
    return "\n".join(lines) + "\n"


def refused_nodes(stderr, text):
    """Node names whose lines `moon check` reported."""
    starts = []
    for number, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^  (n\d+):$", line)
        if m:
            starts.append((number, m.group(1)))
    bad = set()
    for m in re.finditer(r"moon\.yaml:(\d+):\d+: error", stderr):
        line = int(m.group(1))
        owner = None
        for number, name in starts:
            if number <= line:
                owner = name
        if owner is None:
            return None
        bad.add(owner)
    return bad


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", "60")))
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    moon = os.environ.get("MOON_BIN") or os.path.join(ROOT, ".build/debug/moon")
    if not os.access(moon, os.X_OK):
        subprocess.run(["swift", "build", "--product", "moon"], cwd=ROOT, check=True)
    # A copy: a rebuild during the run would otherwise replace it under us.
    snapshot = tempfile.mkdtemp(prefix="moon-shellfuzz-bin-")
    shutil.copy2(moon, os.path.join(snapshot, "moon"))
    try:
        return fuzz(os.path.join(snapshot, "moon"), rng, seed, args.seconds)
    finally:
        shutil.rmtree(snapshot, ignore_errors=True)


def fuzz(moon, rng, seed, seconds):
    artifacts = os.path.join(ROOT, ".build-fuzz/shell-artifacts")
    deadline = time.monotonic() + seconds
    rounds = scripts = ran = refused = 0
    print(f"shell-values: seed {seed}, {seconds:g} s", flush=True)
    while time.monotonic() < deadline:
        rounds += 1
        work = tempfile.mkdtemp(prefix="moon-shellfuzz-")
        try:
            cases = []
            for n in range(NODES):
                value = rng.choice(PAYLOADS).replace("{m}", f"MARK_{n}")
                cases.append((script(rng, "${{ vars.v%d }}" % n), value, rng.choice(["sh", "bash"])))
            keep = list(range(NODES))
            path = os.path.join(work, "moon.yaml")
            for _ in range(4):
                text = graph([(k, cases[k]) for k in keep])
                with open(path, "w") as f:
                    f.write(text)
                check = subprocess.run([moon, "check", "moon.yaml"], cwd=work,
                                       capture_output=True, text=True, timeout=60)
                if check.returncode == 0:
                    break
                bad = refused_nodes(check.stderr, text)
                if not bad:
                    keep = []
                    break
                keep = [k for k in keep if f"n{k}" not in bad]
                refused += len(bad)
            else:
                keep = []
            scripts += NODES
            if keep:
                ran += len(keep)
                subprocess.run([moon, "run", "-k", "-j", "4", "--color", "never", "moon.yaml"], cwd=work,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            marks = sorted(name for name in os.listdir(work) if name.startswith("MARK_"))
            if marks:
                os.makedirs(artifacts, exist_ok=True)
                saved = os.path.join(artifacts, f"seed{seed}-round{rounds}.yaml")
                shutil.copy(path, saved)
                for mark in marks:
                    n = int(mark.split("_")[1])
                    text, value, shell = cases[n]
                    print(f"FAIL: a value ran as code ({mark}); shell {shell}\n--- script\n{text}\n--- value\n{value!r}", flush=True)
                print(f"graph saved to {saved} (seed {seed})", flush=True)
                return 1
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"shell-values: {rounds} graphs, {scripts} scripts ({ran} run, {refused} refused by moon check), no value ran", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
