"""Instructions one run of a step executes, counted by callgrind: a figure that a busy machine
does not move, to compare two versions of the code when CPU times are too noisy to.

Run: .venv/bin/python benchmarks/instructions.py STEP [repair-heavy|clean] [messages]

STEP is `core` (the fold of the synthetic session's records), `core-read` (the session read
from its JSONL file and folded, as `sessionctx build` does) or a provider name (its request
body built from that session's context), on the synthetic 10k-message session of
bench_providers.py. Needs valgrind. The step runs 0 and then 2 times under callgrind after the
same setup, with a fixed hash seed; half the difference is one run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

_CHILD = "SESSIONCTX_INSTRUCTIONS_RUNS"


def child(step: str, repairs: bool, n: int, runs: int) -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import json
    import tempfile

    from benchmarks.bench_providers import synthetic
    from sessionctx.context import build_context
    from sessionctx.providers import build_request
    from sessionctx.records import read_path

    records = synthetic(n, repairs)
    context = build_context(records)
    path = os.path.join(tempfile.mkdtemp(), "session.jsonl")
    with open(path, "w") as f:
        f.writelines(json.dumps(r.data) + "\n" for r in records)
    for _ in range(runs):
        if step == "core":
            build_context(records)
        elif step == "core-read":
            build_context(read_path(path).records)
        else:
            build_request(context, step).changes  # noqa: B018 - the change log is part of it


def count(args: list[str], runs: int) -> int:
    env = dict(os.environ, **{_CHILD: str(runs), "PYTHONHASHSEED": "0"})
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, *args], env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr}")
    return int(found.group(1))


def main() -> None:
    args = sys.argv[1:]
    step = args[0] if args else "anthropic"
    repairs = (args[1] if len(args) > 1 else "repair-heavy") == "repair-heavy"
    n = int(args[2]) if len(args) > 2 else 10_000
    if _CHILD in os.environ:
        child(step, repairs, n, int(os.environ[_CHILD]))
        return
    per_run = (count(args, 2) - count(args, 0)) // 2
    print(f"{step} on the {'repair-heavy' if repairs else 'clean'} {n}-message session: "
          f"{per_run / 1e6:.1f} million instructions per run")


if __name__ == "__main__":
    main()
