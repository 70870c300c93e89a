#!/usr/bin/env python3
"""Validate a moon --json event stream against schema/moon-events.schema.json.

    python3 schema/validate-events.py FILE [--complete]

Checks every line with jsonschema's Draft202012Validator (with format
checking), then the stream's own rules: seq counts 1, 2, 3...; with
--complete, the stream starts with graph-start, ends with graph-complete and
every node of the plan, and every instance an expand added, ended (complete,
error or skip) exactly once, or is listed in graph-complete's running; a watch mode stream (several runs, each rerun
after a watch event) is checked run by run, and the nodes a run left running
(graph-complete's running) may write output and end between runs.
Exit 0 when valid; 1 with one message per problem on stderr; 3 when
jsonschema is not installed (install it with: python3 -m pip install jsonschema).
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("validate-events: python module jsonschema is not installed", file=sys.stderr)
    sys.exit(3)

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "moon-events.schema.json")


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    complete = "--complete" in argv
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    problems = []
    events = []
    with open(args[0], encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                problems.append(f"line {number}: empty line")
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as e:
                problems.append(f"line {number}: not JSON: {e}")
                continue
            for error in sorted(validator.iter_errors(event), key=lambda e: list(e.path)):
                where = "/".join(str(p) for p in error.path) or "(event)"
                problems.append(f"line {number}: {where}: {error.message}")
            events.append((number, event))
    for expected, (number, event) in enumerate(events, 1):
        if isinstance(event, dict) and event.get("seq") != expected:
            problems.append(f"line {number}: seq is {event.get('seq')!r}, expected {expected}")
            break
    if complete:
        kinds = [e.get("event") for _, e in events if isinstance(e, dict)]
        # In watch mode, nodes a run left running (graph-complete's running)
        # write output, and may end, between runs.
        between = set()
        for _, e in events:
            if e.get("event") == "graph-complete":
                between = set(e.get("running", []))
            elif e.get("event") == "graph-start":
                between = set()
        while len(kinds) > 1 and kinds[-1] in ("next", "complete", "error") and events[len(kinds) - 1][1].get("node") in between:
            kinds.pop()
        if not kinds or kinds[0] != "graph-start":
            problems.append("stream does not start with graph-start")
        if not kinds or kinds[-1] != "graph-complete":
            problems.append("stream does not end with graph-complete (cut off?)")
        # Watch mode writes one run after another, each rerun after a watch
        # event; each run is checked on its own.
        runs, plan, ended = 0, None, {}
        for number, e in events:
            kind = e.get("event")
            if kind == "graph-start":
                if plan is not None:
                    problems.append(f"line {number}: graph-start before the run before it completed")
                runs, plan, ended = runs + 1, list(e.get("plan", [])), {}
            elif kind == "watch" and plan is not None:
                problems.append(f"line {number}: watch event inside a run")
            elif kind == "expand" and plan is not None:
                plan = plan + e.get("instances", [])
            elif kind in ("complete", "error", "skip"):
                ended[e.get("node")] = ended.get(e.get("node"), 0) + 1
            elif kind == "graph-complete" and plan is not None:
                running = set(e.get("running", []))
                for node in plan:
                    if node in running:
                        if ended.get(node, 0) != 0:
                            problems.append(f"run {runs}: node {node!r} is still running at the end but ended")
                    elif ended.get(node, 0) != 1:
                        problems.append(f"run {runs}: node {node!r} of the plan ended {ended.get(node, 0)} times, expected once")
                plan = None
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"{args[0]}: {len(events)} events valid")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
